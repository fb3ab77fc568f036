"""ReplayApp (``pyfunc-debug view TRACE.jsonl``): step through a recorded trace.

The same op list, inspector and log as the live app, driven by a cursor over
the recorded events instead of a running graph: ←/→ one event, [/] one run,
e the next error or pause, home/end; s / r replay the selected op's captured faulty
call under pdb / with the current source (``fault_replay``); x exports the trace.
"""
from __future__ import annotations

import bisect

from textual.app import App, ComposeResult
from textual.binding import Binding

from pyfunc_debug import events as ev
from pyfunc_debug.trace.failures import original_line
from pyfunc_debug.trace.jsonl import load_trace

from . import fault_replay
from .commands import DebugCommands
from .layout import compose_panes, fit_footer, title_panes
from .log_text import format_event
from .messages import OpSelected
from .model import RunModel
from .screens.export import ExportScreen
from .values import relative_source
from .widgets.breakpoint_list import BreakpointList
from .widgets.event_log import EventLog
from .widgets.inspector import Inspector, Values
from .widgets.op_list import OpList
from .widgets.status_bar import StatusBar

__all__ = ["ReplayApp"]

LOG_WINDOW = 300    # events shown in the log before the cursor (a screenful or more)


class ReplayApp(App):
    """Replays ``path``; the state shown is the trace after its first ``position`` events."""

    CSS_PATH = "app.tcss"
    TITLE = "pyfunc-debug view"
    COMMANDS = {DebugCommands}     # export and go to op first, then Textual's
    BINDINGS = [
        # priority: the focused op list (a ScrollView) would take ←/→/home/end to scroll
        Binding("right,l", "move(1)", "next event", priority=True),
        Binding("left,h", "move(-1)", "prev event", priority=True),
        Binding("right_square_bracket", "run(1)", "next run"),
        Binding("left_square_bracket", "run(-1)", "prev run"),
        Binding("e", "next_problem", "next error/pause"),
        Binding("s", "replay_pdb", "replay in pdb"),     # a captured faulty call (fault_replay)
        Binding("r", "rerun", "re-run"),
        Binding("x", "export", "export"),
        Binding("home", "jump(0)", "start", show=False, priority=True),
        Binding("end", "jump(-1)", "end", show=False, priority=True),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, path: str, position: int | None = None, show_timings: bool = True,
                 trace=None, note: str = ""):
        super().__init__()
        self.note = note          # e.g. where the trace first differs from another one
        self.show_timings = show_timings
        self.path = path
        self.trace = load_trace(path) if trace is None else trace   # loaded once
        self.events = self.trace if isinstance(self.trace, list) else list(self.trace)
        self.sub_title = f"{path} — {len(self.events):,} events"
        # indices computed once: every move is a bisect, whatever the trace's length
        self._run_starts = [i for i, e in enumerate(self.events) if type(e) is ev.RunStart]
        self._hits = [i for i, e in enumerate(self.events) if type(e) is ev.BreakpointHit]
        self.position = len(self.events) if position is None else position
        self._opened_at_end = position is None
        self._problem_index = None
        self.model = RunModel()

    def compose(self) -> ComposeResult:
        yield from compose_panes(self.model, lambda: set())

    def on_resize(self, event) -> None:
        fit_footer(self, event.size.width)

    def on_mount(self) -> None:
        fit_footer(self, self.size.width)
        title_panes(self, "ops of the run at the cursor", "events up to the cursor",
                    "pauses recorded")
        self._goto(self.position)
        if self.note:
            self.notify(self.note, timeout=10)
        earlier = self._earlier_problem_note() if self._opened_at_end else ""
        if earlier:
            self.notify(earlier, timeout=15)

    # -- moving the cursor ---------------------------------------------------------------
    def _goto(self, position: int) -> None:
        position = max(0, min(position, len(self.events)))
        self.position = position
        k = bisect.bisect_right(self._run_starts, position - 1) - 1
        start = self._run_starts[k] if k >= 0 else 0
        model = self.model
        model.__init__()
        for e in self.events[start:position]:
            model.apply(e)
        model.events = position
        model.runs = k + 1
        if position == len(self.events):
            model.trace_ends()
        log = self.query_one(EventLog)
        log.clear()
        log.add(self._lines(max(0, position - LOG_WINDOW), position))
        ops = self.query_one(OpList)
        ops.sync()
        current = self.events[position - 1] if position else None
        if current is not None and getattr(current, "op", "") and current.parent is None:
            ops.select(current.op)
        elif type(current) is ev.RunEnd and model.root_cause() is not None:
            ops.select(model.root_cause())   # a run's end: the op to look at first
        self._show(ops.selected if model.rows else None)
        last = bisect.bisect_left(self._hits, position)
        hits = [self.events[i] for i in self._hits[max(0, last - 20):last]]
        self.query_one(BreakpointList).update(
            "\n".join(f"run {h.run_id}: {h.when} {h.op} {h.breakpoint}" for h in hits)
            or "no pauses recorded before the cursor")
        what = f"event {position:,}/{len(self.events):,}"
        if current is not None:
            what += f": {type(current).__name__} {getattr(current, 'op', '')}"
        if self.note:
            what += f"  │  {self.note}"
        self.query_one(StatusBar).show(f"replay {model.state}", model.run_id or 0, model.ops_done,
                                       model.ops_total, position, None, what)

    def _show(self, name) -> None:
        row = self.model.rows.get(name) if name else None
        values = None
        if row is not None:
            for e in reversed(self.events[:self.position]):
                if type(e) is ev.OpEnd and e.op == name and e.parent is None:
                    ins = [s.value for s in e.inputs]
                    outs = [s.value for s in e.outputs]
                    if any(v is not None for v in ins + outs):
                        values = Values(ins, outs)
                    break
                if type(e) is ev.RunStart:
                    break
        reason = fault_replay.captured_note(self, name) if row is not None and values is None \
            else ""
        self.query_one(Inspector).show(row, values, None, relative_source, self.show_timings,
                                       live=False, reason=reason)

    def _lines(self, start: int, end: int) -> list[str]:
        """Log lines of events ``start:end``; a failed run's end says the user's exception
        line (``KeyError: 2``), as the live log does."""
        failed: dict = {}
        lines = []
        for e in self.events[start:end]:
            ending = None
            if type(e) is ev.OpError and e.parent is None:
                failed.setdefault(e.run_id, f"{original_line(e.message)} (op '{e.op}')")
            elif type(e) is ev.RunEnd and not e.ok:
                ending = failed.get(e.run_id)
            lines.append(format_event(e, self.show_timings, ending=ending))
        return lines

    def on_op_selected(self, message: OpSelected) -> None:
        self._show(message.name)

    def select_op(self, name: str) -> None:
        """The palette's "Go to op": select it in the op list (of the run at the cursor)."""
        self.query_one(OpList).select(name)
        self._show(name)

    def action_export(self) -> None:
        """The whole trace as a Chrome trace (.json, for Perfetto) or a .jsonl, as ``x``
        writes a live session's."""
        def write(path):
            if not path:
                return
            from pyfunc_debug.trace.recorder import Trace
            tr = Trace(capture="summary")
            tr.events = list(self.events)
            try:
                tr.save(path)
            except (OSError, ValueError) as e:
                self.notify(f"export to {path} failed: {e}", title="export failed",
                            severity="error", timeout=15)
                return
            self.notify(f"wrote {len(tr.events):,} events to {path}", timeout=10)
        self.push_screen(ExportScreen(), write)

    def action_move(self, delta: int) -> None:
        self._goto(self.position + delta)

    def action_jump(self, where: int) -> None:
        self._goto(len(self.events) if where < 0 else where)

    def action_run(self, delta: int) -> None:
        k = bisect.bisect_right(self._run_starts, self.position - 1) - 1 + delta
        if 0 <= k < len(self._run_starts):
            # show the whole run: up to the next run's start
            end = self._run_starts[k + 1] if k + 1 < len(self._run_starts) else len(self.events)
            self._goto(end)
        elif k >= len(self._run_starts):
            self._goto(len(self.events))

    def action_replay_pdb(self) -> None:
        fault_replay.replay_under_pdb(self)

    def action_rerun(self) -> None:
        fault_replay.rerun(self)

    def _problems(self) -> list:
        """Indices of the events a user looks for first: op errors, pauses, warnings."""
        if self._problem_index is None:
            kinds = (ev.OpError, ev.BreakpointHit, ev.Warning)
            self._problem_index = [i for i, e in enumerate(self.events)
                                   if type(e) in kinds and getattr(e, "parent", None) is None]
        return self._problem_index

    def _earlier_problem_note(self) -> str:
        """Opened at the end: name the first problem when the last run shows none of it."""
        found = self._problems()
        last_run = self._run_starts[-1] if self._run_starts else 0
        if not found or found[-1] >= last_run:
            return ""
        e = self.events[found[0]]
        what = {ev.OpError: "an error", ev.BreakpointHit: "a pause",
                ev.Warning: f"a {getattr(e, 'kind', '') or 'warning'} warning"}[type(e)]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return (f"run {e.run_id} had {what} at op '{e.op}'{more}: e goes to it "
                f"(the last run had none)")

    def action_next_problem(self) -> None:
        found = self._problems()
        k = bisect.bisect_left(found, self.position)
        if k < len(found):
            self._goto(found[k] + 1)
        elif found:
            self._goto(found[0] + 1)
            self.notify("No error, pause or warning after the cursor: back to the first one.")
        else:
            self.notify("No error, pause or warning in this trace.")
