"""The bridge between the executing (worker) thread and the app.

Worker side: events go into a deque (the app drains it on a timer, in
batches — never one ``call_from_thread`` per event); a pause posts itself to
the app once and blocks on a queue for the action; pdb sessions are bracketed
by ``pdb_session`` so the app is suspended while pdb owns the terminal.
App side: ``answer(action)``, ``drain(limit)``, ``interrupt()``.
"""
from __future__ import annotations

import collections
import contextlib
import queue
import sys
import threading
from typing import NamedTuple

from pyfunc_debug import events as ev
from pyfunc_debug.debug import Debugger, PdbRunner

__all__ = ["Bridge"]

# values up to this size are copied with each event so the inspector can show them
VALUE_BYTES = 64 * 1024


class Printed(NamedTuple):
    """Text the script printed, queued with the events so the log keeps their order."""

    text: str
    stderr: bool


class _PrintSink:
    """Textual's print-capture target: what the script prints joins the event queue."""

    def __init__(self, queue):
        self._append = queue.append

    def post_message(self, message) -> bool:
        self._append(Printed(message.text, message.stderr))
        return True


class Bridge:
    """Runs a target under a debugger and moves its events and pauses to the app."""

    def __init__(self, post_pause, request_suspend=None, pdb_runner=None,
                 guard_mutation: bool = False):
        self._post_pause = post_pause              # called (in the worker) with each Pause
        self._request_suspend = request_suspend    # asks the app to suspend for pdb
        self.events: collections.deque = collections.deque()
        self.print_sink = _PrintSink(self.events)
        self.recorded: list = []                   # every event, values stripped (for export)
        # op -> (run_id, inputs, outputs): values as the op started / ended, its last run;
        # and op -> (run_id, inputs) as the op left them, when it wrote into them
        self.latest_values: dict = {}
        self.inputs_after: dict = {}
        self.interrupted = False                   # Ctrl+C ended the session
        self._answers: queue.Queue = queue.Queue()
        self.pdb_done = threading.Event()
        self.app_suspended = threading.Event()
        self.quitting = False
        self.paused = None
        runner = pdb_runner or PdbRunner(stdin=sys.__stdin__, stdout=sys.__stdout__,
                                         around=self.pdb_session)
        self.debugger = Debugger(on_pause=self._on_pause, guard_mutation=guard_mutation,
                                 pdb_runner=runner)
        self._sub = None

    # -- worker side -------------------------------------------------------------------
    def _on_event(self, e) -> None:
        cls = type(e)
        if cls is ev.OpEnd and (_has_values(e.inputs) or _has_values(e.outputs)):
            if e.parent is None:
                self.latest_values[e.op] = (e.run_id, [s.value for s in e.inputs],
                                            [s.value for s in e.outputs])
            e = e._replace(inputs=_strip(e.inputs), outputs=_strip(e.outputs))
        elif cls is ev.Warning and _has_values(e.inputs):
            if e.parent is None:
                self.inputs_after[e.op] = (e.run_id, [s.value for s in e.inputs])
            e = e._replace(inputs=_strip(e.inputs))
        self.events.append(e)

    def _on_pause(self, pause) -> str:
        if self.quitting:
            return "abort"
        self.paused = pause
        try:
            self._post_pause(pause)
            action = self._answers.get()
        finally:
            self.paused = None
        return action

    @contextlib.contextmanager
    def pdb_session(self):
        """Around every pdb session: the app is suspended until it ends."""
        if not self.app_suspended.is_set() and self._request_suspend is not None:
            self._request_suspend()                 # e.g. breakpoint() in user code
            self.app_suspended.wait(timeout=10)
        try:
            yield
        finally:
            self.app_suspended.clear()
            self.pdb_done.set()

    def run(self, target) -> object:
        """Run ``target()`` (in the worker) attached to the debugger, recording events."""
        self._sub = ev.subscribe(self._on_event, capture="full", capture_bytes=VALUE_BYTES)
        try:
            with self.debugger:
                return target()
        finally:
            self._sub.close()

    # -- app side -----------------------------------------------------------------------
    def answer(self, action: str) -> None:
        self._answers.put(action)

    def drain(self, limit: int) -> list:
        """Up to ``limit`` events and ``Printed`` texts, oldest first (the app's timer)."""
        out = []
        pop = self.events.popleft
        try:
            for _ in range(limit):
                out.append(pop())
        except IndexError:
            pass
        self.recorded.extend(e for e in out if type(e) is not Printed)
        return out

    def interrupt(self) -> None:
        """Pause before the next op that runs (any thread)."""
        self.debugger.interrupt()

    def quit(self, interrupted: bool = False) -> None:
        """Abort: a paused run is answered with abort, a running one aborts at its next op.
        ``interrupted``: by Ctrl+C (the exit status is then 130)."""
        self.quitting = True
        self.interrupted = self.interrupted or interrupted
        if self.paused is not None:
            self.answer("abort")
        self.debugger.interrupt()


def _has_values(summaries) -> bool:
    for s in summaries:
        if s.value is not None:
            return True
    return False


def _strip(summaries) -> tuple:
    return tuple(s._replace(value=None) for s in summaries)
