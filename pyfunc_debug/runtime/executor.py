"""Running a plan: the fast sequential loop, the observed loop, or the debugger's.

With nobody listening a run allocates no events. A plan whose wrapped
functions may wait on each other (``plan.concurrent``), or any plan but a
chain under an inter-op pool, starts in the calling thread and spreads to
helper threads only when a wrapped function blocks or is expensive
(``overlap.py``); every other plan runs in the calling thread. Runs execute in eager mode: ops a wrapped function creates run at once,
even inside ``with Session():`` or after ``disable_eager_execution()``.
"""
from __future__ import annotations

from ..events import _bus
from ..graph.graph import eager_mode
from . import hooks
from .loop import RunContext, annotate_error, new_run_id, run_folds, \
    run_steps
from .observed import fold_items, main_items, run_span, run_steps_observed
from .overlap import run_overlapped
from .parallel import run_parallel
from .workers import HELPERS

__all__ = ["RunContext", "execute", "run_steps", "annotate_error", "new_run_id"]



def execute(plan, feed_values, ctx, pool=None, helpers: bool = True) -> list:
    """Run ``plan`` with ``feed_values`` (in feed-slot order); the fetched values.

    ``helpers=False`` keeps a concurrent plan in the calling thread too.
    """
    vals = plan.template.copy()
    for (slot, _), v in zip(plan.feed_slots, feed_values):
        vals[slot] = v
    if pool is None and plan.concurrent and helpers:
        pool = HELPERS
    with eager_mode():
        if hooks.runner is not None:
            hooks.runner(plan, vals, ctx, pool)
        elif _bus.subs:
            _execute_observed(plan, vals, ctx, pool)
        else:
            if plan.fold_steps and not plan.folds_done:
                run_folds(plan, vals, ctx)
            if pool is None or plan.chain:
                run_steps(plan.fast_steps, vals, ctx)
            else:
                run_overlapped(plan, vals, ctx, getattr(pool, "_max_workers", 1))
    return [None if s is None else vals[s] for s in plan.fetch_slots]


def _execute_observed(plan, vals, ctx, pool) -> None:
    with run_span(plan, ctx):
        if plan.fold_steps and not plan.folds_done:
            run_folds(plan, vals, ctx, lambda: run_steps_observed(fold_items(plan), vals, ctx))
        if pool is None or plan.chain:
            run_steps_observed(main_items(plan, range(len(plan.steps))), vals, ctx)
        else:
            run_parallel(plan, vals, ctx, pool, lambda i: run_steps_observed(
                main_items(plan, (i,), frees=False), vals, ctx))
