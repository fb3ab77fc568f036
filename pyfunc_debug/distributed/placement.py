"""Which steps of a plan run where: segments of consecutive steps on one worker.

A step runs on worker ``K % n`` when its op's device names
``/job:worker/task:K`` and the op can travel (no graph objects in its
attributes, no session state); every other step runs in the calling process.
Consecutive steps with the same place form one segment, so one Dask task runs
them all and their intermediate values never leave the worker.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Segment", "task_of", "split"]

_TASK = re.compile(r"/job:worker(?:/replica:\d+)?/task:(\d+)")


@dataclass(frozen=True)
class Segment:
    """Steps ``indices`` (in plan order) run at ``worker`` (an index; ``None``: here).

    ``inputs``: slots read from outside the segment; ``outputs``: slots it writes
    that later steps or the fetches read.
    """

    worker: int | None
    indices: tuple
    inputs: tuple
    outputs: tuple


def task_of(device: str) -> int | None:
    """K of a ``/job:worker/task:K`` device string; ``None`` for any other device."""
    m = _TASK.match(device or "")
    return int(m.group(1)) if m else None


def _travels(op) -> bool:
    """Whether the op's kernel can be rebuilt in another process from its attributes."""
    if op.op_def.needs_ctx and not op.op_def.extra.get("calls_python"):
        return False  # variables: their values live in the caller's session
    if op._grad_consumers or op.attrs.get("is_grad"):
        return False  # py_function tapes for gradients stay with the run that reads them
    return not any(hasattr(v, "graph") for v in op.attrs.values())


def place(op, n_workers: int) -> int | None:
    k = task_of(op.device)
    if k is None or n_workers < 1 or not _travels(op):
        return None
    return k % n_workers


def split(plan, n_workers: int) -> list:
    """The plan's steps as segments, in order."""
    places = [place(s.op, n_workers) for s in plan.steps]
    groups: list = []
    for i, w in enumerate(places):
        if groups and groups[-1][0] == w:
            groups[-1][1].append(i)
        else:
            groups.append((w, [i]))
    later_reads = _reads_after(plan, groups)
    segments = []
    for (w, idx), after in zip(groups, later_reads):
        written: set = set()
        inputs: dict = {}
        for i in idx:
            step = plan.steps[i]
            for s in step.in_slots:
                if s not in written:
                    inputs[s] = None
            written.update(step.out_slots)
        outputs = tuple(sorted(s for s in written if s in after))
        segments.append(Segment(w, tuple(idx), tuple(inputs), outputs))
    return segments


def _reads_after(plan, groups) -> list:
    """Per group, the slots read by later groups or fetched."""
    keep = {s for s in plan.fetch_slots if s is not None}
    result = []
    for w, idx in reversed(groups):
        result.append(set(keep))
        for i in idx:
            keep.update(plan.steps[i].in_slots)
    return result[::-1]
