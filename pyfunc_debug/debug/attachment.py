"""Which debuggers are attached now (``with dbg:``), in attach order.

Its own module so that both the debugger and the run loops it drives can ask,
without importing each other.
"""
from __future__ import annotations

import threading

__all__ = ["attached"]

_attached: list = []           # debuggers, in attach order (the Debugger adds and removes)
_lock = threading.Lock()


def attached() -> tuple:
    """The debuggers attached now, in attach order."""
    return tuple(_attached)
