"""Display state built from events: the ops of the current run and their status.

Pure Python (no Textual): the app feeds it events in batches; widgets read it.
The same model replays recorded traces in ``view``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pyfunc_debug import events as ev

__all__ = ["OpRow", "RunModel", "Failure", "format_event", "original_line", "STATUS_ICONS"]

STATUS_ICONS = {"pending": "·", "running": "▶", "done": "✓", "error": "✗", "paused": "⏸",
                "folded": "≡", "dedup": "=", "aborted": "⊘"}

# An op ended by these did not fail: the run was stopped (q, Ctrl+C, sys.exit)
_STOPPED = ("CancelledError", "PdbQuit", "KeyboardInterrupt", "SystemExit", "BdbQuit")


@dataclass
class OpRow:
    """One op of the current run, as the op list and the inspector show it."""

    name: str
    op_type: str = ""
    status: str = "pending"
    source: str = ""
    duration_ns: int = 0
    inputs: tuple = ()
    outputs: tuple = ()
    error: str = ""
    note: str = ""            # "folded (cached value)", "same as <op>"
    children: list = field(default_factory=list)   # eager ops inside a py_function
    inputs_after: tuple = ()  # the inputs as the op left them, when it wrote into them
    warnings: list = field(default_factory=list)   # messages of Warning events about it


@dataclass
class Failure:
    """An op that failed: what the exit summary and the status bar say about it."""

    run: int
    op: str
    op_type: str
    source: str
    error_type: str
    line: str                 # the original exception's line, e.g. "KeyError: 2"


def original_line(message: str) -> str:
    """The user's exception line in an op error's message (``KeyError: 2``)."""
    lines = [l for l in message.splitlines() if l.strip()]
    return next((l for l in lines if not l.startswith(
        ("Graph execution", "Detected at", "Function execution", "Traceback", " "))),
        lines[0] if lines else "")


def _dur(ns: int) -> str:
    if ns < 1_000:
        return f"{ns}ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f}µs"
    return f"{ns / 1e6:.1f}ms"


def format_event(e, timings: bool = True) -> str:
    """One log line per event (``timings=False``: no durations, for stable screens)."""
    cls = type(e)
    dur = (lambda ns: _dur(ns) + " ") if timings else (lambda ns: "")
    if cls is ev.OpEnd:
        out = e.outputs[0].short() if e.outputs else ""
        indent = "    " if e.parent else "  "
        return f"{e.seq:>8} run {e.run_id:<4}{indent}done  {e.op} ({e.op_type}) {dur(e.duration_ns)}{out}"
    if cls is ev.OpStart:
        indent = "    " if e.parent else "  "
        return f"{e.seq:>8} run {e.run_id:<4}{indent}start {e.op} ({e.op_type})"
    if cls is ev.OpError:
        first = original_line(e.message)
        return f"{e.seq:>8} run {e.run_id:<4}  ERROR {e.op} ({e.op_type}): {first[:120]}"
    if cls is ev.RunStart:
        what = f"{e.kind} {e.name}".strip()
        return f"{e.seq:>8} run {e.run_id:<4}start {what}: {len(e.ops)} ops"
    if cls is ev.RunEnd:
        return (f"{e.seq:>8} run {e.run_id:<4}end   {'ok' if e.ok else 'FAILED'} "
                f"{dur(e.duration_ns)}" + ("" if e.ok else f"{e.error}"))
    if cls is ev.BreakpointHit:
        return f"{e.seq:>8} run {e.run_id!s:<4}  PAUSE {e.when} {e.op} ({e.op_type}) {e.breakpoint}"
    if cls is ev.Warning:
        return f"{e.seq:>8} WARNING {e.op}: {e.message[:160]}"
    return f"{getattr(e, 'seq', '?'):>8} {cls.__name__}"


class RunModel:
    """The current run's ops (in order) and counters over everything seen."""

    def __init__(self):
        self.rows: dict[str, OpRow] = {}
        self.order: list[str] = []
        self.run_id = None
        self.run_kind = ""
        self.runs = 0
        self.events = 0
        self.errors = 0
        self.warnings: list = []
        self.failures: list[Failure] = []
        self._paused = None       # (row, its status before the pause)
        self.state = "idle"
        self.last_error = ""
        self.version = 0          # bumped on every change the op list must redraw
        self.sources: dict[str, str] = {}

    @property
    def ops_total(self) -> int:
        return sum(1 for r in self.rows.values() if r.status not in ("folded", "dedup"))

    @property
    def ops_done(self) -> int:
        return sum(1 for r in self.rows.values() if r.status in ("done", "error"))

    def row_at(self, index: int) -> OpRow | None:
        return self.rows[self.order[index]] if 0 <= index < len(self.order) else None

    def index_of(self, name: str) -> int:
        try:
            return self.order.index(name)
        except ValueError:
            return -1

    def apply(self, e) -> None:
        """Update the state for one event."""
        self.events += 1
        cls = type(e)
        if self._paused is not None and cls is not ev.BreakpointHit and cls is not ev.Warning:
            self.unpause()
        if cls is ev.RunStart:
            self._start_run(e)
        elif e.parent is not None:
            self._child(e)
        elif cls is ev.OpStart:
            row = self._row(e.op, e.op_type)
            row.status, row.source = "running", e.source
            self.sources[e.op] = e.source
        elif cls is ev.OpEnd:
            row = self._row(e.op, e.op_type)
            row.status, row.duration_ns = "done", e.duration_ns
            row.inputs, row.outputs = e.inputs, e.outputs
        elif cls is ev.OpError:
            row = self._row(e.op, e.op_type)
            row.error = e.message
            if e.error_type in _STOPPED:
                row.status = "aborted"
            else:
                row.status = "error"
                self.errors += 1
                self.last_error = f"{e.error_type} at op '{e.op}'"
                self.failures.append(Failure(self.runs, e.op, e.op_type, e.source,
                                             e.error_type, original_line(e.message)))
        elif cls is ev.RunEnd:
            self.state = "finished" if e.ok else "failed"
            for row in self.rows.values():   # never left RUNNING: the run is over
                if row.status == "running":
                    row.status = "aborted"
        elif cls is ev.BreakpointHit:
            if e.parent is None:  # a framework callback can pause before its first start
                self._row(e.op, e.op_type)
            self.mark_paused(e.op)
            self.state = "paused"
        elif cls is ev.Warning:
            self.warnings.append(e)
            row = self.rows.get(e.op) if e.run_id == self.run_id else None
            if row is not None:
                row.warnings.append(e.message)
                if e.inputs:
                    row.inputs_after = e.inputs
        self.version += 1

    def mark_paused(self, name: str) -> None:
        """Show ``name`` as paused until the run moves on (``unpause``)."""
        row = self.rows.get(name)
        if row is not None and row.status not in ("error", "paused"):
            self.unpause()
            self._paused = (row, row.status)
            row.status = "paused"
            self.version += 1

    def unpause(self) -> None:
        """The paused op gets back the status it had (done, for a pause after it ran)."""
        if self._paused is not None:
            row, status = self._paused
            self._paused = None
            if row.status == "paused":
                row.status = status
                self.version += 1

    def _start_run(self, e) -> None:
        self.runs += 1
        self.run_id, self.run_kind = e.run_id, e.kind
        self.state = "running"
        self.rows, self.order = {}, []
        for name, op_type in zip(e.ops, e.op_types or ("",) * len(e.ops)):
            self._row(name, op_type)
        for name in e.folded:
            self._row(name, "").status = "folded"
            self.rows[name].note = "folded: its inputs are constants, so its value is reused"
        for name, first in e.deduplicated:
            row = self._row(name, "")
            row.status, row.note = "dedup", f"same call as '{first}': ran once for both"
        for name, row in self.rows.items():
            row.source = self.sources.get(name, "")

    def _row(self, name: str, op_type: str) -> OpRow:
        row = self.rows.get(name)
        if row is None:
            row = self.rows[name] = OpRow(name, op_type)
            self.order.append(name)
        elif op_type and not row.op_type:
            row.op_type = op_type
        return row

    def _child(self, e) -> None:
        parent = self.rows.get(e.parent)
        if parent is None:
            return
        if type(e) is ev.OpEnd:
            out = e.outputs[0].short() if e.outputs else ""
            parent.children.append(f"{e.op} ({e.op_type}) {_dur(e.duration_ns)} {out}")
            del parent.children[:-50]
        elif type(e) is ev.OpError:
            parent.children.append(f"{e.op} ({e.op_type}) ERROR {e.message[:80]}")
