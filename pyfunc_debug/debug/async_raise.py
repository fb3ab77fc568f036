"""Raising ``KeyboardInterrupt`` in another thread: Ctrl+C for a pdb session that runs on
the executing thread while the signal lands on the main one (a UI's, or a server's)."""
from __future__ import annotations

import ctypes

__all__ = ["raise_in_thread"]


def raise_in_thread(ident: int, exc: type = KeyboardInterrupt) -> bool:
    """Raise ``exc`` in thread ``ident`` at its next bytecode; False if there is none."""
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident),
                                                      ctypes.py_object(exc)) == 1
