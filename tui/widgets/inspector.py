"""Inspector: the selected op — type, source, input/output summaries, error, values.

A value grid shows a 1-D/2-D array (or a 2-D slice of a higher one) and a
sparkline its values; ``v`` cycles through the op's inputs and outputs. The grid
holds only the columns that fit the inspector whole (a number cut at its edge
would read as another number: ``-0.6863`` as ``-0``); its caption says which.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Sparkline, Static

from pyfunc_debug.trace.summary import summarize

from ..failure_text import error_text, user_error
from ..rows import OpRow, no_values_reason, rank
from ..timing import duration_text
from .summary_table import SummaryTable
from .value_grid import ValueGrid

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
    caption = f"{arr.dtype if arr.dtype.kind != 'O' else 'string'}{list(arr.shape)}" + \
        _first_non_finite(arr)
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


def _first_non_finite(arr) -> str:
    """Where the first NaN or Inf is (C order): the grid shows the first rows only, and the
    element that went wrong may be far below them."""
    if arr.dtype.kind not in "fc" or not arr.ndim or not arr.size:
        return ""
    bad = ~np.isfinite(arr)
    if not bad.any():
        return ""
    at = np.unravel_index(int(np.argmax(bad)), arr.shape)
    what = "NaN" if np.isnan(arr[at]) else "Inf"
    return f" — first {what} at [{', '.join(map(str, at))}]"


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
        self._reason = ""
        self._shown = None          # the op on show: another one starts at the top
        self._parts: dict = {}      # what each Static part shows now
        self._widths = None         # (column labels, widths) of the value's whole grid
        self._empty = "Select an op."   # what it says with no op selected (``explain``)

    def compose(self) -> ComposeResult:
        yield Static("Select an op.", id="insp-header")
        yield Static("", id="insp-summaries")
        yield Static("", id="insp-error")
        yield Static("", id="insp-caption")
        spark = Sparkline([], id="insp-spark")
        spark.display = False          # no values yet: no line that looks like some
        yield spark
        yield ValueGrid(id="insp-grid")

    def show(self, row: OpRow | None, values: Values | None = None, pause=None,
             relative=lambda p: p, timings: bool = True, from_run: int | None = None,
             live: bool = True, reason: str = "", streamed: bool = True,
             remote: bool = False) -> None:
        """Show ``row``; ``values`` when known; ``from_run``: they are an earlier run's
        (``-1``: an earlier call of this run); ``live``: the running app (else ``view``);
        ``streamed``, ``remote``: see ``no_values_reason``."""
        if row is None:
            self._clear()
            return
        # same_height: a running op's once-a-second update changes numbers, not heights
        self._set("#insp-header", self._header(row, pause, relative, timings), same_height=True)
        self._set("#insp-summaries", self._summaries(row, pause), same_height=True)
        # a pause holds its own call's error (another call of the op may have failed since)
        error = error_text(pause.error) if pause is not None and pause.error is not None \
            else row.error
        self._set("#insp-error", _error(error, row.children[-12:]), same_height=True)
        labelled, reason = _labelled(values), reason or no_values_reason(row, live, streamed,
                                                                        remote)
        if self._shown != row.name or not _same_values(labelled, self._values) \
                or (from_run, reason) != (self._from_run, self._reason):
            self._values, self._from_run, self._reason = labelled, from_run, reason
            self._value_index = 0
            self._show_value()
        if self._shown != row.name:     # the root cause is at the top: start there
            self._shown = row.name
            self.scroll_home(animate=False)

    def explain(self, text: str) -> None:
        """What to say while no op is selected, instead of "Select an op." (a program that
        ran no op: why)."""
        self._empty = text
        if self._shown is None:
            self._set("#insp-header", text)

    def follow(self, row: OpRow, relative=lambda p: p, timings: bool = True) -> None:
        """Between the once-a-second full updates of a running program: only the header
        (status, duration, diagnostics) of the op already shown, so it never says DONE
        while the op list says it runs. One text part: cheap to redraw every tick."""
        if row is not None and row.name == self._shown:
            self._set("#insp-header", self._header(row, None, relative, timings),
                      same_height=True)

    def _set(self, part: str, content, same_height: bool = False) -> None:
        """Update one part when its content changed: the app shows the selected op again
        at every tick while a run goes on, and each redraw holds the GIL the run needs.
        ``same_height``: when the new text takes as many lines as the old one, no layout
        of the screen (which would redraw every pane)."""
        old = self._parts.get(part, _UNSET)
        if old != content:
            self._parts[part] = content
            static = self.query_one(part, Static)
            was = _lines(old, static) if same_height else None
            layout = was is None or was != _lines(content, static)
            static.update(content, layout=layout)

    def _clear(self) -> None:
        """Nothing selected: nothing of the op shown before may stay."""
        self._shown = None
        self._values, self._reason = [], ""
        self._set("#insp-header", self._empty)
        for part in ("#insp-summaries", "#insp-error", "#insp-caption"):
            self._set(part, "")
        self.query_one("#insp-grid", ValueGrid).clear()
        self._widths = None
        spark = self.query_one("#insp-spark", Sparkline)
        spark.data = []
        spark.display = False

    def _header(self, row, pause, relative, timings) -> Text:
        """Name, type, status and duration; then the likely root cause with its fix."""
        here = pause if pause is not None and pause.op_name == row.name else None
        text = Text()
        text.append(f"{row.name}", style="bold")
        text.append(f"  {row.op_type}  ")
        text.append(row.status.upper(), style="bold")
        # a pause after a call shows that call's time and diagnostics: another thread may
        # have ended a call of the op since (the row's latest)
        call = row.by_thread.get(getattr(here, "thread", None)) \
            if here is not None and here.when != "before" else None
        if timings and not (here is not None and (here.when == "before"
                                                  or getattr(here, "not_run", ""))):
            text.append(_duration(*(call[:3] if call is not None else
                                    (row.duration_ns, row.waited_ns, row.under_pdb))))
        if _ended_call(row, pause):   # a newer call runs: below is the latest that ended
            text.append(f"  · shown: latest of {row.calls:,} ended")
        elif here is not None and row.calls > 1:   # other threads' calls may have ended since
            text.append(f"  · shown: the paused call, of {row.calls:,}")
        elif row.calls > 1:   # a framework's op: what is shown below is one call of many
            text.append(f"  · latest of {row.calls:,} calls")
        hints = set()
        own = _kinds(pause)
        for i, w in enumerate(_diagnostics(row, pause, None if call is None else call[3])):
            text.append(f"\n⚠ {w.message}", style="bold yellow")
            if w.hint and w.hint not in hints and (i == 0 or w.kind in own):
                hints.add(w.hint)
                text.append(f"\n  fix: {w.hint}", style="yellow")
        if pause is not None:
            text.append(f"\n{_pause_line(pause)}", style="bold")
        source = row.source or (pause.source if pause is not None else "") or \
            next((w.source for w in row.warnings if w.source), "")   # an op that did not run
        if source:
            text.append(f"\ncreated at {relative(source)}")
        if row.note and not getattr(here, "not_run", ""):   # else the pause line says it
            text.append(f"\n{row.note}", style="italic")
        if row.inputs_after or _inputs_after(pause) is not None:
            text.append("\ninput modified by this op: shown as given (in) and as left "
                        "(in … after)", style="italic")
        return text

    def _summaries(self, row, pause) -> SummaryTable:
        ins = pause.input_summaries() if pause is not None else row.inputs
        outs = (pause.output_summaries() if pause.outputs is not None else ()) \
            if pause is not None else row.outputs
        ended = _ended_call(row, pause)
        if ended:
            ins, outs = row.ended
        producers = pause.producers() if pause is not None and pause.parent is None \
            else row.producers
        # the first column names each value and, for inputs, the op that produced it
        rows = [(f"in {i}" + (f" ← {producers[i]}" if i < len(producers) and producers[i]
                              else ""), s) for i, s in enumerate(ins)]
        left = _inputs_after(pause)
        if left is not None:   # the pause's own values: exactly the inputs the op changed
            given = pause.inputs
            rows += [(f"in {i} after", summarize(v)) for i, v in enumerate(left)
                     if i < len(given) and not _same(given[i], v)]
        else:
            after = row.inputs_after if pause is None or pause.when != "before" else ()
            changed = [i for i, s in enumerate(after) if i < len(ins) and s[:8] != ins[i][:8]]
            rows += [(f"in {i} after", after[i]) for i in (changed or range(len(after)))]
        rows += [(f"out {i}", s) for i, s in enumerate(outs)]
        return SummaryTable([(label, s, "red" if s.nan or s.inf else
                              ("yellow" if "after" in label else "dim" if ended else None))
                             for label, s in rows])

    def _show_value(self) -> None:
        grid = self.query_one("#insp-grid", ValueGrid)
        spark = self.query_one("#insp-spark", Sparkline)
        if not self._values:
            grid.clear()
            self._widths = None
            self._set("#insp-caption", f"({self._reason})" if self._reason else "")
            spark.data = []
            spark.display = False
            return
        label, value = self._values[self._value_index % len(self._values)]
        cols, rows, cap = grid_of(value)
        room = self._room(grid, len(rows))
        whole = self._widths   # (labels, widths, room) of the whole grid, as last fitted
        fit = len(grid.labels) if whole is not None and whole[0] == cols \
            and whole[2] == room else 0
        # a running op's new values, once a second: into the cells as they are (no widths
        # measured, no layout; the columns are as wide as the widest cell so far, so the
        # next values fit); else the widths (they only grow) and what fits
        if not fit or not grid.refill(cols[:fit], [r[:fit] for r in rows]):
            widths = [max(map(cell_len, c)) for c in zip(cols, *rows)]
            if whole is not None and whole[0] == cols:
                widths = list(map(max, widths, whole[1]))
            self._widths = (cols, widths, room)
            fit = _fitting(widths, room, grid.cell_padding)
            grid.set(cols[:fit], widths[:fit], [r[:fit] for r in rows])
        if fit < len(cols):   # the grid's first column labels the rows
            cap += f" — columns 0–{fit - 2} fit here"
        more = f"   (v: next of {len(self._values)})" if len(self._values) > 1 else ""
        stale = "" if self._from_run is None else \
            " — from an earlier call of this run, not this one" if self._from_run == -1 else \
            f" — from run {self._from_run}, not this run"
        self._set("#insp-caption", f"{label}: {cap}{stale}{more}", same_height=True)
        spark.data = _spark(value)
        spark.display = bool(spark.data)

    def _room(self, grid: ValueGrid, rows: int) -> int:
        """The cells the grid's columns may take: as if the inspector's scrollbar were
        shown (it comes and goes with the content's height, and the columns must not
        depend on it), less the grid's own when it has more rows than it shows."""
        room = self.content_region.width - self.styles.scrollbar_size_vertical
        tall = grid.styles.max_height
        if tall is not None and rows + 1 > tall.value:
            room -= grid.styles.scrollbar_size_vertical
        return room

    def on_resize(self, event) -> None:
        """Another width: as many of the value's columns as now fit."""
        if self._values:
            self._show_value()

    def action_cycle_value(self) -> None:
        if self._values:
            self._value_index += 1
            self._show_value()


