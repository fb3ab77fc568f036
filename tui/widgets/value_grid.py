"""ValueGrid: the inspector's cells of one value, a header and striped rows (Line API).

Why not Textual's ``DataTable``: a running op's values change once a second, and a
``DataTable`` renders each changed line cell by cell through Rich (about 1.5 ms a
line of nine cells, measured), on the thread the program's callbacks wait for. Here
a line is its cells' text, padded into the column widths, drawn as one segment;
new values of the same shape go into the lines as they are (``refill``: no new
size, no layout of the screen), and only the lines whose text changed are drawn
again. The header stays at the top while the rows scroll under it.
"""
from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["ValueGrid"]


class ValueGrid(ScrollView, can_focus=False):
    """Columns (a label and a width in cells each) and rows of cell texts."""

    COMPONENT_CLASSES = {"valuegrid--header", "valuegrid--even-row"}
    DEFAULT_CSS = """
    ValueGrid { background: $surface; color: $foreground; height: auto; }
    ValueGrid > .valuegrid--header { text-style: bold; background: $panel; }
    ValueGrid:ansi > .valuegrid--header { background: ansi_bright_blue; color: ansi_default; }
    ValueGrid > .valuegrid--even-row { background: $surface-lighten-1 50%; }
    ValueGrid:dark > .valuegrid--even-row { background: $surface-darken-1 40%; }
    """

    cell_padding = 1   # cells of space each side of a column, as DataTable's

    def __init__(self, **kw):
        super().__init__(**kw)
        self.labels: list[str] = []
        self.widths: list[int] = []
        self.rows: list[list[str]] = []
        self._texts: list[str] = []   # each row's line (padded cells), header first

    def render_width(self, column: int) -> int:
        """Cells column ``column`` takes on screen, its padding included."""
        return self.widths[column] + 2 * self.cell_padding

    def set(self, labels: list[str], widths: list[int], rows: list[list[str]]) -> None:
        """Show these columns and rows (a cell wider than its column is cut)."""
        self.labels, self.widths, self.rows = list(labels), list(widths), [list(r) for r in rows]
        self._texts = [self._line(self.labels)] + [self._line(r) for r in self.rows]
        size = Size(sum(map(self.render_width, range(len(widths)))),
                    len(self._texts) if self.labels else 0)
        if size.height == self.virtual_size.height:   # as tall: no layout of the screen
            self.set_reactive(ScrollView.virtual_size, size)   # (wider columns: 19 ms)
            self._scroll_update(size)
        else:   # its height follows its rows (height: auto)
            self.virtual_size = size
        self.refresh()

    def clear(self) -> None:
        self.set([], [], [])

    def refill(self, labels: list[str], rows: list[list[str]]) -> bool:
        """Put ``rows`` into the grid where its rows are, when it has these columns and as
        many rows and each cell fits its column; only the lines that changed are drawn
        again. False (nothing changed): ``set`` it anew."""
        if labels != self.labels or len(rows) != len(self.rows) or any(
                cell_len(c) > w for r in rows for c, w in zip(r, self.widths)):
            return False
        top, height = self.scroll_offset.y, self.size.height
        for i, r in enumerate(rows):
            text = self._line(r)
            if text != self._texts[i + 1]:
                self.rows[i], self._texts[i + 1] = list(r), text
                if 1 <= i + 1 - top < height:   # on screen, below the header
                    self.refresh_line(i + 1)
        return True

    def _line(self, cells: list[str]) -> str:
        pad = " " * self.cell_padding
        return "".join(pad + set_cell_size(c, w) + pad for c, w in zip(cells, self.widths))

    def render_line(self, y: int) -> Strip:
        width, style = self.size.width, self.rich_style
        index = 0 if y == 0 else y + self.scroll_offset.y   # the header stays on top
        if index >= len(self._texts):
            return Strip.blank(width, style)
        if index == 0:
            style += self.get_component_rich_style("valuegrid--header")
        elif index % 2:   # rows 0, 2, 4, ... striped, as DataTable's zebra stripes
            style += self.get_component_rich_style("valuegrid--even-row")
        text = set_cell_size(self._texts[index], width)
        return Strip([Segment(text, style)], width)

