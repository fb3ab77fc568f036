"""Per-op overhead of a 1000-op ``py_func`` chain against calling ``f`` directly.

    python benchmarks/overhead.py [--n 1000] [--repeats 7] [--events 1000000]
                                  [--stream-events 10000000]

Prints, for a float32 scalar and a 1000x1000 float32 array: the direct Python
loop (the baseline, measured in the same run), ``Session.run`` of the chain,
per-op time and overhead per op, and the time to build the graph; then the
same chain observed (one no-op subscriber, ``trace(capture="summary")``,
``trace(path="x.jsonl")``) as ratios to the unobserved run; then the rate of
recording ``--events`` events and the memory ``trace()`` holds for them, the
JSONL writer's rate, Chrome export and ``load_trace`` time for those events;
with ``--stream-events`` the RSS growth while a streamed JSONL trace records
that many events (it should stay flat).
Medians of several repeats; ratios are what to compare across machines.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import statistics
import time

import numpy as np

import pyfunc_debug as pfd


def f(x):
    return x + 1


def build_chain(n: int, dtype=pfd.float32):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(dtype)
        y = x
        for _ in range(n):
            y = pfd.compat.v1.py_func(f, [y], dtype)
    return g, x, y


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def direct_loop(x0, n):
    x = x0
    for _ in range(n):
        x = f(x)
    return x


def measure(label: str, value, n: int, repeats: int) -> dict:
    g, x, y = build_chain(n)
    sess = pfd.Session(graph=g)
    feed = {x: value}
    expected = direct_loop(value, n)
    got = sess.run(y, feed)
    assert np.allclose(got, expected), (got, expected)
    sess.run(y, feed)  # warm: plan compiled and cached
    base = median_time(lambda: direct_loop(value, n), repeats)
    run = median_time(lambda: sess.run(y, feed), repeats)
    return {"label": label, "direct_us_per_op": base / n * 1e6, "run_us_per_op": run / n * 1e6,
            "overhead_us_per_op": (run - base) / n * 1e6, "ratio": run / base}


def observed(value, n: int, repeats: int, tmp: str) -> dict:
    """The chain under each kind of listener, as µs/op and ratio to no listener."""
    g, x, y = build_chain(n)
    sess = pfd.Session(graph=g)
    feed = {x: value}
    sess.run(y, feed)
    modes = {
        "no subscriber": contextlib.nullcontext,
        "no-op subscriber": lambda: pfd.events.subscribe(lambda e: None),
        "trace(capture='summary')": lambda: pfd.trace(capture="summary"),
        "trace(path='x.jsonl')": lambda: pfd.trace(os.path.join(tmp, "x.jsonl")),
    }
    times = {}
    for label, make in modes.items():
        def one(make=make):
            with make():
                sess.run(y, feed)
        one()
        times[label] = median_time(one, repeats)
    base = times["no subscriber"]
    return {label: (t / n * 1e6, t / base, (t - base) / n * 1e6) for label, t in times.items()}


def debugger_costs(n: int, repeats: int) -> dict:
    """The scalar chain with a debugger attached (no breakpoint matching), and
    ``debug.breakpoint`` ops with no debugger attached, against the plain chain."""
    g, x, y = build_chain(n)
    sess = pfd.Session(graph=g)
    feed = {x: np.float32(1.0)}
    sess.run(y, feed)
    base = median_time(lambda: sess.run(y, feed), repeats)
    dbg = pfd.debug.Debugger(on_pause=lambda pause: "continue")
    dbg.break_on(op="no-such-op")
    with dbg:
        sess.run(y, feed)
        attached = median_time(lambda: sess.run(y, feed), repeats)
    # the same chain with a debug.breakpoint op after every py_func
    g2 = pfd.Graph()
    with g2.as_default():
        x2 = pfd.compat.v1.placeholder(pfd.float32)
        y2 = x2
        for _ in range(n):
            y2 = pfd.debug.breakpoint(pfd.compat.v1.py_func(f, [y2], pfd.float32))
    sess2 = pfd.Session(graph=g2)
    sess2.run(y2, {x2: np.float32(1.0)})
    with_bps = median_time(lambda: sess2.run(y2, {x2: np.float32(1.0)}), repeats)
    return {"base": base / n * 1e6, "attached": attached / n * 1e6, "ratio": attached / base,
            "breakpoint_op": (with_bps - base) / n * 1e6}


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _chain_session():
    g, x, y = build_chain(1000)
    sess = pfd.Session(graph=g)
    feed = {x: np.float32(1.0)}
    sess.run(y, feed)
    return sess, y, feed


def recording_rate(n_events: int, tmp: str) -> dict:
    """Events/s recording ``n_events`` in memory and to JSONL; memory held in memory; the
    JSONL writer alone; Chrome export and ``load_trace`` of the same events."""
    sess, y, feed = _chain_session()
    runs = max(1, n_events // 2002)  # RunStart + OpStart/OpEnd per op + RunEnd
    result = {}
    before = _rss_bytes()
    t0 = time.perf_counter()
    with pfd.trace(capture="summary") as tr:
        for _ in range(runs):
            sess.run(y, feed)
    elapsed = time.perf_counter() - t0
    events = tr.events
    result["memory"] = (len(events), len(events) / elapsed, _rss_bytes() - before)
    path = os.path.join(tmp, "rate.jsonl")
    t0 = time.perf_counter()
    with pfd.trace(path) as streamed:
        for _ in range(runs):
            sess.run(y, feed)
    elapsed = time.perf_counter() - t0
    n = streamed.event_count
    result["jsonl"] = (n, n / elapsed, os.path.getsize(path))
    t0 = time.perf_counter()
    tr.save(os.path.join(tmp, "again.jsonl"))
    result["writer"] = len(events) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    tr.save(os.path.join(tmp, "chrome.json"))
    result["chrome"] = (len(events), time.perf_counter() - t0,
                        os.path.getsize(os.path.join(tmp, "chrome.json")))
    del tr, events
    t0 = time.perf_counter()
    loaded = pfd.load_trace(path)
    result["load"] = (len(loaded), time.perf_counter() - t0)
    return result


def streamed_rss(n_events: int, tmp: str) -> dict:
    """RSS while ``trace(path="x.jsonl")`` streams ``n_events`` events: growth above the
    start (after one warm run), sampled every 50 runs; it should stay flat."""
    sess, y, feed = _chain_session()
    runs = max(1, n_events // 2002)
    path = os.path.join(tmp, "stream.jsonl")
    samples = []
    t0 = time.perf_counter()
    with pfd.trace(path) as tr:
        sess.run(y, feed)
        start = _rss_bytes()
        for i in range(runs - 1):
            sess.run(y, feed)
            if i % 50 == 0:
                samples.append(_rss_bytes() - start)
    elapsed = time.perf_counter() - t0
    samples.append(_rss_bytes() - start)
    return {"events": tr.event_count, "rate": tr.event_count / elapsed,
            "max_growth": max(samples), "end_growth": samples[-1],
            "file": os.path.getsize(path)}


def build_time(n: int, repeats: int) -> float:
    return median_time(lambda: build_chain(n), repeats)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--stream-events", type=int, default=0,
                    help="also stream this many events to JSONL and report RSS growth "
                         "(10000000 takes about a minute and a half)")
    args = ap.parse_args(argv)
    if args.stream_events:  # first: memory freed by later sections would hide growth
        with tempfile.TemporaryDirectory() as tmp:
            stream = streamed_rss(args.stream_events, tmp)
        print(f"streaming {stream['events']:,} events to JSONL ({stream['rate']:,.0f} events/s, "
              f"{stream['file'] / 2**30:.1f} GiB file): RSS growth max "
              f"{stream['max_growth'] / 2**20:.1f} MiB, at the end "
              f"{stream['end_growth'] / 2**20:.1f} MiB\n")
    rows = [measure("scalar float32", np.float32(1.0), args.n, args.repeats),
            measure("1000x1000 float32 (4 MB)", np.ones((1000, 1000), np.float32),
                    args.n, max(3, args.repeats // 2))]
    print(f"chain of {args.n} py_func ops f(x) = x + 1, median of {args.repeats} repeats")
    print(f"{'payload':28} {'direct µs/op':>13} {'run µs/op':>10} {'overhead µs/op':>15} {'ratio':>7}")
    for r in rows:
        print(f"{r['label']:28} {r['direct_us_per_op']:13.3f} {r['run_us_per_op']:10.3f} "
              f"{r['overhead_us_per_op']:15.3f} {r['ratio']:7.2f}x")
    bt = build_time(args.n, args.repeats)
    print(f"building the {args.n}-op graph: {bt * 1e3:.2f} ms ({bt / args.n * 1e6:.2f} µs/op)")
    with tempfile.TemporaryDirectory() as tmp:
        for label, value, reps in (("scalar float32", np.float32(1.0), args.repeats),
                                   ("4 MB float32", np.ones((1000, 1000), np.float32), 3)):
            print(f"\nobserved chain, {label}: {'µs/op':>8} {'ratio':>7} {'added µs/op':>12}")
            for mode, (us, ratio, added) in observed(value, args.n, reps, tmp).items():
                print(f"  {mode:30} {us:8.3f} {ratio:6.2f}x {added:12.3f}")
        rates = recording_rate(args.events, tmp)
    d = debugger_costs(args.n, args.repeats)
    print(f"\ndebugger attached, no breakpoint matching (scalar chain): {d['attached']:.3f} µs/op, "
          f"{d['ratio']:.2f}x the unobserved run ({d['base']:.3f} µs/op)")
    print(f"a debug.breakpoint op with no debugger attached: {d['breakpoint_op']:.3f} µs each")
    n, rate, mem = rates["memory"]
    print(f"\nrecording {n:,} events in memory: {rate:,.0f} events/s; "
          f"trace() holds them in {mem / 2**20:.0f} MiB ({mem / max(n, 1):.0f} B/event)")
    n, rate, size = rates["jsonl"]
    print(f"recording {n:,} events to JSONL: {rate:,.0f} events/s, running the ops included "
          f"({size / 2**20:.0f} MiB file); the JSONL writer alone: {rates['writer']:,.0f} events/s")
    n, secs, size = rates["chrome"]
    print(f"Chrome JSON export of {n:,} events: {secs:.2f} s ({size / 2**20:.0f} MiB)")
    n, secs = rates["load"]
    print(f"load_trace of {n:,} events: {secs:.2f} s ({n / secs:,.0f} events/s)")


if __name__ == "__main__":
    main()
