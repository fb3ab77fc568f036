"""The run loop while a debugger is attached.

Steps no breakpoint can match run as fast as ever (the plain or the observed
loop); only "attended" steps — statically matched, stepping, or guarded —
pay for pause checks. An error pauses where it happened (``on_error``) while
its traceback still holds the failing frame, so post-mortem works; a Python
op that may fail keeps its function's frame (for a fault found after it
returned, e.g. a dtype error). A pause after an op or at its error shows the
inputs as they were when the op started: a py_func/numpy_function gets the
run's own arrays and may write into them, so those are copied first.
Diagnostics raised at a run's start (folded, de-duplicated ops) pause where
the op's value is made or reused (see ``debug.warned``).
"""
from __future__ import annotations

import bisect
import contextlib
import sys
import threading
import time

import numpy as np

from .. import events as ev
from ..eager.execute import watching_eager
from ..errors import CancelledError, OpError
from .breakpoints import changes
from .filtered import compile_filtered, run_filtered
from .kept import code_of as _code_of, frame_again
from ..runtime.loop import PASS_THROUGH as _PASS_THROUGH, annotate_error, run_folds as _run_folds, \
    run_steps
from ..runtime.diagnose import after_op
from ..runtime.modified import inputs_after, report_modified
from ..runtime.parallel import run_parallel
from ..runtime.observed import (fold_items, main_items, report_interrupt, run_span,
                                run_steps_observed, step_info)
from ..trace.summary import summarize
from .external import finished, starting
from .pdb_bridge import NOTHING, keeping_frame
from .warned import calling

__all__ = ["run_debugged"]

_now = time.perf_counter_ns
_clock = time.perf_counter
# unwatched steps run in blocks, so interrupt() takes effect soon: a block starts this long
# and doubles while blocks take under BLOCK_SECONDS (cheap ops: the loop's own cost per
# block is amortised), halves while they take over 10x that (slow ops: a pause comes soon)
BLOCK, BLOCK_MAX, BLOCK_SECONDS = 64, 4096, 0.002


def run_debugged(plan, vals, ctx, pool, dbgs, span: bool = True) -> None:
    """Run ``plan`` under debuggers ``dbgs``; ``span=False``: the caller brackets the run
    (``RunStart``/``RunEnd``) itself, this is a part of it (a Dask run's local segment)."""
    observed = bool(ev._bus.subs)
    with run_span(plan, ctx, observed and span), _in_run():
        started = [(d, d.take_run_start()) for d in dbgs]   # folded, de-duplicated ops
        started = [(d, found) for d, found in started if found]
        if plan.fold_steps and not plan.folds_done:
            _run_folds(plan, vals, ctx, lambda: _run_folds_debugged(plan, vals, ctx, dbgs,
                                                                    observed, started))
        if plan.folded or plan.aliases:
            for d in dbgs:
                d.note_unreachable(plan, ctx.run_id)
        shared = _pause_where_reused(plan, ctx, started) if started else {}
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
            with _in_run():   # maybe in a pool thread
                if i in watched() or i in state[3] or any(d.stepping for d in dbgs):
                    _attend(plan, i, vals, ctx, dbgs, observed, frees, shared)
                elif observed:
                    run_steps_observed(main_items(plan, (i,), frees), vals, ctx)
                else:
                    run_steps((plan.parallel_steps[i],), vals, ctx)

        try:
            if pool is not None and not plan.chain:
                run_parallel(plan, vals, ctx, pool, one)
            else:
                _run_sequential(plan, vals, ctx, dbgs, observed, watched, state, shared)
        except OpError as err:
            _pause_at_error(err, plan, vals, dbgs, ctx)
            raise


@contextlib.contextmanager
def _in_run():
    """This thread runs ops of a run: an eager call's diagnostic belongs to the op that
    runs (``calling.op``, named by ``_attend``; "" when no debugger attends it)."""
    outer = getattr(calling, "op", None)
    calling.op = outer or ""
    try:
        yield
    finally:
        calling.op = outer


def _run_folds_debugged(plan, vals, ctx, dbgs, observed, started) -> None:
    """The folding steps run once, on this run: breakpoints on them pause here (later
    runs reuse their values, and the debugger says those breakpoints cannot fire).
    Their inputs are constants, which a wrapped function gets copies of."""
    for step, info in fold_items(plan):
        op, name, typ = step[7], info[0], info[1]
        args = [vals[s] for s in info[4]]
        if any(d.wants(name, typ) for d in dbgs):
            for d in dbgs:
                if d._check_before(op, name, typ, args, ctx.run_id) == "step_into":
                    into = op.op_def.extra["step_into"](
                        op, lambda f, a, d=d: d.pdb.step_into(f, a, op_name=name))
                    step = (into,) + tuple(step[1:])
        if observed:
            run_steps_observed([(step, info)], vals, ctx)
        else:
            run_steps([step], vals, ctx)
        outputs = [vals[s] for s in info[5]]
        for d in dbgs:
            found = dict(started).get(d, {})
            d._check_after(op, name, typ, args, outputs, ctx.run_id, warned=found.pop(name, ()))


