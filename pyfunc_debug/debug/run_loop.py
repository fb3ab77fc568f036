"""The run loop while a debugger is attached.

Steps no breakpoint can match run as fast as ever (the plain or the observed
loop); only "attended" steps — statically matched, stepping, or guarded —
pay for pause checks. An error pauses where it happened (``on_error``) while
its traceback still holds the failing frame, so post-mortem works.
"""
from __future__ import annotations

import bisect
import contextlib
import threading
import time

import numpy as np

from .. import events as ev
from ..eager.execute import watching_eager
from ..errors import CancelledError, OpError
from .breakpoints import changes
from .filtered import compile_filtered, run_filtered
from ..runtime.loop import PASS_THROUGH as _PASS_THROUGH, annotate_error, run_folds as _run_folds, \
    run_steps
from ..runtime.diagnose import after_op
from ..runtime.modified import inputs_after, report_modified
from ..runtime.parallel import run_parallel
from ..runtime.observed import (fold_items, main_items, report_interrupt, run_span,
                                run_steps_observed, step_info)
from ..trace.summary import summarize
from .external import finished, starting

__all__ = ["run_debugged"]

_now = time.perf_counter_ns
BLOCK = 64  # unwatched steps run in blocks this long, so interrupt() takes effect soon


def run_debugged(plan, vals, ctx, pool, dbgs, span: bool = True) -> None:
    """Run ``plan`` under debuggers ``dbgs``; ``span=False``: the caller brackets the run
    (``RunStart``/``RunEnd``) itself, this is a part of it (a Dask run's local segment)."""
    observed = bool(ev._bus.subs)
    with run_span(plan, ctx, observed and span):
        if plan.fold_steps and not plan.folds_done:
            _run_folds(plan, vals, ctx, lambda: _run_folds_debugged(plan, vals, ctx, dbgs,
                                                                    observed))
        if plan.folded or plan.aliases:
            for d in dbgs:
                d.note_unreachable(plan, ctx.run_id)
        # breakpoint changes seen, watched steps, sorted, pre-filtered steps, sorted
        # and their compiled records
        state = [None, frozenset(), (), {}, (), None]

        def watched():
            if state[0] != changes[0]:  # a breakpoint came or went (maybe at a pause)
                state[0] = changes[0]
                state[1] = frozenset().union(*(d.watch(plan) for d in dbgs))
                state[2] = sorted(state[1])
                state[3] = _merged_filters(dbgs, plan, state[1])
                if len(dbgs) == 1:  # both cached per plan
                    state[4], state[5] = dbgs[0].filtered_order(plan)
                else:
                    state[4], state[5] = sorted(state[3]), compile_filtered(plan, state[3])
            return state[1]

        def one(i, frees=False):  # parallel runs: one step at a time, in any order
            if i in watched() or i in state[3] or any(d.stepping for d in dbgs):
                _attend(plan, i, vals, ctx, dbgs, observed, frees)
            elif observed:
                run_steps_observed(main_items(plan, (i,), frees), vals, ctx)
            else:
                run_steps((plan.parallel_steps[i],), vals, ctx)

        try:
            if pool is not None and not plan.chain:
                run_parallel(plan, vals, ctx, pool, one)
            else:
                _run_sequential(plan, vals, ctx, dbgs, observed, watched, state)
        except OpError as err:
            _pause_at_error(err, plan, vals, dbgs, ctx)
            raise


def _run_folds_debugged(plan, vals, ctx, dbgs, observed) -> None:
    """The folding steps run once, on this run: breakpoints on them pause here (later
    runs reuse their values, and the debugger says those breakpoints cannot fire)."""
    for step, info in fold_items(plan):
        op, name, typ = step[7], info[0], info[1]
        if any(d.wants(name, typ) for d in dbgs):
            args = [vals[s] for s in info[4]]
            for d in dbgs:
                if d._check_before(op, name, typ, args, ctx.run_id) == "step_into":
                    into = op.op_def.extra["step_into"](
                        op, lambda f, a, d=d: d.pdb.step_into(f, a, op_name=name))
                    step = (into,) + tuple(step[1:])
        if observed:
            run_steps_observed([(step, info)], vals, ctx)
        else:
            run_steps([step], vals, ctx)


def _run_sequential(plan, vals, ctx, dbgs, observed, watched, state) -> None:
    """Unwatched stretches run as one block on the fast (or observed) loop."""
    n = len(plan.steps)
    i = 0
    while i < n:
        if i in watched() or any(d.stepping for d in dbgs):
            _attend(plan, i, vals, ctx, dbgs, observed, True)
            i += 1
            continue
        k = bisect.bisect_right(state[2], i)
        j = min(state[2][k] if k < len(state[2]) else n, i + BLOCK)
        k = bisect.bisect_left(state[4], i)
        if k < len(state[4]) and state[4][k] < j:  # pre-filtered steps in the stretch
            i, attend = run_filtered(plan, i, j, vals, ctx, state[5], dbgs, observed)
            if attend:
                _attend(plan, i, vals, ctx, dbgs, observed, True)
                i += 1
            continue
        if observed:
            run_steps_observed(main_items(plan, range(i, j)), vals, ctx)
        else:
            run_steps(plan.fast_steps[i:j], vals, ctx)
        i = j


