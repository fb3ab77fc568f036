"""The hot paths of issue 12, each as a ratio to a baseline timed in the same run.

    python benchmarks/hotpaths.py [--rounds 7] [--only NAME ...] [--scale-max 100000] [--cpu]

Every case runs ``--rounds`` rounds; a round times the baseline and the case
back to back (best of a few calls each), so machine load hits both alike. It
prints the median ratio and the spread (min–max over the rounds). Cases:

- ``py_function``: a chain of ``py_function`` on a 1000x1000 float32 array
  against the same chain with ``numpy_function``;
- ``tracing``: the scalar chain under ``subscribe(capture="none")``,
  ``subscribe(capture="summary")``, ``trace(capture="summary")`` and
  ``trace(path="x.jsonl")`` (and its JSONL writer subscribed alone, without the
  recorder's window and counts); the 4 MB chain under ``trace(capture="summary")``;
- ``breakpoints``: ``when=`` breakpoints that never fire (expressions on
  inputs, on outputs and on both, ``has_inf_or_nan``, ``nan_producer``, a glob
  with a condition);
- ``threads``: ``Session(inter_op_threads=2)`` on a chain and on a wide graph of
  GIL-releasing numpy work, against the default session;
- ``scheduling`` (issue 28): in a default ``Session()`` a wide graph (``--width``
  independent scalar ``py_func`` branches summed pairwise) against a chain of
  as many ops; ``inter_op_threads=2`` on that wide graph, and on one whose
  branches run ~20 µs of Python holding the GIL, against
  ``inter_op_threads=1``; a wide graph of GIL-releasing numpy work (64k
  elements a branch) under ``inter_op_threads=2`` against a plain
  ``ThreadPoolExecutor(2)`` doing the same work;
- ``scale`` (``scaling.py``): building, compiling and running chains of 1k..``--scale-max`` ops,
  each size in a fresh process (per-node times, plan bytes per op, peak RSS).
  ``--scale-max 1000000`` takes a few minutes;
- ``tensorflow`` (with the ``tensorflow`` extra; skipped without it): the
  scalar ``py_func`` chain and 4 MB ``numpy_function``/``py_function`` chains
  against the same graphs in TensorFlow's own v1 ``Session``, in this process
  (the ratio is pyfunc_debug's time over TensorFlow's). It runs last by
  default: TensorFlow's thread pools stay in the process once imported.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

import pyfunc_debug as pfd
import scaling  # beside this file

BIG = (1000, 1000)
ARRAY_CHAIN = 50          # ops of the chains on BIG arrays
WIDE = ((8, 2_000_000), (1000, 1000))   # (branches, float64 elements) of the threads case
SCALE_SIZES = (1000, 10_000, 100_000, 1_000_000)
SCALE_REPS = 5            # fresh processes per size (3 at 1M ops): one compile's time is noisy


def add_one(x):
    return x + 1


def py_numpy_body(x):
    return x.numpy() + 1   # numpy() copies, as TF's does (TF#15)


def py_asarray_body(x):
    return np.asarray(x) + 1   # reads the input without a copy


def chain(n, kind="py_func", dtype=None, body=add_one, lib=pfd):
    """A chain of ``n`` wrapped-function ops; ``lib`` is pyfunc_debug or TensorFlow itself
    (the same API: ``import pyfunc_debug as tf``)."""
    dtype = lib.float32 if dtype is None else dtype
    g = lib.Graph()
    with g.as_default():
        x = lib.compat.v1.placeholder(dtype)
        y = x
        for _ in range(n):
            if kind == "py_function":
                y = lib.py_function(body, [y], dtype)
            elif kind == "numpy_function":
                y = lib.numpy_function(body, [y], dtype)
            else:
                y = lib.compat.v1.py_func(body, [y], dtype)
    return g, x, y


CLOCK = time.perf_counter   # --cpu: time.process_time (all threads' CPU time)


def best(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return min(times)


def ratios(base, cases: dict, rounds: int, calls: int) -> dict:
    """Per case: (median ratio to ``base``, min, max, median seconds of the case)."""
    for fn in [base, *cases.values()]:
        fn()  # warm: plans compiled, files open
    got = {k: [] for k in cases}
    secs = {k: [] for k in cases}
    secs["base"] = []
    for _ in range(rounds):
        b = best(base, calls)
        secs["base"].append(b)
        for k, fn in cases.items():
            t = best(fn, calls)
            got[k].append(t / b)
            secs[k].append(t)
    out = {k: (statistics.median(v), min(v), max(v), statistics.median(secs[k]))
           for k, v in got.items()}
    out["base"] = (1.0, 1.0, 1.0, statistics.median(secs["base"]))
    return out


def show(title: str, result: dict, n_ops: int, target: dict | None = None) -> None:
    print(f"\n{title}")
    print(f"  {'case':44} {'µs/op':>9} {'ratio':>7} {'spread':>15} {'target':>7}")
    for k, (med, lo, hi, secs) in result.items():
        goal = (target or {}).get(k)
        mark = "" if goal is None else f"≤{goal:g}x" + (" ok" if med <= goal else " MISS")
        digits = 2 if lo >= 0.1 else 4   # a small ratio (against TensorFlow) keeps its digits
        print(f"  {k:44} {secs / n_ops * 1e6:9.3f} {med:6.{digits}f}x "
              f"{lo:6.{digits}f}–{hi:5.{digits}f}x {mark:>7}")


def session_run(g, x, y, value, **kw):
    sess = pfd.Session(graph=g, **kw)
    feed = {x: value}
    return lambda: sess.run(y, feed)


def case_py_function(rounds: int) -> None:
    n = ARRAY_CHAIN
    value = np.ones(BIG, np.float32)
    base = session_run(*chain(n, "numpy_function"), value)
    cases = {"py_function, body np.asarray(x) + 1": session_run(
                 *chain(n, "py_function", body=py_asarray_body), value),
             "py_function, body x + 1 (eager op)": session_run(*chain(n, "py_function"), value),
             "py_function, body x.numpy() + 1 (a copy)": session_run(
                 *chain(n, "py_function", body=py_numpy_body), value)}
    show(f"py_function vs numpy_function, chain of {n} on 1000x1000 float32 (base = "
         f"numpy_function)", ratios(base, cases, rounds, 3), n,
         {k: 1.3 for k in list(cases)[:2]})


RUNS = 5  # runs per subscription: a trace is opened once for several runs, as in use


def _runs(run):
    def fn():
        for _ in range(RUNS):
            run()
    return fn


def _subscribed(run, capture):
    def fn():
        with pfd.events.subscribe(lambda e: None, capture=capture):
            for _ in range(RUNS):
                run()
    return fn


def traced(run, **kw):
    def fn():
        with pfd.trace(**kw):
            for _ in range(RUNS):
                run()
    return fn


def _streamed(run, path):
    """The JSONL writer as the only subscriber (no recorder): what streaming costs by itself."""
    from pyfunc_debug.trace.jsonl import JsonlWriter

    def fn():
        writer = JsonlWriter(path, "summary")
        try:
            with pfd.events.subscribe(writer.write, capture="summary",
                                      op_callback=writer.op_write):
                for _ in range(RUNS):
                    run()
        finally:
            writer.close()
    return fn


SCALAR_CHAIN = 1000   # ops of the scalar chain the tracing, breakpoint and thread cases run


def tiny() -> None:
    """Sizes for the smoke test (tests/test_hot_paths.py): every case runs; nothing is
    worth reading."""
    global BIG, ARRAY_CHAIN, WIDE, SCALE_SIZES, SCALE_REPS, SCALAR_CHAIN
    BIG, ARRAY_CHAIN, WIDE, SCALE_SIZES, SCALE_REPS, SCALAR_CHAIN = \
        (4, 4), 2, ((2, 64), (3, 8)), (20, 40), 1, 3


def scalar_tracing_cases(tmp: str) -> tuple:
    """(the plain run of the scalar chain, {case name: the same under tracing}); each call
    runs ``RUNS`` runs (instructions.py counts the same cases)."""
    run = session_run(*chain(SCALAR_CHAIN), np.float32(1.0))
    path = os.path.join(tmp, "x.jsonl")
    return _runs(run), {"subscribe(cb, capture='none')": _subscribed(run, "none"),
                        "subscribe(cb, capture='summary')": _subscribed(run, "summary"),
                        "trace(capture='summary')": traced(run, capture="summary"),
                        "trace(path='x.jsonl')": traced(run, path=path),
                        "  its JsonlWriter alone (no recorder)": _streamed(run, path)}


def case_tracing(rounds: int, tmp: str) -> None:
    n = SCALAR_CHAIN
    base, cases = scalar_tracing_cases(tmp)
    # best of 5 calls per round: on a shared machine the slowest calls say more about
    # the neighbours than about tracing
    show(f"tracing the scalar chain of {n} py_func, {RUNS} runs per trace (base = no subscriber)",
         ratios(base, cases, rounds, 5), n * RUNS,
         {"subscribe(cb, capture='none')": 5, "subscribe(cb, capture='summary')": 10,
          "trace(capture='summary')": 10, "trace(path='x.jsonl')": 15})
    n = ARRAY_CHAIN
    big = session_run(*chain(n), np.ones(BIG, np.float32))
    cases = {"trace(capture='summary')": traced(big, capture="summary")}
    show(f"tracing the 4 MB chain of {n} py_func, {RUNS} runs per trace (base = no subscriber)",
         ratios(_runs(big), cases, rounds, 2), n * RUNS, {"trace(capture='summary')": 1.5})


def case_breakpoints(rounds: int) -> None:
    n = SCALAR_CHAIN
    g, x, y = chain(n)
    run = session_run(g, x, y, np.float32(1.0))

    def debugged(**bp):
        dbg = pfd.debug.Debugger(on_pause=lambda p: "continue")
        if bp:
            dbg.break_on(**bp)

        def fn():   # attached once for RUNS runs, as a trace is opened (attaching costs ~0.5 ms)
            with dbg:
                for _ in range(RUNS):
                    run()
        return fn
    cases = {"when='np.any(outputs[0] > 1e9)'": debugged(when="np.any(outputs[0] > 1e9)"),
             "when='np.any(inputs[0] < -1)'": debugged(when="np.any(inputs[0] < -1)"),
             "when='inputs[0] > 1e30'": debugged(when="inputs[0] > 1e30"),
             "when='outputs[0] > 1e30'": debugged(when="outputs[0] > 1e30"),
             "when='inputs[0] > 0 and outputs[0] > 1e30'": debugged(
                 when="inputs[0] > 0 and outputs[0] > 1e30"),
             "when='inputs[0] > 1e30 or outputs[0] > 1e30'": debugged(
                 when="inputs[0] > 1e30 or outputs[0] > 1e30"),
             "when='inputs[0].max() > 1e30' (a method call)": debugged(
                 when="inputs[0].max() > 1e30"),
             "when='has_inf_or_nan'": debugged(when="has_inf_or_nan"),
             "when='nan_producer'": debugged(when="nan_producer"),
             "op='PyFunc_9*', when=outputs expression": debugged(
                 op="PyFunc_9*", when="np.any(outputs[0] > 1e9)"),
             "op='no-such-op' (name only)": debugged(op="no-such-op"),
             "Debugger() with no breakpoint": debugged(),
             "on_error=True (the UI's default)": debugged(on_error=True)}
    show(f"breakpoints that never fire, scalar chain of {n} py_func, {RUNS} runs per attach "
         f"(base = no debugger)", ratios(_runs(run), cases, rounds, 5), n * RUNS,
         {k: 2 for k in cases})


def wide(branches: int, size: int):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float64)
        outs = [pfd.numpy_function(lambda a, k=k: np.sqrt(a * (k + 1)).sum(), [x], pfd.float64)
                for k in range(branches)]
        total = outs[0]
        for o in outs[1:]:
            total = total + o
    return g, x, total


def case_threads(rounds: int) -> None:
    n = SCALAR_CHAIN
    g, x, y = chain(n)
    seq = session_run(g, x, y, np.float32(1.0))
    show(f"inter_op_threads=2 on a chain of {n} py_func (base = default session)",
         ratios(seq, {"Session(inter_op_threads=2)": session_run(
             g, x, y, np.float32(1.0), inter_op_threads=2)}, rounds, 5), n,
         {"Session(inter_op_threads=2)": 1.2})
    for branches, size in WIDE:
        g, x, y = wide(branches, size)
        value = np.random.default_rng(0).random(size)
        seq = session_run(g, x, y, value, inter_op_threads=1)
        cases = {"default Session()": session_run(g, x, y, value),
                 "Session(inter_op_threads=2)": session_run(g, x, y, value, inter_op_threads=2)}
        show(f"wide graph: {branches} numpy_function branches of sqrt(a*k).sum() on "
             f"{size:,} float64 (base = inter_op_threads=1)",
             ratios(seq, cases, rounds, 3), branches)


def add(x, y):
    return x + y


def wide_pairwise(branches: int, body=add_one, dtype=None):
    """``branches`` independent ``py_func`` ops on one input, summed pairwise (2n-1 ops)."""
    dtype = pfd.float32 if dtype is None else dtype
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(dtype)
        level = [pfd.compat.v1.py_func(body, [x], dtype) for _ in range(branches)]
        while len(level) > 1:
            nxt = [a + b for a, b in zip(level[::2], level[1::2])]
            level = nxt + level[len(nxt) * 2:]
    return g, x, level[0]


def python_work(x):
    total = 0
    for i in range(400):
        total += i
    return x + np.float32(total % 3)


def numpy_work(a):
    return np.sqrt(a * 1.5).sum()


def case_scheduling(rounds: int, width: int = 1000, size: int = 65536) -> None:
    from concurrent.futures import ThreadPoolExecutor
    one = np.float32(1.0)
    g, x, y = chain(2 * width)
    chained = session_run(g, x, y, one)
    g, x, y = wide_pairwise(width)
    cases = {"default Session(), wide": session_run(g, x, y, one),
             "  the wide graph sequentially (inter_op_threads=1)": session_run(
                 g, x, y, one, inter_op_threads=1),
             "inter_op_threads=2, chain": session_run(*chain(2 * width), one, inter_op_threads=2)}
    show(f"a wide graph of {width} scalar py_func summed pairwise ({2 * width - 1} ops), per op"
         f" (base = default Session(), chain of {2 * width})",
         ratios(chained, cases, rounds, 5), 2 * width, {"default Session(), wide": 1.5,
                                                        "inter_op_threads=2, chain": 1.2})
    show(f"inter_op_threads=2 on the wide scalar graph (base = inter_op_threads=1)",
         ratios(session_run(g, x, y, one, inter_op_threads=1),
                {"Session(inter_op_threads=2)": session_run(g, x, y, one, inter_op_threads=2)},
                rounds, 5), 2 * width, {"Session(inter_op_threads=2)": 1.2})
    g, x, y = wide_pairwise(width, python_work)
    show(f"inter_op_threads=2 on a wide graph of {width} py_func doing ~20 µs of Python "
         f"(holding the GIL: threads cannot help) (base = inter_op_threads=1)",
         ratios(session_run(g, x, y, one, inter_op_threads=1),
                {"Session(inter_op_threads=2)": session_run(g, x, y, one, inter_op_threads=2)},
                rounds, 3), 2 * width, {"Session(inter_op_threads=2)": 1.2})
    value = np.random.default_rng(0).random(size)
    g, x, y = wide_pairwise(width, numpy_work, pfd.float64)
    pool = ThreadPoolExecutor(2)

    def plain_pool():
        parts = list(pool.map(numpy_work, [value] * width))
        while len(parts) > 1:
            nxt = [a + b for a, b in zip(parts[::2], parts[1::2])]
            parts = nxt + parts[len(nxt) * 2:]
        return parts[0]
    res = ratios(plain_pool, {"Session(inter_op_threads=2)": session_run(
                     g, x, y, value, inter_op_threads=2),
                 "Session(inter_op_threads=1)": session_run(g, x, y, value, inter_op_threads=1)},
                 rounds, 3)
    show(f"a wide graph of {width} numpy_work branches on {size:,} float64 "
         f"(base = ThreadPoolExecutor(2).map on the same work; target: base/time ≥ 0.85)",
         res, 2 * width, {"Session(inter_op_threads=2)": 1 / 0.85})
    pool.shutdown()


def case_scale(scale_max: int, rounds: int) -> None:
    scaling.case_scale([n for n in SCALE_SIZES if n <= scale_max], SCALE_REPS)


def _tf_run(tf, g, x, y, value):
    sess = tf.compat.v1.Session(graph=g)
    return functools.partial(sess.run, y, {x: value})


def case_tensorflow(rounds: int) -> None:
    """pyfunc_debug against TensorFlow on the same graphs, in this process (base = TF)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError:
        print("\nTensorFlow comparison skipped: TensorFlow is not installed "
              "(pip install -e '.[tensorflow]')")
        return
    tf.get_logger().setLevel("ERROR")
    where = f"TensorFlow {tf.__version__}, {time.strftime('%Y-%m-%d')}"
    n, scalar = SCALAR_CHAIN, np.float32(1.0)
    show(f"a chain of {n} py_func on a float32 scalar, v1 Session (base = {where})",
         ratios(_tf_run(tf, *chain(n, lib=tf), scalar),
                {"pyfunc_debug": session_run(*chain(n), scalar)}, rounds, 3), n)
    n, value = ARRAY_CHAIN, np.ones(BIG, np.float32)
    cases = {kind: (_tf_run(tf, *chain(n, kind, lib=tf), value),
                    session_run(*chain(n, kind), value))
             for kind in ("numpy_function", "py_function")}
    for kind, (base, mine) in cases.items():
        show(f"a chain of {n} {kind}, body x + 1, on 1000x1000 float32, v1 Session "
             f"(base = {where})", ratios(base, {"pyfunc_debug": mine}, rounds, 3), n)


