"""The per-run loop: read input slots, call the kernel, write output slots.

``run_steps`` is the fast path (nobody listening: no events are made).
Errors are annotated here with the failing op, its type and creation site.
"""
from __future__ import annotations

import bdb
import itertools

from ..errors import InvalidArgumentError, OpError
from ..events import _bus
from . import hooks

__all__ = ["RunContext", "execute", "run_steps", "annotate_error", "new_run_id"]

_run_ids = itertools.count(1)
_PASS_THROUGH = (KeyboardInterrupt, SystemExit, bdb.BdbQuit)


def new_run_id() -> int:
    """A run id no other run in this process has (runs of framework callbacks use it too)."""
    return next(_run_ids)


class RunContext:
    """State of one run (``Session.run`` or a function call): id, kind, py_function tapes."""

    __slots__ = ("run_id", "kind", "tapes", "name", "summaries")

    def __init__(self, kind: str, name: str = ""):
        self.run_id = next(_run_ids)
        self.kind = kind
        self.name = name
        self.tapes = {}
        self.summaries = None  # slot -> ValueSummary, made only when events are observed


def annotate_error(err: Exception, op, ctx) -> OpError:
    """Give an error the op context TF#35 shows (node, type, where it was defined)."""
    if isinstance(err, OpError):
        new = err
        core = err.message
    else:
        core = f"{type(err).__name__}: {err}"
        new = InvalidArgumentError(None, None, core)
    if new.op is None:
        new.op = op
        header = "Graph execution error" if ctx is None or ctx.kind == "session" \
            else f"Function execution error in '{ctx.name}'"
        new.message = (f"{header}:\n\nDetected at node '{op.name}' ({op.type}) defined at "
                       f"{op.source} (in {op.source.function})\n{core}\n\t [[{{{{node {op.name}}}}}]]")
        new.args = (new.message,)
    return new


def run_steps(steps, vals, ctx) -> None:
    """Run compiled step tuples in order over the slot list ``vals``."""
    op = None
    try:
        for kernel, ins, outs, mode, single, needs_ctx, frees, op in steps:
            if mode == 1:
                r = kernel(vals[ins])
            elif mode == 2:
                r = kernel(vals[ins[0]], vals[ins[1]])
            elif mode == 0:
                r = kernel()
            elif needs_ctx:
                r = kernel(ctx, *[vals[i] for i in ins])
            else:
                r = kernel(*[vals[i] for i in ins])
            if single:
                vals[outs] = r
            elif outs:
                for s, v in zip(outs, r):
                    vals[s] = v
            if frees:
                for s in frees:
                    vals[s] = None
    except _PASS_THROUGH:
        raise
    except OpError as e:
        annotate_error(e, op, ctx)
        raise
    except Exception as e:
        raise annotate_error(e, op, ctx) from e


def _run_folds(plan, vals, ctx, run=None) -> None:
    """Run the constant-folding steps once; later runs reuse their values."""
    with plan.lock:
        if plan.folds_done:
            return
        if run is None:
            run_steps([s.as_tuple() for s in plan.fold_steps], vals, ctx)
        else:
            run()
        for step in plan.fold_steps:
            outs = tuple(vals[s] for s in step.out_slots)
            plan.fold_cache[step.op] = outs
            plan.folded.add(step.op)
            for s, v in zip(step.out_slots, outs):
                plan.template[s] = v
        plan.folds_done = True


def execute(plan, feed_values, ctx, pool=None) -> list:
    """Run ``plan`` with ``feed_values`` (in feed-slot order); the fetched values."""
    vals = plan.template.copy()
    for (slot, _), v in zip(plan.feed_slots, feed_values):
        vals[slot] = v
    if hooks.runner is not None:
        hooks.runner(plan, vals, ctx, pool)
        return [None if s is None else vals[s] for s in plan.fetch_slots]
    if _bus.subs:
        return _execute_observed(plan, vals, ctx, pool)
    if plan.fold_steps and not plan.folds_done:
        _run_folds(plan, vals, ctx)
    if pool is None or len(plan.steps) < 2:
        run_steps(plan.fast_steps, vals, ctx)
    else:
        from .parallel import run_parallel
        run_parallel(plan, vals, ctx, pool, lambda i: run_steps((plan.parallel_steps[i],), vals, ctx))
    return [None if s is None else vals[s] for s in plan.fetch_slots]


def _execute_observed(plan, vals, ctx, pool) -> list:
    from .observed import fold_items, main_items, run_end, run_start, run_steps_observed
    t0 = run_start(plan, ctx)
    try:
        if plan.fold_steps and not plan.folds_done:
            _run_folds(plan, vals, ctx,
                       lambda: run_steps_observed(fold_items(plan), vals, ctx))
        if pool is None or len(plan.steps) < 2:
            run_steps_observed(main_items(plan, range(len(plan.steps))), vals, ctx)
        else:
            from .parallel import run_parallel
            run_parallel(plan, vals, ctx, pool, lambda i: run_steps_observed(
                main_items(plan, (i,), frees=False), vals, ctx))
    except BaseException as e:
        run_end(ctx, t0, e)
        raise
    run_end(ctx, t0)
    return [None if s is None else vals[s] for s in plan.fetch_slots]