def _duration(duration_ns, waited_ns: int, under_pdb: bool) -> str:
    """A call's own time: none while it waits to run, never the time paused or in pdb."""
    if under_pdb:
        return "  ran under pdb: no duration"
    if duration_ns is None:
        return ""
    waited = f" (+{duration_text(waited_ns)} paused)" if waited_ns else ""
    return f"  {duration_text(duration_ns)}{waited}"


def _pause_line(pause) -> str:
    where = {"before": "paused before it runs", "after": "paused after it ran",
             "error": "paused at its error"}.get(pause.when, f"paused ({pause.when})")
    not_run = getattr(pause, "not_run", "")   # a remote pause has none
    if not_run:
        where = f"paused at it: it did not run in this run ({not_run})"
    if pause.parent:
        where += f" (at {pause.op_name}, inside it)"
    bp = pause.breakpoint
    return where + (f" — {bp.describe()}" if bp is not None else "")


def _diagnostics(row: OpRow, pause, call_warnings=None) -> list:
    """Every diagnostic the pause is for, then the op's others (likeliest first); each once.
    ``call_warnings``: those of the paused call, instead of the op's latest call's."""
    own = list(getattr(pause, "warnings", ()) or ())   # a remote pause has only ``warning``
    if not own and getattr(pause, "warning", None) is not None:
        own = [pause.warning]
    others = row.warnings if call_warnings is None else \
        sorted(call_warnings, key=lambda w: rank(w.kind))
    shown, seen = [], set()
    for w in own + list(others):
        if (w.kind, w.message) not in seen:
            seen.add((w.kind, w.message))
            shown.append(w)
    return shown


