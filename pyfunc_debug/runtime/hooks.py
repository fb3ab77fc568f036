"""Seams the upper layers plug into, so the runtime never imports them.

When ``runner`` is set (a debugger is attached), every run goes through
``runner(plan, vals, ctx, pool)`` instead of the plain loops (with
``span=False`` for a part of a run whose ``RunStart``/``RunEnd`` the caller emits).

``cluster`` is set by ``pyfunc_debug.distributed``: ``cluster(target)`` makes
the executor a ``Session(cluster=target)`` hands its plans to
(``.execute(plan, feed_values, ctx)``, the same contract as ``execute``).
"""
from __future__ import annotations

runner = None
cluster = None
