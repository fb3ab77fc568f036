"""The Dask task: run one segment of steps in a worker with the engine's own loops.

It returns plain data: the values later steps need, the events the segment
made (collected by a subscriber on the worker's bus) and, if an op failed,
its error as class name, message and traceback text (an ``OpError`` holds
the op, which does not travel back).
"""
from __future__ import annotations

import collections
import os
import pickle
import threading
import time
import traceback

from .. import events as ev
from ..errors import CancelledError, OpError
from ..graph.graph import eager_mode
from ..runtime.loop import RunContext, run_steps
from ..runtime.observed import run_steps_observed
from .pauses import ask
from .shipped import rebuild

__all__ = ["run_segment"]


def _address() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):  # called outside a worker (tests, a local fallback)
        return f"pid:{os.getpid()}"


# Segments this worker has unpickled and bound, by token: later runs skip both.
_bound: collections.OrderedDict = collections.OrderedDict()
_bound_lock = threading.Lock()  # a worker may run several tasks at once
BOUND_SEGMENTS = 256


def _steps(token: str, blob: bytes) -> tuple:
    with _bound_lock:
        entry = _bound.get(token)
    if entry is None:
        steps = pickle.loads(blob)  # cloudpickle's output, made by the caller's executor
        entry = (steps, [rebuild(s) for s in steps])
        with _bound_lock:
            _bound[token] = entry
            if len(_bound) > BOUND_SEGMENTS:
                _bound.popitem(last=False)
    return entry


def run_segment(token: str, blob: bytes, inputs: dict, outputs: tuple, kind: str, name: str,
                capture: str | None, capture_bytes: int, attend: tuple = (),
                channel: str | None = None) -> dict:
    """Run the segment ``blob`` (its pickled ``ShippedStep`` list, named ``token``) on
    ``inputs`` (slot -> value); ``capture=None``: make no events. Steps at positions
    ``attend`` ask the caller (``pauses.ask`` on ``channel``) before and after running."""
    steps, tuples = _steps(token, blob)
    size = 1 + max([*inputs, *outputs, *(i for s in steps for i in s.in_slots + s.out_slots)],
                   default=0)
    vals = [None] * size
    for slot, v in inputs.items():
        vals[slot] = v
    ctx = RunContext(kind, name)
    me = threading.get_ident()
    collected: list = []
    sub = None
    if capture is not None:  # only this task's thread: the worker may run others at once
        sub = ev.subscribe(lambda e: collected.append(e) if e.thread == me else None,
                           capture, capture_bytes)
    t_start = time.perf_counter_ns()
    error = None
    try:
        with eager_mode():
            if attend:
                _run_attended(tuples, steps, vals, ctx, set(attend), channel, sub is not None)
            elif sub is None:
                run_steps(tuples, vals, ctx)
            else:
                run_steps_observed(zip(tuples, (s.info for s in steps)), vals, ctx)
    except OpError as e:
        error = (type(e).__name__, getattr(e.op, "name", ""), e.message,
                 "".join(traceback.format_exception(e)))
    finally:
        if sub is not None:
            sub.close()
    return {"values": {} if error else {s: vals[s] for s in outputs}, "events": collected,
            "error": error, "address": _address(), "pid": os.getpid(), "thread": me,
            "thread_name": threading.current_thread().name, "t_start": t_start,
            "t_end": time.perf_counter_ns()}


def _run_attended(tuples, steps, vals, ctx, attend: set, channel: str, observed: bool) -> None:
    """One step at a time; the attended ones wait for the caller's answer around them."""
    for j, (step, shipped) in enumerate(zip(tuples, steps)):
        ins = [vals[s] for s in shipped.in_slots] if j in attend else None
        if ins is not None and ask(channel, "before", j, ins) == "abort":
            raise CancelledError(None, shipped.op, f"run aborted from the debugger at op "
                                 f"'{shipped.op.name}' ({shipped.op.type}), before")
        if observed:
            run_steps_observed([(step, shipped.info)], vals, ctx)
        else:
            run_steps([step], vals, ctx)
        if ins is not None and ask(channel, "after", j, ins,
                                   [vals[s] for s in shipped.out_slots]) == "abort":
            raise CancelledError(None, shipped.op, f"run aborted from the debugger at op "
                                 f"'{shipped.op.name}' ({shipped.op.type}), after")
