"""Per-op overhead of a 1000-op ``py_func`` chain against calling ``f`` directly.

    python benchmarks/overhead.py [--n 1000] [--repeats 7]

Prints, for a float32 scalar and a 1000x1000 float32 array: the direct Python
loop (the baseline, measured in the same run), ``Session.run`` of the chain,
per-op time and overhead per op, and the time to build the graph. Medians of
several repeats; ratios are what to compare across machines.
"""
from __future__ import annotations

import argparse
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


def build_time(n: int, repeats: int) -> float:
    return median_time(lambda: build_chain(n), repeats)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    main()