def _pause_where_reused(plan, ctx, started) -> dict:
    """Pause at the ops this run does not run whose start raised a diagnostic: now for a
    folded one (or one sharing a folded value); returns, for the others, op that runs ->
    [(debugger, de-duplicated op, warnings)], to pause right after that op."""
    later: dict = {}
    for op in list(plan.folded) + list(plan.aliases):
        first = plan.aliases.get(op)
        source = first if first is not None else op
        for d, found in started:
            warned = found.pop(op.name, ())
            if not warned:
                continue
            if source in plan.fold_cache:
                why = (f"it is the same stateless call as '{first.name}'" if first is not None
                       else "folded") + ": its value is reused"
                d._check_after(op, op.name, op.type, [_constant(plan, t) for t in op.inputs],
                               list(plan.fold_cache[source]), ctx.run_id, warned=warned,
                               not_run=why)
            else:
                later.setdefault(first, []).append((d, op, warned))
    return later


def _constant(plan, tensor):
    """The value of a constant input of a folded op."""
    cached = plan.fold_cache.get(tensor.op)
    if cached is not None:
        return cached[tensor.value_index]
    return tensor.op.attrs.get("value")


def _run_sequential(plan, vals, ctx, dbgs, observed, watched, state, shared) -> None:
    """Unwatched stretches run as one block on the fast (or observed) loop."""
    n = len(plan.steps)
    i, block = 0, BLOCK
    while i < n:
        if i in watched() or any(d.stepping for d in dbgs):
            _attend(plan, i, vals, ctx, dbgs, observed, True, shared)
            i += 1
            continue
        k = bisect.bisect_right(state[2], i)
        j = min(state[2][k] if k < len(state[2]) else n, i + block)
        k = bisect.bisect_left(state[4], i)
        t0 = _clock()
        if k < len(state[4]) and state[4][k] < j:  # pre-filtered steps in the stretch
            i, attend = run_filtered(plan, i, j, vals, ctx, state[5], dbgs, observed)
            if attend:
                _attend(plan, i, vals, ctx, dbgs, observed, True, shared)
                i += 1
        else:
            if observed:
                run_steps_observed(main_items(plan, range(i, j)), vals, ctx)
            else:
                run_steps(plan.fast_steps[i:j], vals, ctx)
            i = j
        took = _clock() - t0
        if took < BLOCK_SECONDS:
            block = min(2 * block, BLOCK_MAX)
        elif took > 10 * BLOCK_SECONDS and block > 1:
            block //= 2


def _merged_filters(dbgs, plan, watched) -> dict:
    """Pre-filtered steps of all debuggers (see ``filtered``), minus watched ones."""
    if len(dbgs) == 1:
        return dbgs[0].filters(plan)  # cached per plan; disjoint from its watched steps
    merged: dict = {}
    for d in dbgs:
        for i, (before, after, keep) in d.filters(plan).items():
            if i not in watched:
                b, a, k = merged.get(i, ((), (), False))
                merged[i] = (b + before, a + after, k or keep)
    return merged