def machine() -> str:
    import numpy
    cpu = "?"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    return (f"{os.cpu_count()} cores ({cpu}), {platform.machine()}, Python "
            f"{platform.python_version()}, numpy {numpy.__version__}, load average "
            f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}, {time.strftime('%Y-%m-%d')}")


CASES = ("py_function", "tracing", "breakpoints", "threads", "scheduling", "scale", "tensorflow")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", nargs="*", choices=CASES, default=list(CASES))
    ap.add_argument("--scale-max", type=int, default=100_000)
    ap.add_argument("--width", type=int, default=1000, help="branches of the scheduling case")
    ap.add_argument("--size", type=int, default=65536, help="elements per numpy branch")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: the smoke test's run")
    ap.add_argument("--cpu", action="store_true",
                    help="time by the process's CPU time, not the wall clock: steadier on a "
                         "loaded machine (a preempted run is not charged), but blind to "
                         "threads' overlap (meaningless for the parallel rows)")
    args = ap.parse_args(argv)
    if args.tiny:
        tiny()
    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter
    print(f"machine: {machine()}; {args.rounds} rounds per case; clock: "
          f"{'process CPU time' if args.cpu else 'wall (perf_counter)'}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            if name == "tracing":
                case_tracing(args.rounds, tmp)
            elif name == "scheduling":
                case_scheduling(args.rounds, args.width, args.size)
            elif name == "scale":
                case_scale(args.scale_max, args.rounds)
            else:
                globals()[f"case_{name}"](args.rounds)


if __name__ == "__main__":
    main()
