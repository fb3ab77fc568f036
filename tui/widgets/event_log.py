"""EventLog: the live event stream as lines, over a bounded buffer."""
from __future__ import annotations

from rich.cells import cell_len
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Log

from pyfunc_debug.trace.pending import settled

__all__ = ["EventLog"]

MAX_LINES = 5000


class EventLog(Log):
    """A line-based log (Textual ``Log``) keeping the last ``MAX_LINES`` lines.

    It follows the newest line at any length until the user scrolls up (then the
    lines in view stay in view while older ones are dropped), and follows again
    once scrolled back to the end. It also shows what the script prints (the app
    captures ``print`` into it).

    Light while a program runs (issue 24): a write costs no layout of the screen (the
    pane's size is set by the stylesheet, its scrollbars always shown, so a longer log
    moves nothing else), no thread to measure the lines' width, and a line once drawn
    is kept (``Log`` draws every line in view again at each repaint). An entry may be an
    event, formatted by ``formatter`` only when it is drawn or read (``lines``, a
    selection): a running program adds a thousand lines a tick, of which the view shows
    about thirty. Until then the log's width counts the lines formatted so far.
    """

    def __init__(self, **kw):
        super().__init__(max_lines=MAX_LINES, highlight=False, auto_scroll=False, **kw)
        self._partial = ""
        self._follow = True      # cleared when the user scrolls up, set again at the end
        self.formatter = str     # an event entry's line (the app sets its model's)

    def printed(self, text: str, stderr: bool) -> list[str]:
        """Log lines for printed ``text`` (a line shows once it is complete)."""
        text = self._partial + text
        *lines, self._partial = text.split("\n")
        return [f"  [{'stderr' if stderr else 'stdout'}] {line}" for line in lines]

    @property
    def following(self) -> bool:
        """New lines scroll into view (the user has not scrolled up)."""
        return self._follow

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._follow = new_value >= self.max_scroll_y

    def on_resize(self) -> None:
        if self._follow:
            self.scroll_end(animate=False, x_axis=False)

    def add(self, lines: list[str]) -> None:
        if not lines:
            return
        lines = lines[-MAX_LINES:]
        follow = self._follow and not self.is_vertical_scrollbar_grabbed
        dropped = max(0, self.line_count + len(lines) - MAX_LINES)
        self._append(lines)
        # A full buffer drops lines at the top while its size stays the same: the view
        # must move (and repaint) by itself, or it shows old lines for good.
        if follow:
            self.scroll_end(animate=False, x_axis=False, immediate=True)
        elif dropped:
            self.scroll_to(y=max(0, self.scroll_offset.y - dropped), animate=False,
                           immediate=True)
        self.refresh()

    def _append(self, lines: list[str]) -> None:
        """``Log.write_lines`` without its costs: its new virtual size asks for a layout
        of the whole screen and its width is measured in a thread worker that calls
        back into the app, at every write."""
        new, texts = [], []   # entries in order; the lines of text among them
        for line in lines:
            if line.__class__ is str:
                split = line.splitlines() or [""]
                new += split
                texts += split
            else:
                new.append(line)   # an event: one line, formatted when drawn
        self._lines.extend(new)
        if len(self._lines) > self.max_lines:
            self._prune_max_lines()
        self._widen(texts)

    def _widen(self, new: list) -> None:
        """The log is as wide as its widest line (formatted so far)."""
        self._width = max(self._width, _widest(new, self._process_line))
        self._resize()

    def _resize(self) -> None:
        size = Size(self._width, len(self._lines))
        if size != self.virtual_size:
            self.set_reactive(Widget.virtual_size, size)   # no layout: see the docstring
            self._scroll_update(size)

    def _formatted(self, first: int, end: int) -> None:
        """Entries ``first:end`` as lines (an event's summaries taken together with the
        others', ``trace.pending``)."""
        lines = self._lines
        at = [i for i in range(max(0, first), min(end, len(lines)))
              if lines[i].__class__ is not str]
        if not at:
            return
        events = [lines[i] for i in at]
        settled(events)
        made = [self.formatter(e) for e in events]
        for i, line in zip(at, made):
            lines[i] = line
        widest = _widest(made, self._process_line)
        if widest > self._width:   # while drawing: the new size is set after this frame
            self._width = widest
            self.call_after_refresh(self._resize)

    @property
    def lines(self):
        self._formatted(0, len(self._lines))
        return self._lines

    def get_selection(self, selection):
        self._formatted(0, len(self._lines))
        return super().get_selection(selection)

    def _render_line_strip(self, y, rich_style):
        """A line is drawn once (``Log`` keeps it only while text is selected); the cache
        follows the lines as the oldest are dropped, and forgets a new line's index."""
        if y < len(self._lines) and self._lines[y].__class__ is not str:
            top = self.scroll_offset.y   # the view's lines together: one settling
            self._formatted(min(y, top), max(y + 1, top + self.size.height))
        if self.text_selection is not None:
            return super()._render_line_strip(y, rich_style)
        cached = self._render_line_cache.get(y)
        if cached is None:
            cached = self._render_line_cache[y] = super()._render_line_strip(y, rich_style)
        return cached


def _widest(lines: list, process) -> int:
    """The widest of ``lines`` in cells. "µs" is in nearly every line, "…" in some: one
    cell wide each, so such a line is as wide as it is long (str.replace: 0.2 µs a line;
    rich's cell_len of a new line, 2.5)."""
    widest = max(map(len, lines), default=0)
    if not all(map(str.isascii, lines)):
        widest = max(len(line) if line.replace("µ", "").replace("…", "").isascii()
                     else cell_len(process(line)) for line in lines)
    return widest
