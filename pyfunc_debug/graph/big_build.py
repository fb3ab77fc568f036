"""Deferring full garbage collections while a big graph is being built.

CPython's oldest-generation collection walks every tracked object; while a
graph grows by a million ops it runs again each time the heap grew by a
quarter, so building costs more per node the bigger the graph gets. From the
``BIG``-th op of a graph on, ``create_op`` defers those full collections
(young ones go on, so short-lived cycles are still freed); compiling a plan
and leaving ``as_default()`` restore them, and the deferred work then runs
once.
"""
from __future__ import annotations

import gc
import threading

__all__ = ["BIG", "defer_full_collections", "restore_full_collections"]

BIG = 10_000
_lock = threading.Lock()
_saved: list = []  # the thresholds to restore, while deferred


def defer_full_collections() -> None:
    if not _saved:
        with _lock:
            if not _saved:
                t = gc.get_threshold()
                _saved.append(t)
                gc.set_threshold(t[0], t[1], 1 << 30)


def restore_full_collections() -> None:
    if _saved:
        with _lock:
            if _saved:
                gc.set_threshold(*_saved.pop())
