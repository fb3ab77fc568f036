"""One helper thread for every open JSONL writer: it writes what each one has queued at
least every ``FLUSH_NS``, and ends once no writer has been open for ``IDLE_S``.

One thread for all, started when the first writer opens: a thread of its own for each
writer cost more to start and join (about 120 µs of CPU) than a run of a thousand traced
ops. A forked child has no helper thread (``fork`` copies only the calling thread); its
next writer starts one.
"""
from __future__ import annotations

import atexit
import os
import threading
import time
import weakref

__all__ = ["FLUSH_NS", "IDLE_S", "register", "unregister", "open_writers", "thread"]

FLUSH_NS = 10_000_000
IDLE_S = 1.0

# the open writers, as a tuple of weak references replaced whole: read without a lock
# (the collector's callback reads it, in whatever thread it runs, see ``jsonl``)
_refs: tuple = ()
_lock = threading.Lock()
_wake = threading.Event()   # set by a new writer: the next flush's time is read anew
_thread: threading.Thread | None = None


def register(writer) -> None:
    """Flush ``writer`` (its ``_queue``, ``flush()`` and ``_error``) from now on."""
    global _thread, _refs
    with _lock:
        _refs = tuple(r for r in _refs if r() is not None) + (weakref.ref(writer),)
        if _thread is None:
            _thread = threading.Thread(target=_run, daemon=True, name="pyfunc-debug jsonl flush")
            _thread.start()
        else:
            _wake.set()


def unregister(writer) -> None:
    """Flush ``writer`` no more (its owner closes it: see ``JsonlWriter.close``)."""
    global _refs
    with _lock:
        _refs = tuple(r for r in _refs if (w := r()) is not None and w is not writer)


def open_writers() -> list:
    """The writers registered now (no lock taken: safe in a collector's callback)."""
    return [w for r in _refs if (w := r()) is not None]


def thread() -> threading.Thread | None:
    """The helper thread, while it runs."""
    return _thread


def _run() -> None:
    global _thread
    last = time.monotonic()
    idle_since = None
    while True:
        _wake.clear()   # before reading FLUSH_NS: a later change wakes the wait below
        now = time.monotonic()
        due = last + FLUSH_NS / 1e9
        if now < due:
            _wake.wait(due - now)
            continue
        last = now
        if _flush_all():
            idle_since = None
        elif idle_since is None:
            idle_since = now
        elif now - idle_since >= IDLE_S:
            with _lock:
                if not open_writers():
                    _thread = None
                    return


def _flush_all() -> bool:
    """One pass over the open writers; whether there were any. No reference to one is
    kept after it (a closed writer's window would stay alive until the next pass). Also
    run when the program ends: what open writers still queue (ops between runs, a trace
    left open) reaches its file; the helper thread, a daemon, would not get to it."""
    writers = open_writers()
    for w in writers:
        if w._queue:
            try:
                w.flush()
            except Exception as e:  # a full disk: raised by the writer's close(), and
                if w._error is None:  # later batches dropped, not kept in memory
                    w._error = e
    return bool(writers)


atexit.register(_flush_all)


def _after_fork_in_child() -> None:
    global _thread, _lock
    _lock = threading.Lock()   # the parent's helper may have held it
    _thread = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
