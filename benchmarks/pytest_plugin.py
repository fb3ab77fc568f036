"""What the pytest plugin costs: a generated suite run with and without it.

    python benchmarks/pytest_plugin.py [--tests 500] [--repeats 5]

Each test runs a small ``py_func`` graph (so ``pyfunc_debug`` is imported in
every configuration). Prints the median wall time of the whole ``pytest`` run
with the plugin blocked (``-p no:pyfunc_debug``), loaded without options, and
with ``--pfd-trace`` (all tests pass, so nothing is written); runs alternate so
machine noise hits each alike.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HEADER = '''import numpy as np
import pyfunc_debug as tf

def plus_one(x):
    return x + np.float32(1)

def run(v):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [])
        y = tf.compat.v1.py_func(plus_one, [x], tf.float32)
        with tf.compat.v1.Session() as sess:
            return sess.run(y, {x: v})
'''

CONFIGS = {
    "-p no:pyfunc_debug": ["-p", "no:pyfunc_debug"],
    "plugin, no options": [],
    "--pfd-trace=DIR": ["--pfd-trace", "traces"],
}


def write_suite(directory: str, n: int) -> None:
    body = HEADER + "".join(f"\n\ndef test_{i}():\n    assert run({i}.0) == {i + 1}.0\n"
                            for i in range(n))
    with open(os.path.join(directory, "test_generated.py"), "w") as f:
        f.write(body)


def time_run(directory: str, extra: list) -> float:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "-p", "no:textual-snapshot", *extra]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        write_suite(directory, args.tests)
        times = {name: [] for name in CONFIGS}
        for _ in range(args.repeats):
            for name, extra in CONFIGS.items():
                times[name].append(time_run(directory, extra))
    base = statistics.median(times["-p no:pyfunc_debug"])
    print(f"{args.tests} tests, median of {args.repeats} runs:")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:<22} {med:6.2f} s   x{med / base:.3f}")


if __name__ == "__main__":
    main()
