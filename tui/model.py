"""Display state built from events: the ops of the current run and their status.

Pure Python (no Textual): the app feeds it events in batches; widgets read it.
The same model replays recorded traces in ``view``. A row shows the op's latest
call: a new call (its ``OpStart``, or a pause before it) clears the last one's
duration and values, so nothing shown belongs to another call. A row keeps its latest
ended call's summaries apart (``ended``): the inspector shows them, saying so, while a
newer call of a framework op has none yet.
"""
from __future__ import annotations

from pyfunc_debug import events as ev
from pyfunc_debug.trace.failures import original_line
from pyfunc_debug.trace.pending import PendingOpEnd, settle

from .log_text import as_settled, format_event, holds_values, stopped_text
from .rows import CallInputs, Failure, OpRow, rank
from .timing import PdbSpan, Waits, duration_text

# Diagnostics about an op whatever the run (it is folded, shared, blocks a gradient, …)
_STANDING = frozenset({"folded", "deduplicated", "blocked_gradient", "breakpoint_cannot_fire"})

# run kinds whose op may have calls in flight on several threads at once (a framework's
# callbacks): a pause after one call shows that call, not another thread's (``by_thread``)
PARALLEL_CALLS = frozenset({"tensorflow", "jax"})

__all__ = ["RunModel"]


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
        # op -> its type, from any event that named it: every op run or planned in any run
        # (eager ops inside a py_function too), which breakpoint globs are checked against
        self.types: dict = {}
        self._paused = None       # (row, its status before the pause)
        self.state = "idle"
        self.last_error = ""
        self.version = 0          # bumped on every change the op list must redraw
        self.sources: dict[str, str] = {}
        self.waits = Waits()
        self.run_t0 = {}          # run_id -> its RunStart's t_ns

    # -- counters ------------------------------------------------------------------------
    def _counted(self) -> list:
        """The rows of ops that run (one paused where its reused value is, did not)."""
        paused = self._paused
        return [r for r in self.rows.values() if (paused[1] if paused and paused[0] is r
                                                  else r.status) not in ("folded", "dedup")]

    @property
    def ops_total(self) -> int:
        """The run's ops (those its start listed, else every op seen)."""
        rows = self._counted()
        planned = [r for r in rows if r.in_plan]
        return len(planned) if planned else len(rows)

    @property
    def ops_done(self) -> int:
        rows = self._counted()
        planned = [r for r in rows if r.in_plan] or rows
        return sum(1 for r in planned if self._ran(r))

    @property
    def ops_extra(self) -> int:
        """Ops that ran outside the run's list (a constant folded on its first run)."""
        rows = self._counted()
        if not any(r.in_plan for r in rows):
            return 0
        return sum(1 for r in rows if not r.in_plan)

    def _ran(self, row: OpRow) -> bool:
        if row.calls or row.status in ("done", "error", "aborted"):
            return True
        return self._paused is not None and self._paused[0] is row and \
            self._paused[1] in ("done", "error", "aborted")

    def row_at(self, index: int) -> OpRow | None:
        return self.rows[self.order[index]] if 0 <= index < len(self.order) else None

    def index_of(self, name: str) -> int:
        try:
            return self.order.index(name)
        except ValueError:
            return -1

    # -- events --------------------------------------------------------------------------
    def apply(self, e) -> None:
        """Update the state for one event."""
        cls = type(e)
        if cls is PdbSpan:
            self.waits.pdb(e)
            return
        if cls is CallInputs:
            row = self.rows.get(e.op)
            if row is not None and e.run_id == self.run_id and not row.inputs:
                row.inputs = e.inputs
                self.version += 1
            return
        self.events += 1
        if cls is ev.BreakpointHit:
            self.waits.paused(e.thread, e.t_ns)
        elif cls is not ev.Warning:
            self.waits.moved_on(e.thread, e.t_ns)
        if self._paused is not None and cls is not ev.BreakpointHit and cls is not ev.Warning:
            self.unpause()
        if cls is ev.RunStart:
            self._start_run(e)
        elif e.parent is not None:
            self._child(e)
        elif cls is ev.OpStart:
            row = self._row(e.op, e.op_type)
            self._new_call(row)
            row.status, row.source = "running", e.source
            self.sources[e.op] = e.source
            row.producers = self.producers[e.op] = e.producers
        elif cls is ev.OpEnd or cls is PendingOpEnd:
            row = self._row(e.op, e.op_type)
            row.status = "done"
            self._timed(row, e)
            row.inputs, row.outputs = e.inputs, e.outputs
            row.ended = (e.inputs, e.outputs)
            row.calls += 1
            if self.run_kind in PARALLEL_CALLS:   # only there do an op's calls overlap
                row.by_thread[e.thread] = [row.duration_ns, row.waited_ns, row.under_pdb, []]
        elif cls is ev.OpError:
            self._op_error(e)
        elif cls is ev.RunEnd:
            self.state = "finished" if e.ok else "failed"
            for row in self.rows.values():   # never left RUNNING: the run is over
                if row.status == "running":
                    row.status = "aborted"
        elif cls is ev.BreakpointHit:
            if e.parent is None:  # a framework callback can pause before its first start
                row = self._row(e.op, e.op_type)
                if e.when == "before":
                    self._new_call(row)
            self.mark_paused(e.op)
            self.state = "paused"
        elif cls is ev.Warning:
            self._warning(e)
        self.version += 1

    def _new_call(self, row: OpRow) -> None:
        """The op starts a call: nothing of its last one stays on show."""
        row.duration_ns, row.waited_ns, row.under_pdb = None, 0, False
        row.inputs = row.outputs = row.inputs_after = ()
        row.error = ""
        row.children = []

    def _timed(self, row: OpRow, e) -> None:
        """The call's duration without the time it waited for the user."""
        wall = e.duration_ns or 0
        waited, in_pdb = self.waits.within(e.t_ns - wall, e.t_ns, e.thread)
        row.under_pdb = in_pdb
        row.waited_ns = waited
        row.duration_ns = None if in_pdb or not wall else max(0, wall - waited)

    def _op_error(self, e) -> None:
        row = self._row(e.op, e.op_type)
        stopped = stopped_text(e)
        row.error = e.message if stopped is None else stopped
        row.inputs = row.outputs = ()     # another call's values are not this one's
        self._timed(row, e)
        row.calls += 1
        if stopped is not None:  # the run was stopped: not a failure
            row.status = "aborted"
            return
        row.status = "error"
        self.errors += 1
        self.last_error = f"{e.error_type} at op '{e.op}'"
        self.failures.append(Failure(e.run_id, e.op, e.op_type, e.source,
                                     e.error_type, original_line(e.message)))

    def entry(self, e, timings: bool = True):
        """The log's entry for ``e`` (already applied): ``e`` itself when its line is
        ``format_event(e)`` alone — an op's start, or an end that waited for no one and
        holds no captured value (a framework callback's small arrays are pending bytes,
        its big ones summaries), in one line — which the log formats only if it is shown
        (``EventLog``); else its line."""
        cls = e.__class__
        if cls is ev.OpStart or cls is ev.OpEnd or cls is PendingOpEnd:
            if "\n" not in e.op and "\n" not in e.op_type and (cls is ev.OpStart or (
                    not holds_values(e) and (e.parent is not None or self._unwaited(e)))):
                return e
        return self.line(e, timings)

    def _unwaited(self, e) -> bool:
        row = self.rows.get(e.op)
        return row is None or not (row.under_pdb or row.waited_ns)

    def line(self, e, timings: bool = True) -> str:
        """The log line for ``e`` (already applied): durations without the time paused or
        in pdb, a failed run's end with the user's exception line."""
        cls = type(e)
        if cls is PendingOpEnd:
            e = as_settled(e)
            cls = ev.OpEnd
        if cls in (ev.OpEnd, ev.OpError) and e.parent is None:
            row = self.rows.get(e.op)
            if row is not None and (row.under_pdb or row.waited_ns):
                return format_event(e, timings, _row_duration(row))
        elif cls is ev.RunEnd:
            t0 = self.run_t0.pop(e.run_id, e.t_ns - e.duration_ns)
            waited, in_pdb = self.waits.within(t0, e.t_ns)
            duration = None
            if waited:
                duration = f"{duration_text(max(0, e.duration_ns - waited))} (+" \
                    f"{duration_text(waited)} {'paused or in pdb' if in_pdb else 'paused'})"
            return format_event(e, timings, duration, self._ending(e))
        return format_event(e, timings)

    def _ending(self, e) -> str | None:
        """A failed run's end, said with the first failure's own line (``KeyError: 2``)."""
        if e.ok:
            return None
        failed = next((f for f in self.failures if f.run == e.run_id), None)
        if failed is not None:
            return f"{failed.line} (op '{failed.op}')"
        aborted = next((r.name for r in self.rows.values() if r.status == "aborted"), None)
        return f"aborted at op '{aborted}'" if aborted else None

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
            row.warnings = sorted([w for w in row.warnings if w.kind != e.kind] + [e],
                                  key=lambda w: rank(w.kind))
            call = row.by_thread.get(e.thread)
            if call is not None:   # about the call that thread ran last
                call[3].append(e)
            row.op_type = row.op_type or e.op_type
            if e.inputs:
                row.inputs_after = e.inputs

    def trace_ends(self) -> None:
        """A recorded run whose end is not in the trace (the program was killed, or is
        still writing it): its ops that started are unfinished, not running."""
        if self.state not in ("running", "paused"):
            return
        self.state = "unfinished"
        for row in self.rows.values():
            if row.status in ("running", "paused"):
                row.status = "unfinished"
        self.version += 1

    # -- what to look at -----------------------------------------------------------------
    def root_cause(self) -> str | None:
        """The op of this run to look at first: the first that failed, else the one
        carrying the most important diagnostic; ``None`` when there is neither."""
        failed = next((r.name for r in self.rows.values() if r.status == "error"), None)
        if failed is not None:
            return failed
        best = None
        for name in self.order:
            row = self.rows[name]
            kinds = [rank(w.kind) for w in row.warnings if w.kind != "breakpoint_cannot_fire"]
            if kinds and (best is None or min(kinds) < best[0]):
                best = (min(kinds), name)
        return best[1] if best else None

    def next_with_warnings(self, after: int) -> str | None:
        """The next op (in list order, wrapping) after index ``after`` with a diagnostic."""
        n = len(self.order)
        for k in range(1, n + 1):
            row = self.rows[self.order[(after + k) % n]]
            if row.warnings:
                return row.name
        return None

    # -- pauses --------------------------------------------------------------------------
    def mark_paused(self, name: str) -> None:
        """Show ``name`` as paused until the run moves on (``unpause``)."""
        row = self.rows.get(name)
        if row is not None and row.status not in ("error", "paused"):
            self.unpause()
            self._paused = (row, row.status)
            row.status = "paused"
            self.version += 1

    def keep_call(self, name: str, run_id, inputs, inputs_after=(), error: str = "") -> None:
        """A pause at ``name``'s error ends: the row shows that call (its inputs as given and
        as left, its error) — not another call of the op that failed meanwhile."""
        row = self.rows.get(name)
        if row is None or run_id != self.run_id:
            return
        row.inputs, row.outputs, row.inputs_after = tuple(inputs), (), tuple(inputs_after)
        row.error = error or row.error
        self.version += 1

    def unpause(self) -> None:
        """The paused op gets back the status it had (done, for a pause after it ran);
        the run goes on."""
        if self.state == "paused":
            self.state = "running"
        if self._paused is not None:
            row, status = self._paused
            self._paused = None
            if row.status == "paused":
                row.status = status
                self.version += 1

    # -- rows ----------------------------------------------------------------------------
    def _start_run(self, e) -> None:
        self.runs += 1
        self.run_id, self.run_kind = e.run_id, e.kind
        self.run_t0[e.run_id] = e.t_ns
        self.state = "running"
        self.rows, self.order = {}, []
        for name, op_type in zip(e.ops, e.op_types or ("",) * len(e.ops)):
            self._row(name, op_type, planned=True)
        for name in e.folded:
            self._row(name, "", planned=True).status = "folded"
            self.rows[name].note = "folded: stateless on constant inputs, its value is reused"
            self.rows[name].tag = "folded"
        for name, first in e.deduplicated:
            row = self._row(name, "", planned=True)
            row.status, row.note = "dedup", f"same stateless call as '{first}': ran once for both"
            row.tag = f"= {first}"
        for name, row in self.rows.items():
            row.source = self.sources.get(name, "")
            row.producers = self.producers.get(name, ())
            row.warnings = sorted(self._standing.get(name, ()), key=lambda w: rank(w.kind))

    def _row(self, name: str, op_type: str, planned: bool = False) -> OpRow:
        row = self.rows.get(name)
        if op_type:
            self.types[name] = op_type
        if row is None:
            row = self.rows[name] = OpRow(name, op_type or self.types.get(name, ""))
            row.in_plan = planned
            row.warnings = sorted(self._standing.get(name, ()), key=lambda w: rank(w.kind))
            if planned or not any(r.in_plan for r in self.rows.values()):
                self.order.append(name)
            else:   # not listed at its run's start: a constant folded now, before the rest
                row.tag = "folded now"
                at = next((i for i, n in enumerate(self.order) if self.rows[n].in_plan
                           and self.rows[n].status == "pending"), len(self.order))
                self.order.insert(at, name)
        elif op_type and not row.op_type:
            row.op_type = op_type
        return row

    def _child(self, e) -> None:
        if type(e) is ev.OpStart:
            self.types.setdefault(e.op, e.op_type)
        parent = self.rows.get(e.parent)
        if parent is None:
            return
        if type(e) is ev.OpEnd or type(e) is PendingOpEnd:
            out = settle(e.outputs[0]).short() if e.outputs else ""
            parent.children.append(f"{e.op} ({e.op_type}) {duration_text(e.duration_ns)} {out}")
            del parent.children[:-50]
        elif type(e) is ev.OpError:
            parent.children.append(f"{e.op} ({e.op_type}) ERROR {e.message[:80]}")


def _row_duration(row: OpRow) -> str:
    if row.under_pdb:
        return "[ran under pdb: no duration]"
    text = duration_text(row.duration_ns or 0)
    return f"{text} (+{duration_text(row.waited_ns)} paused)" if row.waited_ns else text
