"""The seam the debugger plugs into, so the runtime never imports ``debug``.

When ``runner`` is set (a debugger is attached), every run goes through
``runner(plan, vals, ctx, pool)`` instead of the plain loops.
"""
from __future__ import annotations

runner = None
