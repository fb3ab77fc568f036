"""Inter-op parallelism: run steps whose dependencies are done on a thread pool.

Results are identical to the sequential run: each step still reads exactly
the slots its inputs name; only the order of independent steps changes.
"""
from __future__ import annotations

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
    running = {}

    def submit(i):
        running[pool.submit(run_one, i)] = i

    for i, n in enumerate(pending):
        if n == 0:
            submit(i)
    error = None
    while running:
        done, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for fut in done:
            i = running.pop(fut)
            exc = fut.exception()
            if exc is not None:
                error = error or exc
                continue
            if error is None:
                for j in dependents[i]:
                    pending[j] -= 1
                    if pending[j] == 0:
                        submit(j)
    if error is not None:
        raise error
