"""Scaling of build, compile and run with the graph's size (``hotpaths.py --only scale``).

    python benchmarks/scaling.py N      # one size, in this process: prints its JSON row

Each size runs in a fresh process, so one size's memory does not carry over to
the next: per-node build time, first compile and first run per op, steady run
per op, plan bytes per op (RSS growth over the compile, and its Python
allocations by tracemalloc up to 100k ops), and the process's peak RSS up to
the compile (before the control below). A
10-op chain is built, compiled and run first, so once-per-process costs do not
flatter the smallest size. Sizes take turns, so a slow minute on the machine
falls on all of them.

The compile's time is split into the CPU time of our code (user) and of the
kernel (system: mostly the page faults of memory touched for the first time).
A control allocates as many bytes per op in plain Python objects in the same
process, after the compile: its kernel time per op shows what first touches of
memory cost at that process size on this machine, whoever makes them.
"""
from __future__ import annotations

import json
import os
import resource
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
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    plan = sess._plan_for(y, feed)
    compile_s = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    gc.collect()
    plan_bytes = _rss() - rss0
    peak = _peak_rss()   # before the control, whose bytes are not the program's
    control_sys = _first_touch(n, max(plan_bytes / n, 64))
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
    return {"n": n, "build": build / n, "compile": compile_s / n,
            "compile_user": (r1.ru_utime - r0.ru_utime) / n,
            "compile_sys": (r1.ru_stime - r0.ru_stime) / n,
            "faults": (r1.ru_minflt - r0.ru_minflt) / n, "control_sys": control_sys,
            "first_run": first / n,
            "steady": steady / n, "plan_bytes": plan_bytes / n, "plan_traced": traced / n,
            "peak_rss": peak}


def _first_touch(n: int, per_op: float) -> float:
    """Kernel seconds per op to allocate ``per_op`` bytes an op of fresh plain objects."""
    import gc
    items = max(1, int(per_op // 88))   # 8-tuples, 88 bytes each with their header
    was_on = gc.isenabled()
    gc.disable()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    kept = [[(j, j, j, j, j, j, j, None) for j in range(items)] for _ in range(n)]
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    del kept
    if was_on:
        gc.enable()
    return (r1.ru_stime - r0.ru_stime) / n


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
    """Each size in ``processes`` fresh processes (three at 1M ops), the sizes taking turns;
    the medians, as ratios to the first size."""
    reps: dict = {n: [] for n in sizes}
    for r in range(processes):
        for n in sizes:
            if r < (processes if n < 1_000_000 else 3):
                reps[n].append(json.loads(subprocess.run(
                    [sys.executable, __file__, str(n)], check=True,
                    capture_output=True, text=True).stdout))
    rows = {}
    for n, got in reps.items():
        rows[n] = {k: statistics.median(r[k] for r in got) for k in got[0]}
        rows[n]["reps"] = len(got)
    base = rows[sizes[0]]
    print(f"\nscaling: chains of py_func, each size in a fresh process (ratio = per-op value / "
          f"its value at {sizes[0]:,} ops; targets ≤1.3x for build and compile, ≤1 KiB plan/op)"
          f"\n  plan B/op: RSS growth over the compile; traced: its Python allocations "
          f"(tracemalloc, up to 100k ops); the process's peak RSS up to the compile")
    print(f"  {'ops':>9} {'reps':>4} {'build µs/node':>14} {'compile µs/op':>14} "
          f"{'1st run µs/op':>14} {'steady µs/op':>13} {'plan B/op':>10} {'traced':>7} {'peak RSS':>9}")
    for n, r in rows.items():
        print(f"  {n:9,} {r['reps']:4} {r['build'] * 1e6:7.2f} ({r['build'] / base['build']:4.2f}x)"
              f" {r['compile'] * 1e6:7.2f} ({r['compile'] / base['compile']:4.2f}x)"
              f" {r['first_run'] * 1e6:7.2f} ({r['first_run'] / base['first_run']:4.2f}x)"
              f" {r['steady'] * 1e6:6.2f} ({r['steady'] / base['steady']:4.2f}x)"
              f" {r['plan_bytes']:10.0f} {r['plan_traced']:7.0f} {r['peak_rss'] / 2**20:7.0f} MiB")
    print("  the compile's CPU time: our code (user) and the kernel's (system), page faults per op;"
          "\n  control: kernel time per op to allocate as many bytes in plain objects, same process")
    print(f"  {'ops':>9} {'user µs/op':>14} {'system µs/op':>13} {'faults/op':>10} "
          f"{'control system µs/op':>21}")
    for n, r in rows.items():
        print(f"  {n:9,} {r['compile_user'] * 1e6:6.2f} ({r['compile_user'] / base['compile_user']:4.2f}x)"
              f" {r['compile_sys'] * 1e6:13.2f} {r['faults']:10.3f} {r['control_sys'] * 1e6:21.2f}")


if __name__ == "__main__":
    print(json.dumps(child(int(sys.argv[1]))))