def _pause_at_error(err, plan, vals, dbgs, ctx) -> None:
    """A failed op: pause (on_error / stepping); post-mortem if asked, at the user's frame
    that raised — or, when the function returned and its result was the fault, at its
    frame (kept by ``_attend``). Quitting that pdb aborts the run."""
    if isinstance(err, CancelledError) or getattr(err, "_pfd_paused", False) or err.op is None:
        return
    err._pfd_paused = True
    op = err.op
    step = next((s for s in plan.steps if s.op is op), None)
    # what the op's kernel left on the error (``_attend``, ``filtered.keeping``); on the
    # error it raised, which the plain loop may have wrapped
    kept = err if hasattr(err, "_pfd_inputs") else err.__cause__
    inputs = getattr(kept, "_pfd_inputs", None)
    if inputs is None:  # failed on the fast path: its inputs are still in their slots
        inputs = [] if step is None else [vals[s] for s in step.in_slots]
    after = getattr(kept, "_pfd_inputs_after", None)
    written = getattr(kept, "_pfd_written", None)   # big inputs, not copied, written into
    if written:
        listed = ", ".join(str(j) for j in written)
        for d in dbgs:
            d._warn(op.name, op.type, f"op '{op.name}' ({op.type}) wrote into its input"
                    f"{'s' if len(written) > 1 else ''} {listed} in place before it failed: "
                    "those inputs are shown as it left them (too big to copy before each call)",
                    "input_modified", ctx.run_id, source=str(op.source),
                    hint="wrapped functions must not modify their inputs: copy first")
    for d in dbgs:
        action = d._check_error(op, op.name, op.type, inputs, err, ctx.run_id, after)
        if action == "post_mortem":
            cause = err.__cause__ or err
            frame = getattr(kept, "_pfd_frame", None)
            if frame is not None and _raised_in(cause, frame):
                frame = None   # it raised: its traceback leads to the raising line
            returned, note = getattr(err, "returned", NOTHING), ""
            if frame is None and returned is not NOTHING and not written and \
                    "step_into" in op.op_def.extra and not getattr(op, "external", False):
                frame, note = frame_again(op, inputs, returned, ctx.run_id)  # it returned
            d.pdb.post_mortem(cause, frame, returned, op.name, aborts=True, note=note)


def _raised_in(exc, frame) -> bool:
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame is frame:
            return True
        tb = tb.tb_next
    return False


def _attend(plan, i, vals, ctx, dbgs, observed, frees, shared=None) -> None:
    """One step with pause checks before and after it (and events when observed)."""
    step = plan.fast_steps[i] if frees else plan.parallel_steps[i]
    kernel, _, outs, _, single, needs_ctx, drop, op = step
    name, typ, src, producers, in_slots, out_slots = step_info(plan)[i]
    args = [vals[s] for s in in_slots]
    run_id = ctx.run_id
    stepper = starting(op, args, run_id, dbgs)
    extra = op.op_def.extra
    if stepper is not None:
        kernel = extra["step_into"](op, lambda f, a: stepper.pdb.step_into(f, a, op_name=name))
    hands_out = extra.get("hands_out_arrays")
    keep = any(d.keeps_inputs(name, typ) for d in dbgs)
    guarded = {}
    if hands_out and (keep or any(d.guard_mutation for d in dbgs)):
        guarded = {j: a.copy() for j, a in enumerate(args) if isinstance(a, np.ndarray)}
    given = [guarded.get(j, a) for j, a in enumerate(args)] if guarded and keep else args
    bus = ev._bus
    level = bus.capture if observed else 0
    cap = bus.capture_bytes if level == 2 else 0
    ins = tuple(summarize(a, cap) for a in args) if level else ()  # as the op is given them
    tid = threading.get_ident()
    if tid not in ev.thread_names:
        ev.note_thread(tid)
    box: list = []   # the wrapped function's frame, for a post-mortem after it returned
    hook = keeping_frame(_code_of(op), box) if keep and stepper is None and \
        "step_into" in extra else None
    t0 = _now()
    if observed:
        ev.emit(ev.OpStart(ev.next_seq(), run_id, t0, tid, name, typ, None, src, producers))
    eager_hook = next((d.eager_hook for d in dbgs if d.watches_eager), None)
    outer, calling.op = getattr(calling, "op", None), name
    if hook is not None:
        sys.setprofile(hook)
    try:
        if needs_ctx:
            scope = watching_eager(name, run_id, level, cap, observed, eager_hook) \
                if (observed or eager_hook is not None) else contextlib.nullcontext()
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
        err._pfd_inputs, err._pfd_inputs_after = given, args
        err._pfd_frame = box[0] if box else None
        if observed:
            _close(observed, run_id, tid, name, typ, src, t0, err)
        if err is exc:
            raise
        raise err from exc
    finally:
        calling.op = outer
        if hook is not None and sys.getprofile() is hook:
            sys.setprofile(None)   # the function was never entered (a C function)
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
    finished(op, given, list(results), run_id, dbgs, inputs_after=args)
    for d, alias, warned in (shared or {}).get(op, ()):   # ops sharing this one's value
        d._check_after(alias, alias.name, alias.type, given, list(results), run_id,
                       warned=warned, not_run=f"it is the same stateless call as '{name}', "
                       "which ran for both: its value is shared")
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
    guard = next((d for d in dbgs if d.guard_mutation), None) if guarded else None
    if guard is not None:
        guard.check_mutation(op, guarded, args, run_id)
        return
    if not level:
        return
    after = inputs_after(args, ins, cap)
    if after is not None:
        report_modified(run_id, op.name, op.type, src, ins, after)