def _merged_filters(dbgs, plan, watched) -> dict:
    """Pre-filtered steps of all debuggers (see ``filtered``), minus watched ones."""
    if len(dbgs) == 1:
        return dbgs[0].filters(plan)  # cached per plan; disjoint from its watched steps
    merged: dict = {}
    for d in dbgs:
        for i, (before, after) in d.filters(plan).items():
            if i not in watched:
                b, a = merged.get(i, ((), ()))
                merged[i] = (b + before, a + after)
    return merged


def _pause_at_error(err, plan, vals, dbgs, ctx) -> None:
    """A failed op: pause (on_error / stepping); post-mortem at the raising frame if asked."""
    if isinstance(err, CancelledError) or getattr(err, "_pfd_paused", False) or err.op is None:
        return
    err._pfd_paused = True
    op = err.op
    step = next((s for s in plan.steps if s.op is op), None)
    inputs = getattr(err, "_pfd_inputs", None)
    if inputs is None:  # failed on the fast path: its inputs are still in their slots
        inputs = [] if step is None else [vals[s] for s in step.in_slots]
    for d in dbgs:
        action = d._check_error(op, op.name, op.type, inputs, err, ctx.run_id)
        if action == "post_mortem":
            d.pdb.post_mortem(err.__cause__ or err)


def _attend(plan, i, vals, ctx, dbgs, observed, frees) -> None:
    """One step with pause checks before and after it (and events when observed)."""
    step = plan.fast_steps[i] if frees else plan.parallel_steps[i]
    kernel, _, outs, _, single, needs_ctx, drop, op = step
    name, typ, src, producers, in_slots, out_slots = step_info(plan)[i]
    args = [vals[s] for s in in_slots]
    run_id = ctx.run_id
    stepper = starting(op, args, run_id, dbgs)
    if stepper is not None:
        kernel = op.op_def.extra["step_into"](
            op, lambda f, a: stepper.pdb.step_into(f, a, op_name=name))
    hands_out = op.op_def.extra.get("hands_out_arrays")
    guarded = {}
    if any(d.guard_mutation for d in dbgs) and hands_out:
        guarded = {j: a.copy() for j, a in enumerate(args) if isinstance(a, np.ndarray)}
    bus = ev._bus
    level = bus.capture if observed else 0
    cap = bus.capture_bytes if level == 2 else 0
    ins = tuple(summarize(a, cap) for a in args) if level else ()  # as the op is given them
    tid = threading.get_ident()
    if tid not in ev.thread_names:
        ev.note_thread(tid)
    t0 = _now()
    if observed:
        ev.emit(ev.OpStart(ev.next_seq(), run_id, t0, tid, name, typ, None, src, producers))
    hook = next((d.eager_hook for d in dbgs if d.watches_eager), None)
    try:
        if needs_ctx:
            scope = watching_eager(name, run_id, level, cap, observed, hook) \
                if (observed or hook is not None) else contextlib.nullcontext()
            with scope:
                r = kernel(ctx, *args)
        else:
            r = kernel(*args)
    except BaseException as exc:
        if isinstance(exc, (_PASS_THROUGH, CancelledError)) or not isinstance(exc, Exception):
            if observed:  # close the op's OpStart; the interrupt goes on unchanged
                report_interrupt(exc, run_id, name, typ, None, src, tid, t0)
            raise
        err = annotate_error(exc, op, ctx)
        err._pfd_inputs = args
        if observed:
            _close(observed, run_id, tid, name, typ, src, t0, err)
        if err is exc:
            raise
        raise err from exc
    t1 = _now()
    results = (r,) if single else (tuple(r) if outs else ())
    if single:
        vals[outs] = r
    else:
        for s, v in zip(outs, results):
            vals[s] = v
    if guarded or (level and hands_out):
        _check_inputs(dbgs, op, args, guarded, ins, level, cap, run_id, src)
    if observed:  # the op's slice ends before any pause after it
        sums = tuple(summarize(v, cap) for v in results) if level else ()
        ev.emit(ev.OpEnd(ev.next_seq(), run_id, t1, tid, name, typ, None, t1 - t0, ins, sums))
        if level:
            after_op(run_id, name, typ, src, ins, sums)
    finished(op, args, list(results), run_id, dbgs)
    if drop:
        for s in drop:
            vals[s] = None


def _close(observed, run_id, tid, name, typ, src, t0, exc) -> None:
    """The op failed: end its slice with an ``OpError`` naming the error."""
    if observed:
        t1 = _now()
        ev.emit(ev.OpError(ev.next_seq(), run_id, t1, tid, name, typ, None, type(exc).__name__,
                           getattr(exc, "message", None) or str(exc) or type(exc).__name__, src,
                           t1 - t0))


def _check_inputs(dbgs, op, args, guarded, ins, level, cap, run_id, src) -> None:
    """Did the wrapped function write into its inputs? Exactly (guarded) or by summary."""
    if guarded:
        for d in dbgs:
            if d.guard_mutation:
                d.check_mutation(op, guarded, args, run_id)
                break
        return
    after = inputs_after(args, ins, cap)
    if after is not None:
        report_modified(run_id, op.name, op.type, src, ins, after)
