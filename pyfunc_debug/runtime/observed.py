"""The observed run loop: the executor's path when someone listens to events.

Same work as ``executor.run_steps`` plus ``OpStart``/``OpEnd``/``OpError``
events with value summaries at the bus's capture level. Eager ops that run
inside a ``py_function`` report as children of it (see ``eager.execute``).
"""
from __future__ import annotations

import threading
import time

from .. import events as ev
from ..eager.execute import watching_eager
from ..trace.summary import summarize
from .executor import _PASS_THROUGH, annotate_error

__all__ = ["step_info", "run_steps_observed", "run_start", "run_end"]

_now = time.perf_counter_ns


def step_info(plan) -> list:
    """Static per-step event data, built once per plan."""
    info = plan.event_info
    if info is None:
        info = [(s.op.name, s.op.type, str(s.op.source),
                 tuple(t.op.name for t in s.op.inputs), s.in_slots, s.out_slots)
                for s in plan.steps]
        plan.event_info = info
    return info


def run_start(plan, ctx):
    bus = ev._bus
    dedup = tuple((op.name, first.name) for op, first in plan.aliases.items())
    bus.emit(ev.RunStart(ev.next_seq(), ctx.run_id, _now(), threading.get_ident(), ctx.kind,
                         ctx.name, tuple(s.op.name for s in plan.steps),
                         tuple(op.name for op in plan.folded), dedup))
    return _now()


def run_end(ctx, t0, error=None) -> None:
    t1 = _now()
    ev._bus.emit(ev.RunEnd(ev.next_seq(), ctx.run_id, t1, threading.get_ident(), t1 - t0,
                           error is None, None if error is None else
                           f"{type(error).__name__}: {str(error).splitlines()[-1] if str(error) else ''}"))


def run_steps_observed(plan, indices, vals, ctx, frees=True) -> None:
    """Run the plan's steps ``indices`` in order, emitting events."""
    bus = ev._bus
    emit = bus.emit
    seq = ev.next_seq
    level = bus.capture
    cap = bus.capture_bytes if level == 2 else 0
    info = step_info(plan)
    steps = plan.fast_steps if frees else plan.parallel_steps
    tid = threading.get_ident()
    run_id = ctx.run_id
    summaries = ctx.summaries
    for i in indices:
        kernel, _, outs, _, single, needs_ctx, drop, op = steps[i]
        name, typ, src, producers, in_slots, out_slots = info[i]
        emit(ev.OpStart(seq(), run_id, _now(), tid, name, typ, None, src, producers))
        args = [vals[s] for s in in_slots]
        in_sums = ()
        if level:
            in_sums = tuple(summaries.get(s) or summarize(a, cap) for s, a in zip(in_slots, args))
        t0 = _now()
        try:
            if needs_ctx:
                with watching_eager(name, run_id, level, cap):
                    r = kernel(ctx, *args)
            else:
                r = kernel(*args)
        except _PASS_THROUGH:
            raise
        except Exception as e:
            t1 = _now()
            err = annotate_error(e, op, ctx)
            emit(ev.OpError(seq(), run_id, t1, tid, name, typ, None, type(err).__name__,
                            err.message, src, t1 - t0))
            if err is e:
                raise
            raise err from e
        t1 = _now()
        if single:
            vals[outs] = r
            results = (r,)
        elif outs:
            results = tuple(r)
            for s, v in zip(outs, results):
                vals[s] = v
        else:
            results = ()
        out_sums = ()
        if level:
            out_sums = tuple(summarize(v, cap) for v in results)
            for s, summary in zip(out_slots, out_sums):
                summaries[s] = summary
        emit(ev.OpEnd(seq(), run_id, t1, tid, name, typ, None, t1 - t0, in_sums, out_sums))
        if drop:
            for s in drop:
                vals[s] = None
