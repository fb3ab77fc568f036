"""Ops on a Dask cluster: the cost of a remote op, and of fusing a chain into one task.

    python benchmarks/dask_ops.py [--n 100] [--runs 10]

On a ``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)``,
each a median of ``--runs`` runs of an ``--n``-op ``py_func`` chain
(``f(x) = x + 1`` on a float64 scalar):

- all ops local (``Session()``), per op;
- one op on a worker vs the same op local: the remote op's overhead (one task);
- the chain on one worker (fused: one task) vs alternating between the two
  workers (``--n`` tasks, every value crossing processes);
- one op on a worker with a debugger attached that breaks on errors
  (``--break-on error``): its task may ask the caller, so each run also makes
  and drops the pair of Dask queues a question would travel on.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pyfunc_debug as pfd


def _plus_one(x):
    return x + 1


def _chain(n: int, device_of):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.placeholder(pfd.float64, [])
        y = x
        for i in range(n):
            with pfd.device(device_of(i)):
                y = pfd.numpy_function(_plus_one, [y], pfd.float64)
    return g, x, y


def _median_run(sess, x, y, runs: int) -> float:
    sess.run(y, {x: 0.0})  # compile, warm the workers
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run(y, {x: np.float64(0.0)})
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(n: int = 100, runs: int = 10) -> dict:
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                           dashboard_address=None, silence_logs=50)
    client = Client(cluster)
    try:
        out = {}
        g, x, y = _chain(n, lambda i: "")
        out["local per op"] = _median_run(pfd.Session(graph=g), x, y, runs) / n
        g, x, y = _chain(1, lambda i: "")
        one_local = _median_run(pfd.Session(graph=g, cluster=client), x, y, runs)
        g, x, y = _chain(1, lambda i: "/job:worker/task:0")
        one_remote = _median_run(pfd.Session(graph=g, cluster=client), x, y, runs)
        out["remote op overhead"] = one_remote - one_local
        from pyfunc_debug.debug import Debugger
        dbg = Debugger(on_pause=lambda p: "continue")
        dbg.break_on(on_error=True)
        with dbg:
            on_error = _median_run(pfd.Session(graph=g, cluster=client), x, y, runs)
        out["on_error overhead"] = on_error - one_remote
        g, x, y = _chain(n, lambda i: "/job:worker/task:0")
        out["fused chain"] = _median_run(pfd.Session(graph=g, cluster=client), x, y, runs)
        g, x, y = _chain(n, lambda i: f"/job:worker/task:{i % 2}")
        out["alternating chain"] = _median_run(pfd.Session(graph=g, cluster=client), x, y, runs)
        return out
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    r = main(args.n, args.runs)
    print(f"local op:                {r['local per op'] * 1e6:9.1f} µs per op")
    print(f"remote op overhead:      {r['remote op overhead'] * 1e3:9.2f} ms per task")
    print(f"+ --break-on error:      {r['on_error overhead'] * 1e3:9.2f} ms per task")
    print(f"{args.n} ops on one worker:  {r['fused chain'] * 1e3:9.1f} ms (one task)")
    print(f"{args.n} ops alternating:    {r['alternating chain'] * 1e3:9.1f} ms "
          f"({r['alternating chain'] / r['fused chain']:.0f}x the fused chain)")
