"""PfdApp: the debugger UI — ops, live log, inspector, breakpoints, status, keys.

The user's script (or the demo graph) runs on a worker thread under the
debugger; events arrive through the bridge and are applied on a timer in
batches. Widgets hold display state only; this class routes.
"""
from __future__ import annotations

import asyncio
import contextlib
import io
import os
import threading
import time

from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding

from pyfunc_debug.debug.frontend import add_breakpoints
from pyfunc_debug.script import abort_line

from .bridge import Bridge, Printed
from .commands import DebugCommands
from .interrupts import forward_sigint_to
from .layout import compose_panes, fit_footer, title_panes
from .messages import OpSelected
from .model import RunModel, format_event
from .screens.condition import ConditionScreen
from .screens.export import ExportScreen
from .widgets.breakpoint_list import BreakpointList
from .widgets.event_log import EventLog
from .widgets.inspector import Inspector, Values
from .widgets.op_list import OpList
from .widgets.status_bar import StatusBar

__all__ = ["PfdApp"]

BATCH = 20_000      # events applied per tick at most (keeps the UI responsive)
TICK = 0.05


class PfdApp(App):
    """Live debugging of a target (``target()`` runs on a worker thread)."""

    CSS_PATH = "app.tcss"
    TITLE = "pyfunc-debug"
    COMMANDS = {DebugCommands}     # ours first, then Textual's (it serves both)
    BINDINGS = [
        Binding("c", "resume('continue')", "continue"),
        Binding("n", "resume('step')", "next op"),
        Binding("s", "step_into", "step into"),
        Binding("p", "post_mortem", "post-mortem"),
        Binding("b", "toggle_breakpoint", "breakpoint"),
        Binding("e", "toggle_error_break", "on error"),
        Binding("N", "toggle_nan_break", "on NaN"),
        Binding("space", "interrupt", "pause", show=False),
        Binding("x", "export", "export"),
        Binding("q", "quit", "quit"),
        Binding("v", "cycle_value", "next value", show=False),
        Binding("w", "next_warning", "next warning", show=False),
        Binding("ctrl+c", "ctrl_c", "pause/quit", show=False, priority=True),
    ]

    def __init__(self, target=None, title: str = "", breaks=(), break_on=("error",),
                 suspend=None, pdb_io=None, show_timings: bool = True,
                 guard_mutation: bool = False, link=None):
        super().__init__()
        self.model = RunModel()
        self.target = target
        self.sub_title = title
        self.show_timings = show_timings
        self.pause = None
        self.message = ""
        self.worker_thread: threading.Thread | None = None
        self.target_status = None     # what target() returned (an exit status or Outcome)
        self.target_done = False
        self.ctrl_c_pressed = False
        self.exported: list = []       # (path, events) of each trace written with x
        self._suspend = suspend or self.suspend
        self._suspended = False      # while pdb owns the terminal, nothing may redraw
        self._deferred_pause = None
        self._ticker = None
        self._rate, self._rate_t, self._rate_n = None, time.perf_counter(), 0
        # ``link``: a remote process (pyfunc-debug attach); else a debugger in this one
        self.bridge = Bridge(self._post_pause, self._request_suspend, link, pdb_io,
                             guard_mutation)
        add_breakpoints(self.bridge.link, breaks, break_on)

    # -- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield from compose_panes(self.model, self._breakpoint_ops)

    def on_resize(self, event) -> None:
        fit_footer(self, event.size.width)

    def on_mount(self) -> None:
        fit_footer(self, self.size.width)
        title_panes(self, "ops of the current run", "events", "breakpoints")
        self._refresh_breakpoints()
        self._ticker = self.set_interval(TICK, self.tick)
        self.begin_capture_print(self.bridge.print_sink)   # in order with the events
        _no_fileno(self)
        if self.target is not None:
            self.worker_thread = threading.Thread(target=self._work, name="pfd-worker", daemon=True)
            self.worker_thread.start()
        self._update_status()

    # -- worker thread --------------------------------------------------------------------
    def _work(self) -> None:
        try:
            status = self.bridge.run(self.target)
        except BaseException as e:  # never let the worker's failure take the app down
            status = e
        self.target_status = status   # also when the app has closed meanwhile
        with contextlib.suppress(Exception):
            self.call_from_thread(self._target_done, status)

    def _target_done(self, status) -> None:
        self.tick()
        self.target_status = status
        self.target_done = True
        if isinstance(status, BaseException) and abort_line(status):
            self.message = f"{abort_line(status)} — q to quit, x to export"
            self.model.state = "aborted"
        elif isinstance(status, BaseException):   # the target's own failure (not a script's)
            self.message = f"the target ended with {type(status).__name__}: {status}"[:200]
            self.model.state = "failed"
        else:
            code = exit_status(status)
            if code:
                self.message = f"the script ended: {_ending(status)} — q to quit, x to export"
                self.model.state = "failed"
            else:
                self.message = "done — q to quit, x to export the trace"
                if self.model.state in ("running", "paused", "idle"):
                    self.model.state = "finished"
        self._update_status()

    def _post_pause(self, pause) -> None:
        self.call_from_thread(self.on_pause_arrived, pause)

    def _request_suspend(self) -> None:
        self.call_from_thread(lambda: self.run_worker(self._hold_suspended(), exclusive=False))

    async def _hold_suspended(self) -> None:
        """pdb started by user code (``breakpoint()``): stay suspended until it ends."""
        bridge = self.bridge
        bridge.pdb_done.clear()
        try:
            with self._pdb_owns_terminal():
                bridge.app_suspended.set()
                await asyncio.to_thread(bridge.pdb_done.wait)
        except SuspendNotSupported:
            bridge.app_suspended.set()
            self.message = "breakpoint() reached, but this terminal cannot be suspended for pdb"
            await asyncio.to_thread(bridge.pdb_done.wait)

    # -- applying events -----------------------------------------------------------------
    @contextlib.contextmanager
    def _pdb_owns_terminal(self):
        """Suspend the app for pdb. Nothing may redraw meanwhile: the driver's writer is
        stopped, so its queue would fill and block the event loop. Pauses that arrive
        meanwhile are shown after the app is back."""
        with self._suspend(), forward_sigint_to(self.bridge.link.interrupt_pdb):
            self._suspended = True
            try:
                yield
            finally:
                self._suspended = False
        pause, self._deferred_pause = self._deferred_pause, None
        self.refresh(layout=True)
        if pause is not None:
            self.on_pause_arrived(pause)

    def stop_ticking(self) -> None:
        """Stop applying events (the app is closing, or a test wants a still screen)."""
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def on_unmount(self) -> None:
        self.stop_ticking()

    def tick(self) -> None:
        if self._suspended or self._ticker is None:
            return
        events = self.bridge.drain(BATCH)
        if not events:
            self._update_status()
            return
        apply = self.model.apply
        log = self.query_one(EventLog)
        timings = self.show_timings
        lines = []
        for e in events:
            if type(e) is Printed:
                lines += log.printed(e.text, e.stderr)
            else:
                apply(e)
                lines.append(format_event(e, timings))
        log.add(lines)
        ops = self.query_one(OpList)
        ops.sync()
        self._rate_n += len(events)
        if self.pause is None:
            self._show_selected(ops.selected)
        self._refresh_breakpoints()
        self._update_status()

    def _update_status(self) -> None:
        now = time.perf_counter()
        if now - self._rate_t >= 1.0:
            self._rate = self._rate_n / (now - self._rate_t)
            self._rate_t, self._rate_n = now, 0
        m = self.model
        state = m.state if self.pause is None else "paused"
        self.query_one(StatusBar).show(state, m.runs, m.ops_done, m.ops_total, m.events,
                                       self._rate if self.show_timings else None, self.message,
                                       len(m.diagnostics))

    def _show_selected(self, name) -> None:
        row = self.model.rows.get(name) if name else None
        pause = self.pause if self.pause is not None and name == self.pause.op_name else None
        values, from_run = None, None
        if pause is not None:
            values = Values(_full(pause, "inputs"), _full(pause, "outputs"), _returned(pause))
        elif name in self.bridge.latest_values:
            run, ins, outs = self.bridge.latest_values[name]
            after = self.bridge.inputs_after.get(name)
            values = Values(ins, outs, after=after[1] if after and after[0] == run else None)
            if run != self.model.run_id:
                from_run = run      # an earlier run's values: labelled as such
        self.query_one(Inspector).show(row, values, pause, _relative, self.show_timings,
                                       from_run=from_run)

    def action_cycle_value(self) -> None:
        self.query_one(Inspector).action_cycle_value()

    def action_next_warning(self) -> None:
        """w: select the next op carrying a diagnostic (wrapping around)."""
        ops = self.query_one(OpList)
        name = self.model.next_with_warnings(ops.cursor)
        if name is None:
            self.notify("No op of this run carries a diagnostic.", severity="information")
            return
        ops.select(name)
        self._show_selected(name)

    def on_op_selected(self, message: OpSelected) -> None:
        self._show_selected(message.name)

    # -- pauses ------------------------------------------------------------------------------
    def on_pause_arrived(self, pause) -> None:
        if self._suspended:
            self._deferred_pause = pause
            return
        self.tick()
        self.pause = pause
        self.ctrl_c_pressed = False
        name = pause.op_name if pause.parent is None else pause.parent
        self.model.mark_paused(name)
        ops = self.query_one(OpList)
        ops.sync()
        ops.select(name)
        where = f" (inside {pause.parent})" if pause.parent else ""
        self.message = f"{pause.when} {pause.op_name}{where} — keys: " + \
            " ".join(_KEY_OF[a] for a in pause.actions)
        self._show_selected(name)
        self._update_status()

    def _answer(self, action: str) -> None:
        self.pause = None
        self.message = ""
        self.model.unpause()
        self.bridge.answer(action)
        self.query_one(OpList).sync()
        self._update_status()

    def action_resume(self, action: str) -> None:
        if self.pause is None:
            self.notify("Not paused. (space pauses at the next op.)", severity="warning")
            return
        self._answer(action)

    async def action_step_into(self) -> None:
        await self._pdb_action("step_into", "s steps into py_func / numpy_function / "
                               "py_function ops, before they run")

    async def action_post_mortem(self) -> None:
        await self._pdb_action("post_mortem", "p works at an error pause")

    async def _pdb_action(self, action: str, hint: str) -> None:
        pause = self.pause
        if pause is None or action not in pause.actions:
            self.notify(f"Not possible here: {hint}.", severity="warning")
            return
        bridge = self.bridge
        bridge.pdb_done.clear()
        try:
            with self._pdb_owns_terminal():
                bridge.app_suspended.set()
                self.pause = None
                self.message = ""
                bridge.answer(action)
                while not await asyncio.to_thread(bridge.pdb_done.wait, 0.5):
                    if self.worker_thread is not None and not self.worker_thread.is_alive():
                        break
        except SuspendNotSupported:
            self.message = "cannot drop into pdb here: this terminal cannot be suspended"
            self._update_status()

    def action_interrupt(self) -> None:
        if self.pause is None:
            self.bridge.interrupt()
            self.message = "pausing at the next op…"

    # -- breakpoints ---------------------------------------------------------------------------
    def _breakpoint_ops(self) -> set:
        return {bp.op for bp in self.bridge.link.breakpoints if bp.op and bp.enabled}

    def _refresh_breakpoints(self) -> None:
        notes = [w.message for (op, kind), w in self.model.diagnostics.items()
                 if kind == "breakpoint_cannot_fire"]
        self.query_one(BreakpointList).show(self.bridge.link.breakpoints, notes)

    def _toggle(self, match, make) -> None:
        link = self.bridge.link
        found = next((bp for bp in link.breakpoints if match(bp)), None)
        if found is not None:
            link.remove(found.id)
        else:
            make(link)
        self._refresh_breakpoints()
        self.model.version += 1
        self.query_one(OpList).sync()

    def action_toggle_breakpoint(self) -> None:
        name = self.query_one(OpList).selected
        if name is None:
            self.notify("No op selected.", severity="warning")
            return
        self._toggle(lambda bp: bp.op == name and bp.when is None and not bp.on_error,
                     lambda dbg: dbg.break_on(op=name))

    def action_toggle_error_break(self) -> None:
        self._toggle(lambda bp: bp.on_error and bp.op is None, lambda d: d.break_on(on_error=True))

    def action_toggle_nan_break(self) -> None:
        self._toggle(lambda bp: bp.when == "nan_producer",
                     lambda d: d.break_on(when="nan_producer"))

    def add_condition(self, expr: str) -> None:
        try:
            self.bridge.link.break_on(when=expr)
        except ValueError as e:
            self.notify(str(e), severity="error")
        self._refresh_breakpoints()

    def ask_condition(self) -> None:
        """The palette's "Break when…": a dialog that checks the condition as it is typed."""
        self.push_screen(ConditionScreen(), lambda expr: expr and self.add_condition(expr))

    def select_op(self, name: str) -> None:
        self.query_one(OpList).select(name)

    # -- export and quit --------------------------------------------------------------------------
    def action_export(self) -> None:
        def write(path):
            if not path:
                return
            from pyfunc_debug.trace.recorder import Trace
            self.tick()
            tr = Trace(capture="summary")
            tr.events = list(self.bridge.recorded)
            try:
                tr.save(path)
                self.message = f"wrote {len(tr.events):,} events to {path}"
                self.exported.append((path, len(tr.events)))
            except (OSError, ValueError) as e:
                self.message = f"export failed: {e}"
            self._update_status()
        self.push_screen(ExportScreen(), write)

    async def action_quit(self) -> None:
        """q, ctrl+q and the palette's Quit: abort a paused or running run, then exit."""
        self.bridge.quit()
        self.pause = None
        self.exit(0)

    async def action_ctrl_c(self) -> None:
        """Ctrl+C: while the script runs, pause at the next op (as PuDB breaks in);
        pressed again, or while paused or finished, quit (exit status 130)."""
        running = self.worker_thread is not None and self.worker_thread.is_alive()
        if running and self.pause is None and not self.ctrl_c_pressed:
            self.ctrl_c_pressed = True
            self.bridge.interrupt()
            self.message = "Ctrl+C: pausing at the next op… (Ctrl+C again quits)"
            self._update_status()
            return
        self.bridge.quit(interrupted=True)
        self.pause = None
        self.exit(return_code=130)


