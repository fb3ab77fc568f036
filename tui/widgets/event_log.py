"""EventLog: the live event stream as lines, over a bounded buffer."""
from __future__ import annotations

from textual.widgets import Log

__all__ = ["EventLog"]

MAX_LINES = 5000


class EventLog(Log):
    """A line-based log (Textual ``Log``) keeping the last ``MAX_LINES`` lines.

    It follows the newest line at any length until the user scrolls up (then the
    lines in view stay in view while older ones are dropped), and follows again
    once scrolled back to the end. It also shows what the script prints (the app
    captures ``print`` into it).
    """

    def __init__(self, **kw):
        super().__init__(max_lines=MAX_LINES, highlight=False, auto_scroll=False, **kw)
        self._partial = ""
        self._follow = True      # cleared when the user scrolls up, set again at the end

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
        self.write_lines(lines, scroll_end=False)
        # A full buffer drops lines at the top while its size stays the same: the view
        # must move (and repaint) by itself, or it shows old lines for good.
        if follow:
            self.scroll_end(animate=False, x_axis=False)   # after the layout: its true end
        elif dropped:
            self.scroll_to(y=max(0, self.scroll_offset.y - dropped), animate=False,
                           immediate=True)
        self.refresh()
