"""Ctrl+C while pdb owns the terminal goes to the thread running pdb, not the app.

Suspended, the terminal is back in cooked mode, so Ctrl+C is a SIGINT that
Python delivers to the main thread — the app's event loop, which would die of
it. While pdb runs we catch it there and raise ``KeyboardInterrupt`` in the
executing thread instead (pdb shows ``--KeyboardInterrupt--`` and prompts again).
"""
from __future__ import annotations

import contextlib
import ctypes
import signal
import threading

__all__ = ["forward_sigint_to"]


@contextlib.contextmanager
def forward_sigint_to(thread: threading.Thread | None):
    if thread is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def forward(signum, frame):
        if thread.is_alive():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                                       ctypes.py_object(KeyboardInterrupt))
    previous = signal.signal(signal.SIGINT, forward)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
