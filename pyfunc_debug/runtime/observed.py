"""The observed run loop: the executor's path when someone listens to events.

Same work as ``loop.run_steps`` plus ``OpStart``/``OpEnd``/``OpError``
events with value summaries at the bus's capture level. Eager ops that run
inside a ``py_function`` report as children of it (see ``eager.execute``).
"""
from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from .. import events as ev
from ..eager.execute import watching_eager
from ..trace.summary import summarize
from .loop import PASS_THROUGH as _PASS_THROUGH
from .diagnose import WATCHED_TYPES, after_op, note_run
from .modified import input_marks, inputs_after, report_modified
from .op_errors import report_error as _report_error, report_interrupt
from .records import run_steps_recorded

__all__ = ["step_info", "fold_items", "main_items", "run_steps_observed", "run_start", "run_end",
           "run_span", "report_interrupt"]

_now = time.perf_counter_ns
_ndarray = np.ndarray


def _info(step) -> tuple:
    op = step.op
    return (op.name, op.type, str(op.source), tuple(t.op.name for t in op.inputs),
            step.in_slots, step.out_slots)


def step_info(plan) -> list:
    """Static per-step event data, built once per plan."""
    info = plan.event_info
    if info is None:
        info = plan.event_info = [_info(s) for s in plan.steps]
    return info


def fold_items(plan) -> list:
    """(step tuple, info) pairs of the plan's constant-folding steps."""
    return [(s.as_tuple(), _info(s)) for s in plan.fold_steps]


class PlanItems(zip):
    """(step tuple, info) pairs of one plan; ``infos``: all the plan's infos (``step_info``),
    which an op-record sink names at once instead of checking op by op."""


def main_items(plan, indices, frees=True, steps=None):
    """(step tuple, info) items of the plan's steps ``indices``; ``steps``: the plan's step
    tuples with some kernels wrapped (a debugger's), instead of its own."""
    if steps is None:
        steps = plan.fast_steps if frees else plan.parallel_steps
    info = step_info(plan)
    if type(indices) is range and indices.step == 1:
        items = PlanItems(steps[indices.start:indices.stop], info[indices.start:indices.stop])
    else:
        items = PlanItems(map(steps.__getitem__, indices), map(info.__getitem__, indices))
    items.infos = info
    return items


def run_start(plan, ctx):
    """Emit ``RunStart``; its ``t_ns`` is the run's start, the ``t0`` to pass to ``run_end``.

    One clock reading serves both, and every op reads the clock after it, so
    the run's slice encloses its ops (trace viewers drop slices that overlap).
    """
    heads = plan.event_heads
    if heads is None:   # the same tuples every run: a reader may recognise them
        info = step_info(plan)
        heads = plan.event_heads = (tuple(i[0] for i in info), tuple(i[1] for i in info))
    dedup = tuple((op.name, first.name) for op, first in plan.aliases.items())
    tid = threading.get_ident()
    ev.note_thread(tid)   # every run: a new thread may have an ended one's ident
    t0 = _now()
    ev._bus.emit(ev.RunStart(ev.next_seq(), ctx.run_id, t0, tid, ctx.kind,
                             ctx.name, heads[0], tuple(op.name for op in plan.folded), dedup,
                             heads[1]))
    if plan.folded or plan.aliases or (plan.fold_steps and not plan.folds_done):
        note_run(plan, ctx.run_id)
    return t0


@contextlib.contextmanager
def run_span(plan, ctx, observed: bool = True):
    """``RunStart`` before the block and ``RunEnd`` after it, with the error that ended it
    (nothing when not ``observed``): the one bracket every run loop uses."""
    if not observed:
        yield
        return
    t0 = run_start(plan, ctx)
    try:
        yield
    except BaseException as e:
        run_end(ctx, t0, e)
        raise
    run_end(ctx, t0)


def run_end(ctx, t0, error=None) -> None:
    """Emit ``RunEnd`` at a reading taken after the last op's end: ``t_ns - duration_ns == t0``."""
    t1 = _now()
    ev._bus.emit(ev.RunEnd(ev.next_seq(), ctx.run_id, t1, threading.get_ident(), t1 - t0,
                           error is None, None if error is None else
                           f"{type(error).__name__}: {str(error).splitlines()[-1] if str(error) else ''}"))


def run_steps_observed(items, vals, ctx) -> None:
    """Run (step tuple, info) ``items`` in order, emitting events (or op records, to
    a subscriber that takes them: see ``records``)."""
    sink = ev._bus.records
    if sink is not None:
        run_steps_recorded(items, vals, ctx, sink, _run_steps_events)
    else:
        _run_steps_events(items, vals, ctx)


