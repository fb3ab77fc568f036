"""Ctrl+C while pdb owns the terminal goes to the pdb session, not the app.

Suspended, the terminal is back in cooked mode, so Ctrl+C is a SIGINT that
Python delivers to the main thread — the app's event loop, which would die of
it. While pdb runs we catch it there and hand it to ``interrupt`` — the link's
``interrupt_pdb``: ``KeyboardInterrupt`` in the thread running pdb, here or in
the attached process (pdb shows ``--KeyboardInterrupt--`` and prompts again).
"""
from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["forward_sigint_to"]


@contextlib.contextmanager
def forward_sigint_to(interrupt):
    if interrupt is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def forward(signum, frame):
        interrupt()
    previous = signal.signal(signal.SIGINT, forward)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
