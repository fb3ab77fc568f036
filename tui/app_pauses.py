"""The app's pauses and pdb: showing a pause, answering it (c, n, space, s, p), and
handing the terminal to pdb and back — for our sessions and for the script's own
``breakpoint()``."""
from __future__ import annotations

import asyncio
import contextlib
import time

from textual.app import SuspendNotSupported

from pyfunc_debug.trace.summary import summarize

from .failure_text import error_text
from .interrupts import forward_sigint_to
from .widgets.op_list import OpList

__all__ = ["PauseActions"]

_KEY_OF = {"continue": "c", "step": "n", "step_into": "s", "post_mortem": "p", "abort": "q"}


class PauseActions:
    """Mixed into ``PfdApp``: needs ``bridge``, ``model``, ``tick``, ``_show_selected``,
    ``_inspect_next_tick``, ``_update_status`` and ``_quit_in_pdb``."""

    def on_pause_arrived(self, pause) -> None:
        if self._suspended:
            self._deferred_pause = pause
            return
        self.tick()
        self.pause = pause
        self.ctrl_c_pressed = False
        self.user_chose = False          # the pause chose the op to look at
        name = pause.op_name if pause.parent is None else pause.parent
        self.model.mark_paused(name)
        ops = self.query_one(OpList)
        ops.sync()
        ops.select(name)
        where = f" (inside {pause.parent})" if pause.parent else ""
        when = "at" if getattr(pause, "not_run", "") else pause.when
        ran = " (it did not run)" if when == "at" else ""
        self.message = f"{when} {pause.op_name}{where}{ran} — keys: " + \
            " ".join(_KEY_OF[a] for a in pause.actions)
        self._show_selected(name)
        self._update_status()

    def _answer(self, action: str) -> None:
        self._keep_paused_call()
        self.pause = None
        self.message = ""
        self.model.unpause()
        self.bridge.answer(action)
        self.query_one(OpList).sync()
        self._inspect_next_tick()
        # the rate of the second the pause held is not the run's: a new one from now
        self._rate, self._rate_t, self._rate_n = None, time.perf_counter(), 0
        self._update_status()

    def action_resume(self, action: str) -> None:
        if self.pause is None:
            if self.target_done:   # no next op to pause at
                self.notify("The program has ended: nothing to continue (q quits, x exports "
                            "the trace).", severity="warning")
            else:
                self.notify("Not paused. (space pauses at the next op.)", severity="warning")
            return
        self._answer(action)

    def _keep_paused_call(self) -> None:
        """Before a pause at an op's error ends: its row keeps that call's inputs and error
        (its ``OpError`` carried no inputs)."""
        pause = self.pause
        if pause is None or pause.when != "error" or pause.parent is not None:
            return
        self.bridge.keep_paused_call(pause)
        after = getattr(pause, "inputs_after", None)
        self.model.keep_call(pause.op_name, pause.run_id, pause.input_summaries(),
                             [summarize(v) for v in after] if after is not None else (),
                             error_text(pause.error))

    async def action_step_into(self) -> None:
        await self._pdb_action("step_into", "s steps into the function of a py_func, "
                               "numpy_function or py_function op")

    async def action_post_mortem(self) -> None:
        await self._pdb_action("post_mortem", "p works at an error pause")

    async def _pdb_action(self, action: str, hint: str) -> None:
        pause = self.pause
        if pause is None or action not in pause.actions:
            why = pause.why_not(action) if hasattr(pause, "why_not") else ""   # remote: none
            self.notify(f"Not possible here: {why or hint}.", severity="warning")
            return
        bridge = self.bridge
        bridge.pdb_done.clear()
        self._keep_paused_call()
        try:
            with self._pdb_owns_terminal():
                bridge.app_suspended.set()
                self.pause = None
                self.message = ""
                self._inspect_next_tick()
                bridge.answer(action)
                while not await asyncio.to_thread(bridge.pdb_done.wait, 0.5):
                    if self.worker_thread is not None and not self.worker_thread.is_alive():
                        break
        except SuspendNotSupported:
            self.message = "cannot drop into pdb here: this terminal cannot be suspended"
            self._update_status()
        self._quit_in_pdb()

    def action_interrupt(self) -> None:
        if self.pause is None and self.target_done:   # no next op to pause at
            self.notify("The program has ended: no op is left to pause at (q quits).",
                        severity="warning")
        elif self.pause is None:
            self.bridge.interrupt()
            self.message = "pausing at the next op…"

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
            bridge.app_back.set()
        self._quit_in_pdb()

    @contextlib.contextmanager
    def _pdb_owns_terminal(self):
        """Suspend the app for pdb. Nothing may redraw meanwhile: the driver's writer is
        stopped, so its queue would fill and block the event loop. Pauses that arrive
        meanwhile are shown after the app is back."""
        try:
            with self._suspend(), forward_sigint_to(self.bridge.link.interrupt_pdb):
                self._suspended = True
                try:
                    yield
                finally:
                    self._suspended = False
        finally:
            self.bridge.app_back.set()   # the program may go on (Bridge.pdb_session)
        pause, self._deferred_pause = self._deferred_pause, None
        self.refresh(layout=True)
        if pause is not None:
            self.on_pause_arrived(pause)
