"""Building millions of small records at once (loading or exporting a long trace).

CPython's cyclic garbage collector runs every few hundred allocations and each
full pass walks every tracked object, so building a million rows costs several
times the work itself. None of these records form cycles; pausing the
collector for the build is safe, and it is restored (if it was on) afterwards.
"""
from __future__ import annotations

import contextlib
import gc

__all__ = ["paused_gc"]


@contextlib.contextmanager
def paused_gc():
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
