"""Display state built from events: the ops of the current run and their status.

Pure Python (no Textual): the app feeds it events in batches; widgets read it.
The same model replays recorded traces in ``view``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pyfunc_debug import events as ev
from pyfunc_debug.trace.failures import STOPPED, original_line

# Diagnostics about an op whatever the run (it is folded, shared, blocks a gradient, …)
_STANDING = frozenset({"folded", "deduplicated", "blocked_gradient", "breakpoint_cannot_fire"})

__all__ = ["OpRow", "RunModel", "Failure", "format_event", "original_line", "STATUS_ICONS"]

STATUS_ICONS = {"pending": "·", "running": "▶", "done": "✓", "error": "✗", "paused": "⏸",
                "folded": "≡", "dedup": "=", "aborted": "⊘"}


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
    note: str = ""            # why it did not run: "folded: …", "same stateless call as …"
    tag: str = ""             # the same in a word or two, for the op list
    children: list = field(default_factory=list)   # eager ops inside a py_function
    inputs_after: tuple = ()  # the inputs as the op left them, when it wrote into them
    warnings: list = field(default_factory=list)   # Warning events (diagnostics) about it
    producers: tuple = ()     # the op that produced each input


@dataclass
class Failure:
    """An op that failed: what the exit summary and the status bar say about it."""

    run: int
    op: str
    op_type: str
    source: str
    error_type: str
    line: str                 # the original exception's line, e.g. "KeyError: 2"


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
        self.diagnostics: dict = {}        # (op, kind) -> the latest Warning: what the bar counts
        self._standing: dict = {}          # op -> Warnings not tied to a run (build time)
        self.producers: dict = {}          # op -> its inputs' producer ops (static)
        self.types: dict = {}              # op -> its type, from any event that named it
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
            row.producers = self.producers[e.op] = e.producers
        elif cls is ev.OpEnd:
            row = self._row(e.op, e.op_type)
            row.status, row.duration_ns = "done", e.duration_ns
            row.inputs, row.outputs = e.inputs, e.outputs
        elif cls is ev.OpError:
            row = self._row(e.op, e.op_type)
            row.error = e.message
            if e.error_type in STOPPED:  # the run was stopped: not a failure
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
            self._warning(e)
        self.version += 1

    def _warning(self, e) -> None:
        self.warnings.append(e)
        if not e.op:
            return
        self.diagnostics[(e.op, e.kind)] = e
        if e.op_type:
            self.types.setdefault(e.op, e.op_type)
        if e.run_id is None or e.kind in _STANDING:   # about the op, whichever run it is in
            standing = self._standing.setdefault(e.op, [])
            standing[:] = [w for w in standing if w.kind != e.kind] + [e]
        row = self.rows.get(e.op) if e.run_id in (None, self.run_id) else None
        if row is not None:
            row.warnings = [w for w in row.warnings if w.kind != e.kind] + [e]
            row.op_type = row.op_type or e.op_type
            if e.inputs:
                row.inputs_after = e.inputs

    def next_with_warnings(self, after: int) -> str | None:
        """The next op (in list order, wrapping) after index ``after`` with a diagnostic."""
        n = len(self.order)
        for k in range(1, n + 1):
            row = self.rows[self.order[(after + k) % n]]
            if row.warnings:
                return row.name
        return None

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
            self.rows[name].note = "folded: stateless on constant inputs, its value is reused"
            self.rows[name].tag = "folded"
        for name, first in e.deduplicated:
            row = self._row(name, "")
            row.status, row.note = "dedup", f"same stateless call as '{first}': ran once for both"
            row.tag = f"= {first}"
        for name, row in self.rows.items():
            row.source = self.sources.get(name, "")
            row.producers = self.producers.get(name, ())
            row.warnings = list(self._standing.get(name, ()))

    def _row(self, name: str, op_type: str) -> OpRow:
        row = self.rows.get(name)
        if op_type:
            self.types[name] = op_type
        if row is None:
            row = self.rows[name] = OpRow(name, op_type or self.types.get(name, ""))
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
