"""The per-run loop: read input slots, call the kernel, write output slots.

``run_steps`` is the fast path (nobody listening: no events are made).
Errors are annotated here with the failing op, its type and creation site.
"""
from __future__ import annotations

import bdb
import itertools

from ..errors import InvalidArgumentError, OpError

__all__ = ["RunContext", "run_steps", "run_watched", "run_folds", "annotate_error", "PASS_THROUGH", "new_run_id",
           "hold_first_run"]

_run_ids = itertools.count(1)
PASS_THROUGH = (KeyboardInterrupt, SystemExit, bdb.BdbQuit)
_hold: list = []   # an event the next run waits for (``run --listen --wait``), set from above


def new_run_id() -> int:
    """A run id no other run in this process has (runs of framework callbacks use it too)."""
    if _hold:
        _held()
    return next(_run_ids)


def hold_first_run(event) -> None:
    """Make the next run (of any thread) wait until ``event`` is set; later runs do not wait."""
    _hold[:] = [event]


def _held() -> None:
    try:
        event = _hold[0]
    except IndexError:
        return
    event.wait()
    _hold.clear()


class RunContext:
    """State of one run (``Session.run`` or a function call): id, kind, py_function tapes,
    and the owner's variable values (which outlive the run)."""

    __slots__ = ("run_id", "kind", "tapes", "name", "summaries", "resources")

    def __init__(self, kind: str, name: str = "", resources: dict | None = None):
        self.run_id = new_run_id()
        self.kind = kind
        self.name = name
        self.tapes = {}
        self.resources = {} if resources is None else resources  # graph variables' values
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
    except PASS_THROUGH:
        raise
    except OpError as e:
        annotate_error(e, op, ctx)
        raise
    except Exception as e:
        raise annotate_error(e, op, ctx) from e


def run_watched(steps, vals, ctx, box: list) -> int:
    """Run ``steps``, ``run_steps``' tuples with a 9th field: the step's index if it is
    watched (a wrapped function), else -1. One flat loop: a call per watched step
    would cost more than the scalar op it watches.

    The watched step's index is in ``box`` while it runs; a watchdog that pops it
    takes over the steps after it.

    Returns -1 when all ran; ``i`` when the watchdog claimed step ``i`` (it ran).
    """
    append, pop = box.append, box.pop
    op = None
    try:
        for kernel, ins, outs, mode, single, needs_ctx, frees, op, w in steps:
            if w >= 0:
                append(w)
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
            if w >= 0:
                try:
                    pop()  # atomic: empty means the watchdog claimed this step
                except IndexError:
                    return w
    except PASS_THROUGH:
        raise
    except OpError as e:
        annotate_error(e, op, ctx)
        raise
    except Exception as e:
        raise annotate_error(e, op, ctx) from e
    return -1


def run_folds(plan, vals, ctx, run=None) -> None:
    """Run the constant-folding steps once; later runs reuse their values.

    The plan's lock is re-entrant: a folded wrapped function that calls
    ``Session.run`` on the same plan recurses (and ends in ``RecursionError``
    if it never stops) instead of deadlocking.
    """
    with plan.lock:
        if plan.folds_done:
            return
        if run is None:
            run_steps([s.as_tuple() for s in plan.fold_steps], vals, ctx)
        else:
            run()
        if plan.folds_done:
            return  # a nested run on this plan finished the folds first
        for step in plan.fold_steps:
            outs = tuple(vals[s] for s in step.out_slots)
            plan.fold_cache[step.op] = outs
            plan.folded.add(step.op)
            for s, v in zip(step.out_slots, outs):
                plan.template[s] = v
        plan.folds_done = True
