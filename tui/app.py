"""PfdApp: the debugger UI — ops, live log, inspector, breakpoints, status, keys.

The user's script (or the demo graph) runs on a worker thread under the
debugger; events arrive through the bridge and are applied on a timer in
batches. Widgets hold display state only; this class routes. Its keys for pauses
and pdb are in ``app_pauses``, for breakpoints and export in ``app_actions``.
"""
from __future__ import annotations

import bdb
import contextlib
import gc
import io
import os
import threading
import time

from textual.app import App, ComposeResult
from textual.binding import Binding

from pyfunc_debug import events as ev

from .app_actions import BreakpointActions
from .app_pauses import PauseActions
from .bridge import PSEUDO, RECORD_CHUNK, Bridge, Printed
from .commands import DebugCommands
from .exit_summary import ending, exit_status
from .layout import compose_panes, fit_footer, title_panes
from .log_text import format_event
from .messages import OpSelected
from .model import RunModel
from .values import relative_source, values_for
from .widgets.event_log import EventLog
from .widgets.inspector import Inspector
from .widgets.op_list import OpList
from .widgets.status_bar import StatusBar

__all__ = ["PfdApp", "exit_status"]

BATCH = 20_000      # events applied per tick at most (keeps the UI responsive)
QUIT_WAIT = 1.0     # seconds a run aborted from pdb gets to end before the app leaves
# Seconds between applying queued events and redrawing: 4 times a second, the least the
# UI promises. Drawing holds the GIL the program's callbacks need, and each callback that
# asks for it meanwhile waits up to the interpreter's switch interval (5 ms): 20 frames a
# second made a tf.data pipeline 5.5x slower than plain; 5 a second 2.6x; with rows, log
# lines and the header redrawn only when changed, 2.2x (without any tick 1.4x: Textual's
# frame, which redraws every pane the changed lines span, is the cost). A pause, the run's
# end, a quit and an export apply everything at once.
TICK = 0.25
# While a run goes on, the inspector follows the selected op every this many ticks (once a
# second): redrawing its values and tables costs more than the rest of the screen. Choosing
# an op, a pause and the run's end show it at once.
INSPECT_TICKS = 4
FIRST_SCREEN = 1.0  # seconds the program waits at most for the first screen to be drawn


