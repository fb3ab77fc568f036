"""The fast path for a plan whose wrapped functions may wait on each other.

Every step that calls Python goes to a helper thread at the start of the run
and waits there for its inputs; all other steps run here, in plan order, in
batches through the plain loop, waiting only where a batch needs a helper's
output. So a put/get pair of py_funcs completes (TF#16) while the cheap ops
around them cost what they cost sequentially. The schedule is built once per
plan.
"""
from __future__ import annotations

import threading

from .loop import run_steps

__all__ = ["run_overlapped"]


class _Batch:
    __slots__ = ("waits", "steps", "signals")

    def __init__(self, waits, steps, signals):
        self.waits, self.steps, self.signals = waits, steps, signals


def _schedule(plan) -> list:
    """Batches of the calling thread's steps: (helpers to wait for, steps, steps to signal)."""
    steps, blocking = plan.steps, plan.blocking
    awaited = {d for i, s in enumerate(steps) if blocking[i] for d in s.deps}
    batches, waits, run, = [], (), []

    def flush(signal=()):
        nonlocal waits, run
        if run:
            batches.append(_Batch(waits, tuple(run), signal))
        waits, run = (), []

    for i, step in enumerate(steps):
        if blocking[i]:
            continue
        needs = tuple(d for d in step.deps if blocking[d])
        if needs:
            flush()
            waits = needs
        run.append(plan.parallel_steps[i])
        if i in awaited:
            flush((i,))
    flush()
    return batches


def run_overlapped(plan, vals, ctx, helpers) -> None:
    """Run ``plan`` with its wrapped-function steps on ``helpers`` (see the module doc)."""
    batches = plan.overlap_schedule
    if batches is None:
        batches = plan.overlap_schedule = _schedule(plan)
    steps, blocking = plan.steps, plan.blocking
    done = {}
    for i, b in enumerate(blocking):
        if b:
            done[i] = threading.Event()
            for d in steps[i].deps:
                done.setdefault(d, threading.Event())
    failed: list = []

    def helper(i):
        for d in steps[i].deps:
            done[d].wait()
        try:
            if not failed:
                run_steps((plan.parallel_steps[i],), vals, ctx)
        except BaseException as e:  # noqa: BLE001 - reported by the calling thread
            failed.append(e)
            raise
        finally:
            done[i].set()

    futures = [helpers.submit(helper, i) for i, b in enumerate(blocking) if b]
    try:
        for batch in batches:
            for w in batch.waits:
                done[w].wait()
            if failed:
                break
            run_steps(batch.steps, vals, ctx)
            for s in batch.signals:
                done[s].set()
    except BaseException:
        failed.append(None)
        for event in done.values():  # helpers waiting for inputs give up
            event.set()
        raise
    for fut in futures:
        fut.result()  # the first helper error, as it was raised
