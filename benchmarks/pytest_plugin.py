"""What the pytest plugin costs: start-up of an unrelated project, and a graph suite.

    python benchmarks/pytest_plugin.py [--rounds 15] [--suite 300] [--suite-rounds 3]
                                       [--isolated]

Start-up (SPEC 5b: the entry point imports nothing heavy; goal < 20 ms): a
temporary project with one trivial test (no numpy, no pyfunc_debug) is run with
``pytest`` as installed (the plugin autoloaded, no options) and with
``-p no:pyfunc_debug``, in alternating rounds so machine noise hits both alike;
prints wall and CPU times, the median per-round difference in ms and ratio, and
what ``--pfd-trace`` costs when it is used (it imports the engine). Also the entry
module's own import time (``python -X importtime``, after pytest): the part of
the difference that two whole processes measure only through their noise.
``--isolated`` turns off the other installed plugins
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``; ours comes by ``PYTEST_PLUGINS``).

Suite (``--suite N`` tests, 0 skips it): each test runs a small ``py_func`` graph
(so ``pyfunc_debug`` is imported in every configuration); the whole run's median
time with the plugin blocked, loaded without options, and with ``--pfd-trace``
(all tests pass, so nothing is written).

CI runs it tiny (``--isolated --rounds 1 --suite 1 --suite-rounds 1``, from
tests/test_pytest_plugin.py) to keep it working; the numbers mean something only
at the default sizes.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

TRIVIAL = "def test_trivial():\n    assert 1 + 1 == 2\n"

GRAPH = '''import numpy as np
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

BLOCKED = "without the plugin"
LOADED = "plugin, no options"
TRACING = "--pfd-trace=DIR"
# name -> (pytest arguments, environment variables)
CONFIGS = {
    BLOCKED: (["-p", "no:pyfunc_debug"], {}),
    LOADED: ([], {}),
    TRACING: (["--pfd-trace", "traces"], {}),
}
# --isolated: no plugin autoloads; ours comes by PYTEST_PLUGINS, not `-p pyfunc_debug`,
# which would add a scan of every installed distribution's entry points to its side only
OURS = {"PYTEST_PLUGINS": "pyfunc_debug_pytest"}
ISOLATED = {
    BLOCKED: ([], {}),
    LOADED: ([], OURS),
    TRACING: (["--pfd-trace", "traces"], OURS),
}


def make_project(directory: str, body: str) -> None:
    """One test file and an ini that makes ``directory`` the rootdir (nothing above is read)."""
    with open(os.path.join(directory, "pytest.ini"), "w") as f:
        f.write("[pytest]\n")
    with open(os.path.join(directory, "test_bench.py"), "w") as f:
        f.write(body)


def time_run(directory: str, extra: list, env: dict) -> tuple:
    """(wall, CPU) seconds of one whole ``python -m pytest`` process in ``directory``.

    CPU time (user + system) is what other processes on a busy machine disturb least."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=directory, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def rounds(directory: str, n: int, isolated: bool) -> dict:
    """``n`` alternating rounds of every configuration: name -> list of (wall, CPU) seconds."""
    configs = ISOLATED if isolated else CONFIGS
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_PLUGINS"}
    if isolated:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    times = {name: [] for name in configs}
    for _ in range(n):
        for name, (extra, more_env) in configs.items():
            times[name].append(time_run(directory, extra, {**env, **more_env}))
    return times


def entry_import_us(repeats: int) -> float:
    """Median cumulative import time (µs) of ``pyfunc_debug_pytest`` once pytest is loaded."""
    code = "import pytest; import pyfunc_debug_pytest"
    found = []
    for _ in range(repeats):
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                             capture_output=True, text=True, check=True).stderr
        match = re.search(r"^import time:\s+\d+ \|\s+(\d+) \|\s*pyfunc_debug_pytest$", err, re.M)
        if match:
            found.append(int(match.group(1)))
    return statistics.median(found) if found else float("nan")


def startup(n: int, isolated: bool) -> None:
    with tempfile.TemporaryDirectory() as directory:
        make_project(directory, TRIVIAL)
        times = rounds(directory, n, isolated)
    others = "no other plugins" if isolated else "all installed plugins"
    print(f"start-up of a one-test project ({others}), {n} alternating rounds:")
    print(f"  {'':<20} {'wall median':>12} {'wall min':>10} {'CPU median':>11}")
    for name, ts in times.items():
        walls, cpus = [w for w, _ in ts], [c for _, c in ts]
        print(f"  {name:<20} {_ms(statistics.median(walls)):>12} {_ms(min(walls)):>10} "
              f"{_ms(statistics.median(cpus)):>11}")
    # each round's own difference: a slow spell of the machine hits both sides of it
    for i, what in ((0, "wall"), (1, "CPU")):
        pairs = [(w[i], b[i]) for w, b in zip(times[LOADED], times[BLOCKED])]
        diff = statistics.median(w - b for w, b in pairs)
        ratio = statistics.median(w / b for w, b in pairs)
        print(f"  plugin vs without, {what} (median per round): {diff * 1e3:+.1f} ms, "
              f"ratio x{ratio:.3f}")
    print(f"  import of the entry module after pytest: {entry_import_us(max(n, 3)) / 1e3:.2f} ms")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def suite(tests: int, n: int, isolated: bool) -> None:
    body = GRAPH + "".join(f"\n\ndef test_{i}():\n    assert run({i}.0) == {i + 1}.0\n"
                           for i in range(tests))
    with tempfile.TemporaryDirectory() as directory:
        make_project(directory, body)
        times = rounds(directory, n, isolated)
    base = statistics.median(w for w, _ in times[BLOCKED])
    print(f"a suite of {tests} graph tests, median of {n} runs:")
    for name, ts in times.items():
        med = statistics.median(w for w, _ in ts)
        print(f"  {name:<22} {med:8.2f} s    x{med / base:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="start-up rounds (default 15)")
    parser.add_argument("--suite", type=int, default=300, help="tests in the suite (0: skip)")
    parser.add_argument("--suite-rounds", type=int, default=3)
    parser.add_argument("--isolated", action="store_true",
                        help="no other plugin autoloads: less noise, and faster")
    args = parser.parse_args()
    startup(args.rounds, args.isolated)
    if args.suite > 0:
        suite(args.suite, args.suite_rounds, args.isolated)


if __name__ == "__main__":
    main()
