"""OpList: the ops of the current run with live status, one line each (Line API).

Display state only: it reads rows from the model it is given and posts
``OpSelected`` when the cursor moves.
"""
from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..messages import OpSelected
from ..model import RunModel
from ..rows import STATUS_ICONS

__all__ = ["OpList", "fit"]

_STATUS_COMPONENT = {"done": "oplist--done", "error": "oplist--error", "paused": "oplist--paused",
                     "running": "oplist--running", "pending": "oplist--pending",
                     "folded": "oplist--folded", "dedup": "oplist--folded",
                     "aborted": "oplist--error"}


class OpList(ScrollView, can_focus=True):
    """Ops of the current run; ●: breakpoint set on the op, ⚠: a diagnostic about it."""

    BINDINGS = [Binding("up", "cursor(-1)", "up", show=False),
                Binding("down", "cursor(1)", "down", show=False),
                Binding("pageup", "cursor(-10)", show=False),
                Binding("pagedown", "cursor(10)", show=False)]
    COMPONENT_CLASSES = {"oplist--cursor", "oplist--done", "oplist--error", "oplist--paused",
                         "oplist--running", "oplist--pending", "oplist--folded"}
    DEFAULT_CSS = """
    OpList > .oplist--cursor { background: $accent 40%; }
    OpList > .oplist--done { color: $success; }
    OpList > .oplist--error { color: $error; text-style: bold; }
    OpList > .oplist--paused { color: $warning; text-style: bold reverse; }
    OpList > .oplist--running { color: $accent; }
    OpList > .oplist--pending { color: $text-muted; }
    OpList > .oplist--folded { color: $text-muted; text-style: italic; }
    """

    cursor = reactive(0)

    def __init__(self, model: RunModel, breakpoints=lambda: set(), **kw):
        super().__init__(**kw)
        self.model = model
        self._breakpoints = breakpoints
        self._seen = -1
        self._name = None        # the op under the cursor: kept when rows move or a run starts
        self._by_user = False
        self._drawn: dict = {}   # index -> what its line shows (the rows in view)

    def sync(self) -> None:
        """Redraw the rows in view whose line changed, if the model changed since the last
        call (a running program changes a few rows a tick; each line drawn again holds
        the GIL the program needs)."""
        if self.model.version == self._seen:
            return
        self._seen = self.model.version
        order = self.model.order
        size = Size(self.size.width, len(order))
        if size != self.virtual_size:
            self.virtual_size = size
            self._drawn.clear()
        index = self.model.index_of(self._name) if self._name is not None else -1
        if index >= 0 and index != self.cursor:
            self.cursor = index
        elif self.cursor >= len(order):
            self.cursor = max(0, len(order) - 1)
        self._refresh_changed()

    def _refresh_changed(self) -> None:
        if not self._drawn:      # nothing drawn since the last full redraw: draw it all
            self.refresh()
            return
        top, width = self.scroll_offset.y, self.size.width
        marks = self._breakpoints()
        for index in range(top, top + self.size.height):
            if self._drawn.get(index) != self._line(index, width, marks):
                self.refresh_line(index)

    def refresh(self, *regions, **kw):
        if not regions:          # the whole list: nothing drawn is still on screen
            self._drawn.clear()
        return super().refresh(*regions, **kw)

    def select(self, name: str) -> None:
        index = self.model.index_of(name)
        if index >= 0:
            self._name = name
            self.cursor = index
            self.scroll_to(y=max(0, index - self.size.height // 2), animate=False)

    @property
    def selected(self) -> str | None:
        row = self.model.row_at(self.cursor)
        return None if row is None else row.name

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        name = self.selected
        by_user, self._by_user = self._by_user, False
        if name is not None:
            self._name = name
            self.post_message(OpSelected(name, by_user))

    def action_cursor(self, delta: int) -> None:
        if self.model.order:
            self._by_user = True
            self.cursor = min(max(0, self.cursor + delta), len(self.model.order) - 1)
            self._by_user = False
            top, height = self.scroll_offset.y, self.size.height
            if self.cursor < top:
                self.scroll_to(y=self.cursor, animate=False)
            elif self.cursor >= top + height:
                self.scroll_to(y=self.cursor - height + 1, animate=False)

    def on_click(self, event) -> None:
        index = event.y + self.scroll_offset.y
        if 0 <= index < len(self.model.order):
            self._by_user = True
            self.cursor = index
            self._by_user = False

    def render_line(self, y: int) -> Strip:
        index = y + self.scroll_offset.y
        width = self.size.width
        line = self._drawn[index] = self._line(index, width, self._breakpoints())
        text, status, cursor = line
        if text is None:
            return Strip.blank(width, self.rich_style)
        style = self.get_component_rich_style(_STATUS_COMPONENT.get(status, "oplist--pending"))
        if cursor:
            style = style + self.get_component_rich_style("oplist--cursor")
        return Strip([Segment(text, style)], width)

    def _line(self, index: int, width: int, marks) -> tuple:
        """What row ``index``'s line shows: (text, status, under the cursor); its text is
        ``None`` past the last row."""
        row = self.model.row_at(index)
        if row is None:
            return None, None, False
        mark = "●" if row.name in marks else ("⚠" if row.warnings else " ")
        icon = STATUS_ICONS.get(row.status, "?")
        detail = row.tag if row.status in ("folded", "dedup") else \
            (row.outputs[0].short() if row.outputs else "")
        if width < 44:   # narrow (an 80-column terminal): names first, no detail
            type_w = 8
            name_w = max(8, width - 4 - type_w)
        else:
            name_w = max(12, min(32, width // 2 - 2))
            type_w = max(8, min(16, width - name_w - 12))
        text = f"{mark}{icon} {fit(row.name, name_w):<{name_w}} {fit(row.op_type, type_w):<{type_w}} "
        text += clip(detail, width - len(text))
        return text[:width].ljust(width), row.status, index == self.cursor


def fit(name: str, width: int) -> str:
    """``name`` in ``width`` columns, cut in the middle: the ends tell ops apart
    (``combine/AddV2`` and ``combine/AddV2_1`` stay different)."""
    if len(name) <= width:
        return name
    head = (width - 1) // 3
    return name[:head] + "…" + name[len(name) - (width - 1 - head):]


def clip(text: str, width: int) -> str:
    """``text`` (an output's summary: ``float32[8,8] min=-1.6 max=1.6 mean=2.4e-08``) in
    ``width`` columns: cut before a word or a shape that does not fit, with "…" saying
    something was cut — a number cut unmarked reads as another (``2.387e-08`` as
    ``2.387e-0``). Where only the dtype fits, it alone (a whole word, true as it stands)."""
    if len(text) <= width:
        return text
    if width <= 0:
        return ""
    cut = max(text.rfind(" ", 0, width), text.rfind("[", 0, width))
    if cut > 0:
        return text[:cut] + "…"
    dtype = text.split(" ", 1)[0].split("[", 1)[0]
    if len(dtype) <= width:
        return dtype
    return text[:width - 1] + "…"
