"""Inter-op parallelism for observed and debugged runs: steps whose dependencies are
done, some on a pool. (Runs nobody watches start inline instead: ``overlap.py``.)

Results are identical to the sequential run: each step still reads exactly
the slots its inputs name; only the order of independent steps changes.

An inter-op pool (``Session(inter_op_threads=N)``) gets every step that has
company — another ready or running step — with at most N in flight; a step
that is the only one ready while nothing runs (a sequential stretch) runs
inline, so a chain never pays for a thread hand-off. A plan with no two independent steps
(``plan.chain``) never comes here. The helper threads that keep wrapped
functions from blocking each other (``workers.Helpers``, ``offload_all =
False``) always get the steps that call Python, and only those.

Finished steps come back through one queue, so scheduling is O(steps).
"""
from __future__ import annotations

import queue
from collections import deque

__all__ = ["run_parallel"]


def run_parallel(plan, vals, ctx, pool, run_one) -> None:
    """Run every step of ``plan`` via ``run_one(index)`` once its dependencies are done."""
    steps = plan.steps
    pending = [len(s.deps) for s in steps]
    dependents: list[list[int]] = [[] for _ in steps]
    for i, s in enumerate(steps):
        for d in s.deps:
            dependents[d].append(i)
    offload_all = getattr(pool, "offload_all", True)
    blocking = plan.blocking
    width = getattr(pool, "_max_workers", 1 << 30)
    ready = deque(i for i, n in enumerate(pending) if n == 0)
    finished_q: queue.SimpleQueue = queue.SimpleQueue()
    running = 0
    error = None

    def finished(i):
        for j in dependents[i]:
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)

    def submit(i):
        fut = pool.submit(run_one, i)
        fut.add_done_callback(lambda f, i=i: finished_q.put((i, f)))

    def collect(block: bool) -> None:
        """Account for finished pool steps (waiting for one when ``block``)."""
        nonlocal running, error
        try:
            item = finished_q.get() if block else finished_q.get_nowait()
        except queue.Empty:
            return
        while True:
            i, fut = item
            running -= 1
            exc = fut.exception()
            if exc is not None:
                error = error or exc
            elif error is None:
                finished(i)
            try:
                item = finished_q.get_nowait()
            except queue.Empty:
                return

    while ready or running:
        while ready and error is None:
            if running:
                collect(False)  # a pool thread may be free again: keep it busy
            if offload_all and running >= width:
                collect(True)  # the pool is full: wait for a free thread
                continue
            i = ready.popleft()
            if (running or ready) if offload_all else blocking[i]:
                submit(i)
                running += 1
                continue
            try:
                run_one(i)
            except BaseException as e:  # noqa: BLE001 - raised once the running steps end
                error = e
                break
            finished(i)
        if not running:
            break
        collect(True)
    if error is not None:
        raise error
