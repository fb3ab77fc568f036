"""Inter-op parallelism: run steps whose dependencies are done, some on a pool.

Results are identical to the sequential run: each step still reads exactly
the slots its inputs name; only the order of independent steps changes.

An inter-op pool (``Session(inter_op_threads=N)``) gets every step. The helper
threads that keep wrapped functions from blocking each other
(``workers.Helpers``, ``offload_all = False``) get only the steps that call
Python; the others run in the calling thread as soon as they are ready, so a
wide graph with a few wrapped functions pays for a handful of thread hand-offs,
not one per op.
"""
from __future__ import annotations

from collections import deque
from concurrent.futures import FIRST_COMPLETED, wait

__all__ = ["run_parallel"]


def run_parallel(plan, vals, ctx, pool, run_one) -> None:
    """Run every step of ``plan`` via ``run_one(index)`` once its dependencies are done."""
    steps = plan.steps
    pending = [len(s.deps) for s in steps]
    dependents: list[list[int]] = [[] for _ in steps]
    for i, s in enumerate(steps):
        for d in s.deps:
            dependents[d].append(i)
    offload = (lambda i: True) if getattr(pool, "offload_all", True) else plan.blocking.__getitem__
    ready = deque(i for i, n in enumerate(pending) if n == 0)
    running: dict = {}
    error = None

    def finished(i):
        for j in dependents[i]:
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)

    while ready or running:
        while ready and error is None:
            i = ready.popleft()
            if offload(i):
                running[pool.submit(run_one, i)] = i
                continue
            try:
                run_one(i)
            except BaseException as e:  # noqa: BLE001 - raised once the running steps end
                error = e
                break
            finished(i)
        if not running:
            break
        done, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for fut in done:
            i = running.pop(fut)
            exc = fut.exception()
            if exc is not None:
                error = error or exc
            elif error is None:
                finished(i)
    if error is not None:
        raise error
