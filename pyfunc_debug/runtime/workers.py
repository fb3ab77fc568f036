"""Helper threads and the watchdog for runs whose wrapped functions may wait on each other.

TF runs independent ops concurrently, so two py_funcs forming a blocking
put/get pair complete (TF#16). Such a run starts in the calling thread
(``overlap.py``); the watchdog checks it every ``WATCH_SECONDS`` and moves work
to these helpers when a wrapped function blocks or runs long. There is no
fixed cap: an idle helper is reused, otherwise a new one starts, so blocked
steps and nested runs (a wrapped function calling ``Session.run``) cannot
starve each other. Idle helpers exit after a while.
"""
from __future__ import annotations

import os
import queue
import threading
import time
from concurrent.futures import Future

from ..events import note_thread
from ..graph.graph import pin_eager

__all__ = ["HELPERS", "Helpers", "WATCHDOG", "Watchdog"]

_IDLE_SECONDS = 30.0
WATCH_SECONDS = 0.002  # a watched step still running after 1-2 checks is handed off


class Helpers:
    """A ``submit(fn, *args) -> Future`` pool that grows instead of queueing.

    ``offload_all = False`` tells ``run_parallel`` to hand it only the steps
    that may block (wrapped functions) and run the rest in the calling thread.
    """

    offload_all = False

    def __init__(self, name: str = "pfd-ready"):
        self._name = name
        self._idle: list[queue.SimpleQueue] = []
        self._lock = threading.Lock()
        self._count = 0

    def submit(self, fn, *args) -> Future:
        fut: Future = Future()
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
            if inbox is None:
                self._count += 1
                inbox = queue.SimpleQueue()
                threading.Thread(target=self._serve, args=(inbox,), daemon=True,
                                 name=f"{self._name}-{self._count}").start()
        inbox.put((fut, fn, args))
        return fut

    def _serve(self, inbox: queue.SimpleQueue) -> None:
        pin_eager()  # wrapped functions on helpers run eagerly, as on TF's threads
        note_thread(threading.get_ident())  # its name, for traces (its ident may be reused)
        while True:
            try:
                fut, fn, args = inbox.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:
                        self._idle.remove(inbox)
                        return
                continue  # handed work just as it timed out
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args))
                except BaseException as e:  # noqa: BLE001 - handed to the waiting caller
                    fut.set_exception(e)
            del fut, fn, args
            with self._lock:
                self._idle.append(inbox)


HELPERS = Helpers()


class Watchdog:
    """One daemon thread calling ``check(late)`` on every watched run each ``interval``;
    it sleeps on an event while nothing is watched."""

    def __init__(self, interval: float = WATCH_SECONDS):
        self.interval = interval
        self._runs: list = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread = None

    def watch(self, run) -> None:
        with self._lock:
            self._runs.append(run)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="pfd-watchdog")
                self._thread.start()
        if not self._wake.is_set():
            self._wake.set()

    def unwatch(self, run) -> None:
        with self._lock:
            self._runs.remove(run)

    def _loop(self) -> None:
        note_thread(threading.get_ident())
        lates = 0
        while True:
            self._wake.wait()
            t0 = time.monotonic()
            wait = self.interval * (4 if lates else 1)  # a computing run: disturb it less
            time.sleep(wait)
            # woken late: the GIL was busy (a run computing, not blocked) or the machine
            # is overloaded; either way this check cannot tell a blocked step (but a few
            # late ones in a row count, so a blocked pair completes on a loaded machine)
            lates = lates + 1 if time.monotonic() - t0 > wait + self.interval / 2 else 0
            late = 0 < lates <= 4
            with self._lock:
                runs = list(self._runs)
                if not runs:
                    self._wake.clear()
            for run in runs:
                try:
                    run.check(late)
                except Exception:  # noqa: BLE001 - the watchdog must outlive any run
                    pass


WATCHDOG = Watchdog()


def _after_fork() -> None:
    """A forked child has none of the parent's threads: forget them."""
    HELPERS.__init__(HELPERS._name)
    WATCHDOG.__init__(WATCHDOG.interval)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
