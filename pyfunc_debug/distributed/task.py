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

from .. import events as ev
from ..errors import CancelledError, OpError
from ..graph.graph import eager_mode
from ..runtime.loop import RunContext, run_steps
from ..runtime.observed import run_steps_observed
from ..debug.pdb_bridge import PdbRunner
from .pauses import Asker, Attend, wraps_function
from .remote_errors import error_record
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
                capture: str | None, capture_bytes: int, attend: Attend | None = None) -> dict:
    """Run the segment ``blob`` (its pickled ``ShippedStep`` list, named ``token``) on
    ``inputs`` (slot -> value); ``capture=None``: make no events. With ``attend``, its
    steps and errors ask the caller first (``pauses.Asker``)."""
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
    asker = None if attend is None else Asker(attend, _host(_address()))
    t_start = time.perf_counter_ns()
    error = None
    try:
        with eager_mode():
            if asker is not None and asker.attend.steps:
                _run_attended(tuples, steps, vals, ctx, asker, sub is not None)
            elif sub is None:
                run_steps(tuples, vals, ctx)
            else:
                run_steps_observed(zip(tuples, (s.info for s in steps)), vals, ctx)
    except OpError as e:
        if asker is not None and asker.attend.on_error and not isinstance(e, CancelledError):
            _ask_at_error(asker, steps, vals, e)
        error = error_record(e, getattr(e, "pfd_aborted_at", None) or "")
    finally:
        if sub is not None:
            sub.close()
    return {"values": {} if error else {s: vals[s] for s in outputs}, "events": collected,
            "error": error, "address": _address(), "pid": os.getpid(), "thread": me,
            "thread_name": threading.current_thread().name, "t_start": t_start,
            "t_end": time.perf_counter_ns()}


def _host(address: str) -> str:
    """The host of a worker's address, where its pdb port listens (loopback otherwise)."""
    try:
        from distributed.comm import get_address_host
        host = get_address_host(address)
    except (ImportError, ValueError):
        host = ""
    return host if host and not address.startswith("inproc") else "127.0.0.1"


def _ask_at_error(asker, steps, vals, e) -> None:
    """Before returning ``e``: the caller's error pause; a post-mortem answer opens pdb at
    the frame that raised (the user's exception is ``e.__cause__``)."""
    name = getattr(e.op, "name", None)
    j = next((j for j, s in enumerate(steps) if s.op.name == name), None)
    if j is None:
        return
    inputs = [vals[s] for s in steps[j].in_slots]
    asker.ask("error", j, inputs, error=error_record(e),
              pdb=lambda io: PdbRunner(io.stdin, io.stdout).post_mortem(e.__cause__ or e))


def _run_attended(tuples, steps, vals, ctx, asker, observed: bool) -> None:
    """One step at a time; the attended ones wait for the caller's answer around them
    (all of them once the caller steps)."""
    attend, step_all = set(asker.attend.steps), False
    for j, (step, shipped) in enumerate(zip(tuples, steps)):
        if not (step_all or j in attend):
            _run_one(step, shipped, vals, ctx, observed)
            continue
        op = shipped.op
        ins = [vals[s] for s in shipped.in_slots]
        ran: list = []
        answer = asker.ask("before", j, ins, pdb=_under_pdb(step, shipped, vals, ctx, observed,
                                                            ran) if wraps_function(op) else None)
        _check_abort(answer, op, "before")
        if not ran:
            _run_one(step, shipped, vals, ctx, observed)
        step_all = answer == "step"
        answer = asker.ask("after", j, ins, [vals[s] for s in shipped.out_slots])
        _check_abort(answer, op, "after")
        step_all = step_all or answer == "step"


def _under_pdb(step, shipped, vals, ctx, observed: bool, ran: list):
    """What ``s`` runs: the step, its wrapped function under a pdb on the caller's streams
    (``io``), stopping at its first line (as ``debug.run_loop`` does locally)."""
    def run(io) -> None:
        op = shipped.op
        runner = PdbRunner(io.stdin, io.stdout)
        into = op.op_def.extra["step_into"](
            op, lambda f, a: runner.step_into(f, a, op_name=op.name))
        ran.append(True)
        _run_one((into,) + tuple(step[1:]), shipped, vals, ctx, observed)
    return run


def _run_one(step, shipped, vals, ctx, observed: bool) -> None:
    if observed:
        run_steps_observed([(step, shipped.info)], vals, ctx)
    else:
        run_steps([step], vals, ctx)


def _check_abort(answer: str, op, when: str) -> None:
    if answer == "abort":
        raise CancelledError(None, op, f"run aborted from the debugger at op '{op.name}' "
                             f"({op.type}), {when}")
