"""Events through the bridge into a headless app: events/s and memory.

    python benchmarks/tui_throughput.py [--counts 100000 1000000] [--runs 50] [--ops 1000]

For each count: a worker thread pushes that many events (recorded from a
1000-op chain, replayed at full speed into the bridge's worker-side entry)
while the headless app (``pyfunc_debug.tui``) drains them on its timer, applies them to the model
and writes the log; we time until the app has applied the last one. Then a
real run: the 1000-op chain executed under the debugger until ~100,000 events.
Prints events/s, the log's line count (bounded) and the growth of resident memory.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import threading
import time

import numpy as np

import pyfunc_debug as pfd
from pyfunc_debug.tui.app import PfdApp


OPS = 1000   # ops of the chain the events come from (--ops)


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def chain(n: int):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32)
        y = x
        for _ in range(n):
            y = pfd.numpy_function(lambda v: v + np.float32(1), [y], pfd.float32)
    return g, x, y


def sample_events(ops: int):
    g, x, y = chain(ops)
    with pfd.trace() as tr, pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.float32(0)})
    return tr.events


async def push(count: int, ops: int = OPS) -> dict:
    """Synthetic: ``count`` recorded events pushed by a thread into the bridge."""
    events = sample_events(ops)
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext)
    before = _rss()
    async with app.run_test(size=(120, 40)) as pilot:
        def producer():
            put = app.bridge._on_event
            for i in range(count):
                put(events[i % len(events)])
        t0 = time.perf_counter()
        th = threading.Thread(target=producer)
        th.start()
        while app.model.events < count:
            await pilot.pause(0.01)
        elapsed = time.perf_counter() - t0
        th.join()
        log_lines = app.query_one("#log").line_count
        app.stop_ticking()   # the app's timer must not tick while its screen is torn down
    return {"events": count, "rate": count / elapsed, "log_lines": log_lines,
            "rss": _rss() - before}


async def real(runs: int, ops: int = OPS) -> dict:
    g, x, y = chain(ops)

    def target():
        with pfd.Session(graph=g) as sess:
            for _ in range(runs):
                sess.run(y, {x: np.float32(0)})
    app = PfdApp(target, break_on=(), suspend=contextlib.nullcontext)
    before = _rss()
    t0 = time.perf_counter()   # the worker starts as the app mounts
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.target_done or app.model.events < len(app.bridge.recorded) \
                or app.bridge.events:
            await pilot.pause(0.01)
        elapsed = time.perf_counter() - t0
        n = app.model.events
        log_lines = app.query_one("#log").line_count
        app.stop_ticking()
    await asyncio.to_thread(app.worker_thread.join, 10)
    return {"events": n, "rate": n / elapsed, "log_lines": log_lines, "rss": _rss() - before}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--runs", type=int, default=50, help="runs of the chain in the real run")
    ap.add_argument("--ops", type=int, default=OPS, help="ops in the chain")
    args = ap.parse_args(argv)
    for count in args.counts:
        r = asyncio.run(push(count, args.ops))
        print(f"pushed {r['events']:>9,} events: {r['rate']:>9,.0f} events/s into the app; "
              f"log holds {r['log_lines']:,} lines; memory +{r['rss'] / 2**20:.0f} MiB "
              "(the bridge keeps every event for export)")
    r = asyncio.run(real(args.runs, args.ops))
    print(f"real run {r['events']:>9,} events: {r['rate']:>9,.0f} events/s end to end ({args.ops}-op "
          f"chain under the debugger); log holds {r['log_lines']:,} lines; memory "
          f"+{r['rss'] / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
