"""The inspector's table of input/output summaries, fitted to the width it gets.

The columns that hold the answer — shape, NaN and Inf counts — are always whole;
when the table is too wide, the others give way first: the preview goes, labels
are cut in the middle, dtypes shorten, then fewer digits, then mean, max, min go.
"""
from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from .op_list import fit

__all__ = ["SummaryTable", "shape_text"]

GAP = "  "
_NUMERIC = {"min", "max", "mean", "nan", "inf"}
_SHORT_DTYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8",
                 "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16",
                 "uint32": "u32", "uint64": "u64", "complex64": "c64", "complex128": "c128",
                 "string": "str", "object": "obj"}


def shape_text(shape) -> str:
    """A shape as numpy writes it: ``()``, ``(4,)``, ``(16, 1)``."""
    return str(tuple(shape)) if shape is not None else "?"


def _number(v, digits: int) -> str:
    return "" if v is None else f"{v:.{digits}g}"


class SummaryTable:
    """``rows``: (label, ValueSummary, style) in order; rendered at the width given."""

    def __init__(self, rows: list):
        self.rows = rows

    def __eq__(self, other) -> bool:
        """The same table on screen (the values the summaries may carry aside)."""
        if not isinstance(other, SummaryTable) or len(self.rows) != len(other.rows):
            return False
        return all(a[0] == b[0] and a[2] == b[2] and a[1][:10] == b[1][:10]
                   for a, b in zip(self.rows, other.rows))

    __hash__ = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.lines(options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)

    def lines(self, width: int) -> list[Text]:
        if not self.rows:
            return []
        cols = self._fit(width)
        header = Text(GAP.join(_cell(name, name, w) for name, w in cols), style="bold")
        out = [header]
        for label, s, style in self.rows:
            cells = _cells(label, s, self._digits, self._short)
            text = GAP.join(_cell(name, cells[name], w) for name, w in cols)
            out.append(Text(text.rstrip(), style=style or ""))
        return out

    def _fit(self, width: int) -> list:
        """(column, width) pairs that fit ``width``, giving way in a fixed order; the
        preview takes what is left (it gives way first)."""
        self._digits, self._short = 4, False
        label_w = None
        dropped = {"preview"}
        steps = [("label", 16), ("label", 12), ("short", None), ("drop", "dtype"),
                 ("digits", 3), ("drop", "mean"), ("label", 8), ("drop", "max"),
                 ("label", 6), ("drop", "min")]
        for step in [None] + steps:
            if step is not None:
                kind, arg = step
                if kind == "drop":
                    dropped.add(arg)
                elif kind == "label":
                    label_w = arg
                elif kind == "short":
                    self._short = True
                else:
                    self._digits = arg
            cols = self._widths(dropped, label_w)
            used = sum(w for _, w in cols) + len(GAP) * (len(cols) - 1)
            if used <= width:
                break
        preview = min(30, max([len("preview")] + [len(s.preview or "") for _, s, _ in
                                                  self.rows]))
        rest = width - used - len(GAP)
        if step is None and rest >= 8:
            cols.append(("preview", min(rest, preview)))
        return cols

    def _widths(self, dropped: set, label_w: int | None) -> list:
        names = [n for n in ("", "shape", "dtype", "min", "max", "mean", "nan", "inf", "preview")
                 if n not in dropped]
        rows = [_cells(label, s, self._digits, self._short) for label, s, _ in self.rows]
        cols = []
        for n in names:
            w = max([len(n)] + [len(r[n]) for r in rows])
            if n == "" and label_w is not None:
                w = min(w, label_w)
            if n == "preview":
                w = min(w, 30)
            cols.append((n, w))
        return cols


def _cells(label: str, s, digits: int, short: bool) -> dict:
    dtype = str(s.dtype)
    return {"": label, "shape": shape_text(s.shape),
            "dtype": _SHORT_DTYPES.get(dtype, dtype) if short else dtype,
            "min": _number(s.min, digits), "max": _number(s.max, digits),
            "mean": _number(s.mean, digits), "nan": str(s.nan or 0), "inf": str(s.inf or 0),
            "preview": s.preview or ""}


def _label(text: str, width: int) -> str:
    """``in 0 ← producer`` cut in the producer's name: which input it is stays whole."""
    head, arrow, producer = text.partition(" ← ")
    if arrow and len(text) > width:
        room = width - len(head) - len(arrow)
        return head + arrow + fit(producer, room) if room >= 4 else fit(head, width)
    return fit(text, width)


def _cell(name: str, text: str, width: int) -> str:
    if name == "":
        return _label(text, width).ljust(width)
    if len(text) > width:
        text = text[:width - 1] + "…"
    return text.rjust(width) if name in _NUMERIC else text.ljust(width)
