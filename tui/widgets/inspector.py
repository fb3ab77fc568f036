"""Inspector: the selected op — type, source, input/output summaries, error, values.

A scrollable value grid shows a 1-D/2-D array (or a 2-D slice of a higher
one) and a sparkline its values; ``v`` cycles through the op's inputs and outputs.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Sparkline, Static

from ..model import OpRow

__all__ = ["Inspector", "Values", "grid_of"]

MAX_ROWS, MAX_COLS, SPARK_POINTS = 200, 24, 120


class Values(NamedTuple):
    """An op's values: inputs as it started, outputs; what its function returned when the
    op rejected it; the inputs as the op left them (when it wrote into them)."""

    inputs: list
    outputs: list
    returned: object = None
    after: list | None = None


def grid_of(value) -> tuple[list[str], list[list[str]], str]:
    """(column labels, rows of cells, caption) for a value, bounded in size."""
    arr = np.asarray(value)
    caption = f"{arr.dtype if arr.dtype.kind != 'O' else 'string'}{list(arr.shape)}"
    if arr.ndim > 2:
        lead = (0,) * (arr.ndim - 2)
        caption += f" — slice [{', '.join('0' for _ in lead)}, :, :]"
        arr = arr[lead]
    if arr.ndim == 0:
        return ["value"], [[_cell(arr[()])]], caption
    if arr.ndim == 1:
        rows = [[str(i), _cell(v)] for i, v in enumerate(arr[:MAX_ROWS])]
        if arr.shape[0] > MAX_ROWS:
            caption += f" — first {MAX_ROWS} of {arr.shape[0]}"
        return ["i", "value"], rows, caption
    cols = min(arr.shape[1], MAX_COLS)
    rows = [[str(i)] + [_cell(v) for v in arr[i, :cols]] for i in range(min(arr.shape[0], MAX_ROWS))]
    if arr.shape[0] > MAX_ROWS or arr.shape[1] > MAX_COLS:
        caption += f" — first {min(arr.shape[0], MAX_ROWS)}×{cols}"
    return [""] + [str(j) for j in range(cols)], rows, caption


def _cell(v) -> str:
    if isinstance(v, (bytes, np.bytes_)):
        return repr(bytes(v))[:40]
    if isinstance(v, (float, np.floating)):
        return f"{v:.6g}"
    return str(v)[:40]


def _spark(value) -> list[float]:
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf" or arr.size < 2:
        return []
    flat = arr.reshape(-1).astype(np.float64)
    flat = flat[np.isfinite(flat)]
    if flat.size > SPARK_POINTS:
        flat = flat[:: flat.size // SPARK_POINTS][:SPARK_POINTS]
    return flat.tolist()


class Inspector(VerticalScroll, can_focus=True):
    """Details of one op; values from a pause (real) or the last run (captured)."""

    BINDINGS = [Binding("v", "cycle_value", "value", show=False)]

    def __init__(self, **kw):
        super().__init__(**kw)
        self._values: list = []     # (label, value)
        self._value_index = 0
        self._from_run = None

    def compose(self) -> ComposeResult:
        yield Static("Select an op.", id="insp-header")
        yield Static("", id="insp-summaries")
        yield Static("", id="insp-error")
        yield Static("", id="insp-caption")
        yield Sparkline([], id="insp-spark")
        yield DataTable(id="insp-grid", show_cursor=False, zebra_stripes=True)

    def show(self, row: OpRow | None, values: Values | None = None, pause=None,
             relative=lambda p: p, timings: bool = True, from_run: int | None = None) -> None:
        """Show ``row``; ``values`` when known; ``from_run``: they are an earlier run's."""
        header = self.query_one("#insp-header", Static)
        if row is None:
            header.update("Select an op.")
            self.query_one("#insp-spark", Sparkline).display = False
            return
        text = Text()
        text.append(f"{row.name}", style="bold")
        text.append(f"  {row.op_type}  ")
        text.append(row.status.upper(), style="bold")
        if row.duration_ns and timings:
            text.append(f"  {row.duration_ns / 1e3:.1f}µs")
        for w in row.warnings:      # the likely root cause first, in full, with its fix
            text.append(f"\n⚠ {w.message}", style="bold yellow")
            if w.hint:
                text.append(f"\n  fix: {w.hint}", style="yellow")
        source = row.source or (pause.source if pause is not None else "")
        if source:
            text.append(f"\ncreated at {relative(source)}")
        if pause is not None:
            text.append(f"\n{pause.describe_short}", style="bold")
        if row.note:
            text.append(f"\n{row.note}", style="italic")
        if row.inputs_after:
            text.append("\ninput modified by this op: shown as given (in) and as left "
                        "(in … after)", style="italic")
        header.update(text)
        self.query_one("#insp-summaries", Static).update(self._summaries(row, pause))
        error = row.error or (str(pause.error) if pause is not None and pause.error else "")
        children = "\n".join(row.children[-12:])
        err_text = Text(error.strip(), style="red") if error else Text("")
        if children:
            err_text.append(("\n" if error else "") + "eager ops inside:\n" + children)
        self.query_one("#insp-error", Static).update(err_text)
        self._values, self._from_run = _labelled(values), from_run
        self._value_index = 0
        self._show_value()

    def _summaries(self, row, pause):
        narrow = 0 < self.size.width < 64   # e.g. an 80-column terminal: the stats only
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold", expand=True)
        widths = {"": 5, "min": 7, "max": 7, "mean": 7, "nan": 3, "inf": 3} if narrow else \
            {"": 5, "shape": 5, "dtype": 7, "min": 7, "max": 7, "mean": 7, "nan": 3, "inf": 3}
        # the first column names each value and, for inputs, the op that produced it
        for col, width in widths.items():
            table.add_column(col, no_wrap=True, min_width=width)
        if not narrow:  # the preview gives way first
            table.add_column("preview", no_wrap=True, overflow="ellipsis", ratio=1, min_width=0)
        ins = pause.input_summaries() if pause is not None else row.inputs
        outs = (pause.output_summaries() if pause.outputs is not None else ()) \
            if pause is not None else row.outputs
        after = row.inputs_after if pause is None or pause.when != "before" else ()
        producers = pause.producers() if pause is not None and pause.parent is None \
            else row.producers
        rows = [(f"in {i}" + (f" ← {producers[i]}" if i < len(producers) and producers[i]
                              else ""), s) for i, s in enumerate(ins)]
        changed = [i for i, s in enumerate(after) if i < len(ins) and s[:8] != ins[i][:8]]
        rows += [(f"in {i} after", after[i]) for i in (changed or range(len(after)))]
        rows += [(f"out {i}", s) for i, s in enumerate(outs)]
        fmt = (lambda v: "" if v is None else f"{v:.4g}")
        for label, s in rows:
            cells = [label]
            if not narrow:
                cells += [str(list(s.shape)), s.dtype]
            cells += [fmt(s.min), fmt(s.max), fmt(s.mean), str(s.nan or ""), str(s.inf or "")]
            if not narrow:
                cells.append(s.preview[:30])
            style = "red" if s.nan or s.inf else ("yellow" if "after" in label else None)
            table.add_row(*cells, style=style)
        return table

    def _show_value(self) -> None:
        grid = self.query_one("#insp-grid", DataTable)
        spark = self.query_one("#insp-spark", Sparkline)
        caption = self.query_one("#insp-caption", Static)
        grid.clear(columns=True)
        if not self._values:
            caption.update("(no values: the live UI keeps values up to 64 KB; a trace keeps "
                           "them with capture=\"full\")")
            spark.data = []
            spark.display = False
            return
        label, value = self._values[self._value_index % len(self._values)]
        cols, rows, cap = grid_of(value)
        more = f"   (v: next of {len(self._values)})" if len(self._values) > 1 else ""
        stale = f" — from run {self._from_run}, not this run" if self._from_run is not None \
            else ""
        caption.update(f"{label}: {cap}{stale}{more}")
        grid.add_columns(*cols)
        grid.add_rows(rows)
        spark.data = _spark(value)
        spark.display = bool(spark.data)

    def action_cycle_value(self) -> None:
        if self._values:
            self._value_index += 1
            self._show_value()


def _labelled(values: Values | None) -> list:
    """(label, value) pairs in the order ``v`` cycles through them: outputs first."""
    if values is None:
        return []
    out = [(f"output {i}", v) for i, v in enumerate(values.outputs or []) if v is not None]
    if values.returned is not None:
        out += [(f"returned {i} (rejected by the op)", v)
                for i, v in enumerate(_as_list(values.returned))]
    for i, v in enumerate(values.inputs):
        if v is None:
            continue
        after = values.after[i] if values.after and i < len(values.after) else None
        if after is not None and not _same(v, after):
            out += [(f"input {i} as given (modified by this op)", v),
                    (f"input {i} as the op left it", after)]
        else:
            out.append((f"input {i}", v))
    return out


def _as_list(returned) -> list:
    return list(returned) if isinstance(returned, (list, tuple)) else [returned]


def _same(a, b) -> bool:
    try:
        return bool(np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind in "fc"))
    except (TypeError, ValueError):
        return a is b
