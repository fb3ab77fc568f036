"""Offline replay of a recorded faulty call (``pyfunc-debug replay``, SPEC §11).

A room of its own above the core: it imports the engine (to find results'
checks, eager tensors, pdb) and the core never imports it.
"""
from __future__ import annotations

from .locate import ReplayError
from .replayer import list_calls, replay, select

__all__ = ["replay", "select", "list_calls", "ReplayError"]