def _run_steps_events(items, vals, ctx) -> None:
    """Written for speed: one subscriber is called directly (the common case), two
    clock reads per op, summaries of a value made once when it is produced."""
    bus = ev._bus
    subs = bus.subs
    single_sub = subs[0] if len(subs) == 1 else None
    cb = single_sub.op_callback if single_sub is not None else bus.emit
    seq = ev.next_seq
    level = bus.capture
    cap = bus.capture_bytes if level == 2 else 0
    tid = threading.get_ident()
    if tid not in ev.thread_names:
        ev.note_thread(tid)
    run_id = ctx.run_id
    summaries = ctx.summaries
    if summaries is None:
        summaries = ctx.summaries = {}
    OpStart, OpEnd = ev.OpStart, ev.OpEnd
    new = tuple.__new__  # builds the records without NamedTuple's Python-level __new__
    # the last step's one output: its slot, its summaries' tuple and (a big float32 array)
    # the sample bytes its summary gathered, which nothing has run to change since
    last_slot = last_sums = last_sample = None
    for step, info in items:
        kernel, ins, outs, mode, single, needs_ctx, drop, op = step
        name, typ, src, producers, in_slots, out_slots = info
        t0 = _now()
        e = new(OpStart, (seq(), run_id, t0, tid, name, typ, None, src, producers))
        try:
            cb(e)
        except Exception as exc:
            bus.failed(single_sub, e, exc)
        args = [vals[ins]] if mode == 1 else [vals[s] for s in in_slots]
        if not level:
            in_sums = ()
        elif len(args) == 1:  # the common case, without the generic comprehension
            if in_slots[0] == last_slot:   # in a chain: the tuple the last OpEnd holds
                in_sums = last_sums
            else:
                in_sums = (summaries.get(in_slots[0]) or summarize(args[0], cap),)
        else:
            in_sums = tuple([summaries.get(s) or summarize(a, cap) for s, a in zip(in_slots, args)])
        watch_inputs = level and (len(args) != 1 or isinstance(args[0], _ndarray)) and (
            op.op_def.extra.get("hands_out_arrays"))  # a scalar cannot be written into
        marks = input_marks(args, in_slots, last_slot, last_sample) if watch_inputs else None
        try:
            if mode == 1:   # one input, no context: a call without unpacking a list
                r = kernel(args[0])
            elif needs_ctx:
                with watching_eager(name, run_id, level, cap):
                    r = kernel(ctx, *args)
            else:
                r = kernel(*args)
        except BaseException as exc:
            if isinstance(exc, _PASS_THROUGH) or not isinstance(exc, Exception):
                report_interrupt(exc, run_id, name, typ, None, src, tid, t0)
                raise
            _report_error(exc, op, ctx, name, typ, src, tid, t0)
        t1 = _now()
        if watch_inputs:
            after = inputs_after(args, in_sums, cap, marks)
            if after is not None:  # the function wrote into its input: say so, keep the truth
                report_modified(run_id, name, typ, src, in_sums, after)
                for s, a in zip(in_slots, after):
                    summaries[s] = a
        if single:
            vals[outs] = r
            if level:
                if r.__class__ is _ndarray:
                    got = []
                    s1 = summarize(r, cap, got)
                    last_sample = got[0] if got else None
                else:
                    s1 = summarize(r, cap)
                    last_sample = None
                if single is True:   # else READ_NEXT: the next op takes it as last_sums
                    summaries[outs] = s1
                out_sums = last_sums = (s1,)
                last_slot = outs
            else:
                out_sums = ()
        else:
            results = tuple(r) if outs else ()
            for s, v in zip(outs, results):
                vals[s] = v
            out_sums = tuple([summarize(v, cap) for v in results]) if level else ()
            for s, summary in zip(out_slots, out_sums):
                summaries[s] = summary
            last_slot = None
        e = new(OpEnd, (seq(), run_id, t1, tid, name, typ, None, t1 - t0, in_sums, out_sums))
        try:
            cb(e)
        except Exception as exc:
            bus.failed(single_sub, e, exc)
        if level:   # after_op's diagnostics, only where one could fire (it costs a call)
            if len(out_sums) == 1:
                o = out_sums[0]
                fire = o.nan or o.inf or (typ in WATCHED_TYPES and in_sums and
                                          o.shape != in_sums[0].shape)
            else:
                fire = out_sums and (typ in WATCHED_TYPES or any(s.nan or s.inf for s in out_sums))
            if fire:
                after_op(run_id, name, typ, src, in_sums, out_sums)
        if drop:
            for s in drop:
                vals[s] = None
