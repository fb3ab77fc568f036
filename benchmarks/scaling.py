"""Scaling of build, compile and run with the graph's size (``hotpaths.py --only scale``).

    python benchmarks/scaling.py N      # one size, in this process: prints its JSON row

Each size runs in a fresh process, so one size's memory does not carry over to
the next: per-node build time, first compile and first run per op, steady run
per op, plan bytes per op (RSS growth over the compile, and its Python
allocations by tracemalloc up to 100k ops), and the process's peak RSS. A
10-op chain is built, compiled and run first, so once-per-process costs do not
flatter the smallest size.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import pyfunc_debug as pfd
import hotpaths  # beside this file (it imports this module: use it at call time)


def child(n: int) -> dict:
    import gc
    g, x, y = hotpaths.chain(10)   # once-per-process costs are not in the 1k figures
    pfd.Session(graph=g).run(y, {x: np.float32(1.0)})
    gc.collect()
    t0 = time.perf_counter()
    g, x, y = hotpaths.chain(n)
    build = time.perf_counter() - t0
    sess = pfd.Session(graph=g)
    feed = {x: np.float32(1.0)}
    gc.collect()
    rss0 = _rss()
    t0 = time.perf_counter()
    plan = sess._plan_for(y, feed)
    compile_s = time.perf_counter() - t0
    gc.collect()
    plan_bytes = _rss() - rss0
    t0 = time.perf_counter()
    sess.run(y, feed)
    first = time.perf_counter() - t0
    steady = hotpaths.best(lambda: sess.run(y, feed), 3)
    assert plan is sess._plan_for(y, feed)
    del plan
    sess._plans.clear()
    traced = 0
    if n <= 100_000:  # the same compile again, its Python allocations counted
        import tracemalloc
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        plan = sess._plan_for(y, feed)
        traced = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
    return {"n": n, "build": build / n, "compile": compile_s / n, "first_run": first / n,
            "steady": steady / n, "plan_bytes": plan_bytes / n, "plan_traced": traced / n,
            "peak_rss": _peak_rss()}


def _peak_rss() -> int:
    """This process's peak RSS (VmHWM; ``ru_maxrss`` would count the parent it forked from)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def case_scale(sizes: list, processes: int) -> None:
    """Each size in ``processes`` fresh processes (three at 1M ops); the medians, as ratios to the
    first size."""
    rows = {}
    for n in sizes:
        reps = [json.loads(subprocess.run(
            [sys.executable, __file__, str(n)], check=True,
            capture_output=True, text=True).stdout)
            for _ in range(processes if n < 1_000_000 else 3)]
        rows[n] = {k: statistics.median(r[k] for r in reps) for k in reps[0]}
        rows[n]["spread_build"] = (min(r["build"] for r in reps), max(r["build"] for r in reps))
        rows[n]["reps"] = len(reps)
    base = rows[sizes[0]]
    print(f"\nscaling: chains of py_func, each size in a fresh process (ratio = per-op value / "
          f"its value at {sizes[0]:,} ops; targets ≤1.3x for build and compile, ≤1 KiB plan/op)"
          f"\n  plan B/op: RSS growth over the compile; traced: its Python allocations "
          f"(tracemalloc, up to 100k ops); peak RSS of the whole process")
    print(f"  {'ops':>9} {'reps':>4} {'build µs/node':>14} {'compile µs/op':>14} "
          f"{'1st run µs/op':>14} {'steady µs/op':>13} {'plan B/op':>10} {'traced':>7} {'peak RSS':>9}")
    for n, r in rows.items():
        print(f"  {n:9,} {r['reps']:4} {r['build'] * 1e6:7.2f} ({r['build'] / base['build']:4.2f}x)"
              f" {r['compile'] * 1e6:7.2f} ({r['compile'] / base['compile']:4.2f}x)"
              f" {r['first_run'] * 1e6:7.2f} ({r['first_run'] / base['first_run']:4.2f}x)"
              f" {r['steady'] * 1e6:6.2f} ({r['steady'] / base['steady']:4.2f}x)"
              f" {r['plan_bytes']:10.0f} {r['plan_traced']:7.0f} {r['peak_rss'] / 2**20:7.0f} MiB")


if __name__ == "__main__":
    print(json.dumps(child(int(sys.argv[1]))))