_KEY_OF = {"continue": "c", "step": "n", "step_into": "s", "post_mortem": "p", "abort": "q"}


def exit_status(result) -> int:
    """The exit status of what a target returned (an int, or a script's ``Outcome``)."""
    status = getattr(result, "status", result)
    return status if isinstance(status, int) else 0


def _ending(result) -> str:
    error = getattr(result, "error", None)
    if error is not None and abort_line(error):
        return abort_line(error)
    if error is not None:
        return f"{type(error).__name__} (exit status {exit_status(result)})"
    return f"exit status {exit_status(result)}"


def _full(pause, which: str) -> list:
    """A pause's values (a remote pause fetches those it did not carry)."""
    values = pause.outputs if which == "outputs" else pause.inputs
    return [pause.value(which, i) for i in range(len(values or ()))]


def _returned(pause):
    """What a wrapped function returned, when the op rejected it (a dtype error)."""
    error = pause.error
    return getattr(error, "returned", None) if error is not None else None


def _relative(source: str) -> str:
    path, sep, where = source.partition(" (on ")  # "(on worker ADDRESS pid N)": a remote op
    file, _, line = path.rpartition(":")
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return source
    return (f"{rel}:{line}" if not rel.startswith("..") else path) + sep + where


def _no_fileno(app) -> None:
    """The script's ``sys.stdout``/``sys.stderr`` are Textual's print captures, whose
    ``fileno()`` is -1: code that passes it on (multiprocessing's resource tracker, so
    a script that starts a Dask ``LocalCluster``) fails with "bad value(s) in
    fds_to_keep". Saying "no file descriptor" the usual way lets it carry on."""
    def fileno() -> int:
        raise io.UnsupportedOperation("the debugger's UI captures this stream: no fileno")
    for name in ("_capture_stdout", "_capture_stderr"):
        capture = getattr(app, name, None)
        if capture is not None:
            capture.fileno = fileno