def _kinds(pause) -> set:
    """The kinds of diagnostic the pause is for."""
    own = getattr(pause, "warnings", ()) or (getattr(pause, "warning", None),)
    return {w.kind for w in own if w is not None}


def _inputs_after(pause):
    """The inputs as the paused op left them, when it changed them (else None)."""
    return getattr(pause, "inputs_after", None) if pause is not None else None


def _error(error: str, children: list) -> Text:
    """The user's exception line and frame first, then the whole error; eager ops inside."""
    text = Text()
    if error:
        user = user_error(error)
        text.append(user.line, style="bold red")
        if user.frame:
            text.append(f"\n  at {user.frame}", style="red")
        if user.text != user.line:
            text.append("\n\nthe whole error:\n", style="dim")
            text.append(user.text, style="red")
    if children:
        text.append(("\n\n" if error else "") + "eager ops inside:\n" + "\n".join(children))
    return text


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


_UNSET = object()


def _lines(content, static) -> int | None:
    """The lines ``content`` (text or a summary table) takes in ``static`` as wide as it
    is now; None when that is not known (then the screen is laid out again)."""
    width = static.content_region.width
    if width <= 0:
        return None
    if isinstance(content, str):
        content = Text(content)
    if isinstance(content, SummaryTable):   # its lines are fitted to the width
        return len(content.lines(width))
    if not isinstance(content, Text):
        return None
    return len(content.wrap(static.app.console, width))


def _fitting(widths: list, room: int, padding: int) -> int:
    """How many of the columns (``widths``, each drawn with ``padding`` on both sides) fit
    whole in ``room`` cells: all when the room is not known yet (before the first
    layout); never fewer than the row labels and one column of values."""
    if room <= 0:
        return len(widths)
    used = 0
    for n, width in enumerate(widths):
        used += width + 2 * padding
        if used > room:
            return max(n, min(2, len(widths)))
    return len(widths)


def _ended_call(row: OpRow, pause) -> bool:
    """The op runs a call that has no values yet, and an earlier call of this run ended:
    the inspector shows that one's summaries (its values grid does too), and says so."""
    return (pause is None and row.status == "running" and not row.inputs
            and not row.outputs and bool(row.ended))


def _same_values(a: list, b: list) -> bool:
    """The same (label, value) pairs, values the very same objects: the grid and
    sparkline on show are still right."""
    return len(a) == len(b) and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a, b))


def _as_list(returned) -> list:
    return list(returned) if isinstance(returned, (list, tuple)) else [returned]


def _same(a, b) -> bool:
    try:
        return bool(np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind in "fc"))
    except (TypeError, ValueError):
        return a is b