class PfdApp(PauseActions, BreakpointActions, App):
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
        self.user_chose = False        # the user selected an op since the last pause
        self.leaving = False           # quit: the run is aborted, the app on its way out
        self._exiting = False
        self._exit_timer = None
        self.exported: list = []       # (path, events) of each trace written with x
        self._suspend = suspend or self.suspend
        self._suspended = False      # while pdb owns the terminal, nothing may redraw
        self._deferred_pause = None
        self._ticker = None
        self._first_screen = threading.Event()
        self._ticks_since_shown = 0   # ticks since the inspector last showed the selected op
        self._inspector_behind = False   # events came since it did
        self._inspected = None           # the op it shows
        self._rate, self._rate_t, self._rate_n = None, time.perf_counter(), 0
        # ``link``: a remote process (pyfunc-debug attach); else a debugger in this one
        self.bridge = Bridge(self._post_pause, self._request_suspend, link, pdb_io,
                             guard_mutation)
        if breaks or break_on:
            # imported here (and the script runner below): not needed to import the UI,
            # nor by ``view`` and ``attach``
            from pyfunc_debug.debug.frontend import add_breakpoints
            add_breakpoints(self.bridge.link, breaks, break_on)

    # -- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield from compose_panes(self.model, self._breakpoint_ops)

    def on_resize(self, event) -> None:
        fit_footer(self, event.size.width)

    def on_mount(self) -> None:
        fit_footer(self, self.size.width)
        # the log formats an op's start or end only when it shows it (``RunModel.entry``)
        self.query_one(EventLog).formatter = lambda e: format_event(e, self.show_timings)
        title_panes(self, "ops of the current run", "events", "breakpoints")
        self._refresh_breakpoints()
        self._ticker = self.set_interval(TICK, self.tick)
        self.begin_capture_print(self.bridge.print_sink)   # in order with the events
        _no_fileno(self)
        if self.target is not None:
            self.worker_thread = threading.Thread(target=self._work, name="pfd-worker", daemon=True)
            self.worker_thread.start()
            self.call_after_refresh(self._screen_drawn, 2)
        self._update_status()

    def _screen_drawn(self, frames: int) -> None:
        """The program may start once the first screen is drawn and has settled: the
        footer redraws itself once more for the keys of the focused pane."""
        if frames > 1:
            self.call_after_refresh(self._screen_drawn, frames - 1)
        else:
            self._first_screen.set()

    # -- worker thread --------------------------------------------------------------------
    def _work(self) -> None:
        # the program starts once the first screen is drawn (at most FIRST_SCREEN later):
        # drawing it (styles, layout, every pane) holds the GIL the program needs
        self._first_screen.wait(FIRST_SCREEN)
        # The app's start-up made many long-lived objects (widgets, styles, caches), which
        # count towards the collector's next full pass: it would come during the program's
        # run and walk the whole heap there (0.23 s with TensorFlow loaded, measured). Done
        # now, before the program starts, the program's own passes come as they would.
        _full_collection()
        try:
            status = self.bridge.run(self.target)
        except BaseException as e:  # never let the worker's failure take the app down
            status = e
        self.target_status = status   # also when the app has closed meanwhile
        with contextlib.suppress(Exception):
            self.call_from_thread(self._target_done, status)

    def _target_done(self, status) -> None:
        if self._suspended and not (self.leaving or self._pdb_quit(status)):
            # a pdb session just ended and the app is not back yet: its events are still
            # queued (tick waits), and "no op ran" would be said of them. (A quit leaves at
            # once, below, without drawing again.)
            self.set_timer(0.05, lambda: self._target_done(status))
            return
        self.tick()
        self.target_status = status
        self.target_done = True
        self._refresh_breakpoints()   # now it says which breakpoints matched no op
        if self._quit_in_pdb() or self.leaving:
            self._leave(at_once=False)   # a quit that waited for the run to end
            return
        from pyfunc_debug.script import abort_line   # see __init__
        stale = self.pause
        if stale is not None:   # another thread's failure ended the program: none to answer
            self.pause = None
            self.model.unpause()
        paused = f" while {stale.op_name} was paused" if stale is not None else ""
        nothing = ""
        if not self.model.events and self.bridge.debugger is not None:   # ran no op: why
            from pyfunc_debug.framework_options import nothing_recorded
            self.query_one(Inspector).explain(f"Nothing was recorded: {nothing_recorded()}.")
            nothing = ", no op ran (see the inspector)"
        error = getattr(status, "error", status)
        if isinstance(error, BaseException) and abort_line(error):
            self.message = f"{abort_line(error)} — q to quit, x to export"
            self.model.state = "aborted"
        elif isinstance(status, BaseException):   # the target's own failure (not a script's)
            self.message = f"the target ended with {type(status).__name__}: {status}"[:200]
            self.model.state = "failed"
        else:
            code = exit_status(status)
            remote = getattr(self.bridge.link, "target_status", None)   # attach: the target's
            if remote:
                self.message = f"the target ended with exit status {remote}{paused} — q to " \
                    "quit, x to export"
                self.model.state = "failed"
            elif code:
                self.message = f"the script ended{paused}: {ending(status, self.model)} — " \
                    "q to quit, x to export"
                self.model.state = "failed"
            else:
                self.message = f"done{paused}{nothing} — q to quit, x to export the trace"
                if self.model.state in ("running", "paused", "idle"):
                    self.model.state = "finished"
        self._show_root_cause()
        self._catch_up_inspector()
        self._update_status()

    def _post_pause(self, pause) -> None:
        self.call_from_thread(self.on_pause_arrived, pause)

    # -- applying events -----------------------------------------------------------------
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
        self._quit_in_pdb()
        events = self.bridge.drain(BATCH)
        if not events:
            self._catch_up_inspector()   # the events stopped: it shows their last state
            self._update_status()
            self.bridge.settle_record(RECORD_CHUNK)   # work left while the program ran
            return
        model = self.model
        apply, entry = model.apply, model.entry
        log = self.query_one(EventLog)
        timings = self.show_timings
        lines = []
        ended = False
        for e in events:
            cls = type(e)
            if cls is Printed:
                lines += log.printed(e.text, e.stderr)
                continue
            apply(e)
            if cls not in PSEUDO:
                lines.append(entry(e, timings))
                ended = ended or cls is ev.RunEnd
        log.add(lines)
        ops = self.query_one(OpList)
        ops.sync()
        self._rate_n += len(events)
        if ended:
            self._show_root_cause()
        self._inspector_behind = True
        self._ticks_since_shown += 1
        if ended or self._ticks_since_shown >= INSPECT_TICKS or ops.selected != self._inspected:
            self._catch_up_inspector()
        elif self.pause is None and ops.selected:
            self.query_one(Inspector).follow(model.rows.get(ops.selected), relative_source,
                                             self.show_timings)
        self._refresh_breakpoints()
        self._update_status()

    def _show_root_cause(self) -> None:
        """A run ended: select the op to look at first (its failure or most important
        diagnostic is at the top of the inspector), unless the user chose one meanwhile."""
        if self.user_chose or self.pause is not None:
            return
        name = self.model.root_cause()
        if name is not None:
            self.query_one(OpList).select(name)
            self._show_selected(name)

    def _update_status(self) -> None:
        now = time.perf_counter()
        if now - self._rate_t >= 1.0:
            self._rate = self._rate_n / (now - self._rate_t)
            self._rate_t, self._rate_n = now, 0
        m = self.model
        state = m.state if self.pause is None else "paused"
        rate = self._rate if self.show_timings and state == "running" else None   # else 0
        # the run's id, as the log, the pauses and the console say it (an attached client
        # or a pytest process saw other runs first: a count here differed from them)
        self.query_one(StatusBar).show(state, m.run_id or 0, m.ops_done, m.ops_total, m.events,
                                       rate, self.message,
                                       len(m.diagnostics), m.ops_extra, self._warnings_from())

    def _warnings_from(self) -> str:
        """"" when an op of this run carries a diagnostic (w finds it), else the runs
        the diagnostics came in ("run 2", "runs 1–4")."""
        m = self.model
        if not m.diagnostics or any(r.warnings for r in m.rows.values()):
            return ""
        runs = sorted({w.run_id for w in m.diagnostics.values()} - {None})
        if not runs:
            return ""
        return f"run {runs[0]}" if len(runs) == 1 else f"runs {runs[0]}–{runs[-1]}"

    def _catch_up_inspector(self) -> None:
        """Show the selected op's latest state, if events came since the inspector did
        (a pause shows its own op: it is not replaced)."""
        if self._inspector_behind and self.pause is None:
            self._show_selected(self.query_one(OpList).selected)

    def _inspect_next_tick(self) -> None:
        """A pause ended: the next tick shows the selected op as it is now."""
        self._inspector_behind, self._ticks_since_shown = True, INSPECT_TICKS

    def _show_selected(self, name) -> None:
        self._ticks_since_shown, self._inspector_behind, self._inspected = 0, False, name
        row = self.model.rows.get(name) if name else None
        pause = self.pause
        if pause is not None and name not in (pause.op_name, pause.parent):
            pause = None
        values, from_run = values_for(self.bridge, self.model, name, pause) if row else (None,
                                                                                          None)
        self.query_one(Inspector).show(row, values, pause, relative_source, self.show_timings,
                                       from_run=from_run,
                                       streamed=self.bridge.link.streams_values,
                                       remote=self.bridge.link.remote)

    def action_cycle_value(self) -> None:
        self.query_one(Inspector).action_cycle_value()

    def action_next_warning(self) -> None:
        """w: select the next op carrying a diagnostic (wrapping around)."""
        ops = self.query_one(OpList)
        name = self.model.next_with_warnings(ops.cursor)
        if name is None:
            runs = self._warnings_from()
            earlier = f" (the warnings came in {runs}; they are listed when the UI closes)" \
                if runs else ""
            self.notify(f"No op of this run carries a diagnostic{earlier}.",
                        severity="information")
            return
        ops.select(name)
        self.user_chose = True
        self._show_selected(name)

    def on_op_selected(self, message: OpSelected) -> None:
        if message.by_user:
            self.user_chose = True
        self._show_selected(message.name)

    def select_op(self, name: str) -> None:
        """The palette's "Go to op": the user's choice."""
        self.user_chose = True
        self.query_one(OpList).select(name)

    # -- quit --------------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        """q, ctrl+q and the palette's Quit: abort a paused or running run, then exit."""
        self._leave(at_once=True)

    def _leave(self, at_once: bool) -> None:
        """Abort the run and exit: ``at_once``, else when the run has ended (at most
        ``QUIT_WAIT`` later) — what a framework logs as it unwinds stays off the terminal,
        as it did under the UI. While pdb owns the terminal, when it gives it back."""
        if not self.leaving:
            self.leaving = True
            self.bridge.quit()
            self.pause = None
        if self._suspended or self._exiting:
            return
        worker = self.worker_thread
        if at_once or self.target_done or worker is None or not worker.is_alive():
            self._exiting = True
            self.tick()          # the run's last events: the exit summary reads the model
            self.exit(0)
        elif self._exit_timer is None:
            self.message = "quit in pdb: the run was aborted; leaving…"
            self._exit_timer = self.set_timer(QUIT_WAIT, lambda: self._leave(at_once=True))

    def _pdb_quit(self, status) -> bool:
        """The user quit a pdb session (the link says so, or the target ended with pdb's
        quit)."""
        return bool(getattr(self.bridge.link, "quit_in_pdb", None) or _bdb_quit(status))

    def _quit_in_pdb(self) -> bool:
        """One q quits, pdb's included: the user quit a pdb session (which aborted the run),
        so the app leaves as for its own q. Checked after each session and on every tick
        (the run may note the quit just after the session ends)."""
        if not self._pdb_quit(self.target_status):
            return False
        self._leave(at_once=False)
        return True

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




def _bdb_quit(status) -> bool:
    """The script ended by a ``q`` in a pdb session of its own (``breakpoint()``), which
    the debugger does not see: pdb's ``BdbQuit`` went through it."""
    error = getattr(status, "error", status)
    seen = 0
    while isinstance(error, BaseException) and seen < 8:
        if isinstance(error, bdb.BdbQuit):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def _full_collection() -> None:
    """One full pass of the collector on this thread. ``gc.collect()`` does nothing while
    another thread's pass is under way (one that runs a finalizer or a ``gc.callbacks``
    entry lets other threads in): then it is tried again, that pass being over."""
    done = gc.get_stats()[2]["collections"]
    for _ in range(5):
        gc.collect()
        if gc.get_stats()[2]["collections"] > done:
            return
        time.sleep(0.01)


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
