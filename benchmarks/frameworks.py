"""Per-callback overhead of ``instrument()`` on real TensorFlow and JAX (SPEC §10).

    python benchmarks/frameworks.py [--calls 2000] [--repeats 5] [--only tf|jax]

For each context — TF eager ``numpy_function``, a chain of ``numpy_function``s in
``tf.function``, ``Dataset.map`` (``num_parallel_calls=4``), a v1 ``Session``
chain of ``py_func``s, a chain of ``jax.pure_callback``s under ``jit`` — the
same program is built and run in four modes, taking turns: plain (the
framework's own per-callback cost, the baseline measured in this run),
instrumented with nobody listening, with a debugger attached and no breakpoint matching, and
recording a trace (``capture="summary"``). The wrapper's own cost per call is
measured apart (on the same callback without a framework: differences of
framework timings drown in their noise on a busy machine); printed per context
as a ratio to the framework's own per-callback cost, beside the difference
measured in the framework. Medians of ``--repeats``; the callback itself is
``x + 1`` on a float32 scalar.
Needs the ``tensorflow`` and/or ``jax`` extras.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import warnings

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pyfunc_debug as pfd  # noqa: E402
from pyfunc_debug.debug import Debugger  # noqa: E402

CHAIN = 50   # callbacks per run in the chained contexts


def inc(x):
    return x + np.float32(1)


# -- the contexts: each builds (run, callbacks per run) -----------------------------------

def tf_eager(tf, calls):
    x = tf.constant(np.float32(1))

    def run():
        for _ in range(calls):
            tf.numpy_function(inc, [x], tf.float32, name="inc")
    return run, calls


def tf_function(tf, calls):
    @tf.function
    def f(x):
        for _ in range(CHAIN):
            x = tf.numpy_function(inc, [x], tf.float32, name="inc")
        return x
    x = tf.constant(np.float32(1))
    reps = max(1, calls // CHAIN)
    return (lambda: [f(x) for _ in range(reps)]), reps * CHAIN


def tf_dataset_map(tf, calls):
    ds = tf.data.Dataset.range(calls).map(
        lambda i: tf.numpy_function(inc, [tf.cast(i, tf.float32)], tf.float32, name="inc"),
        num_parallel_calls=4)
    return (lambda: [None for _ in ds]), calls


def tf_v1_session(tf, calls):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = x
        for _ in range(CHAIN):
            y = tf.compat.v1.py_func(inc, [y], tf.float32, name="inc")
    sess = tf.compat.v1.Session(graph=g)
    reps = max(1, calls // CHAIN)
    return (lambda: [sess.run(y, {x: np.float32(1)}) for _ in range(reps)]), reps * CHAIN


def jax_jit(jax, calls):
    import jax.numpy as jnp

    @jax.jit
    def f(x):
        for _ in range(CHAIN):
            x = jax.pure_callback(inc, jax.ShapeDtypeStruct((), jnp.float32), x)
        return x
    x = jnp.float32(1)
    compiled = f.lower(x).compile()   # keeps its callbacks as they were when compiled
    reps = max(1, calls // CHAIN)
    return (lambda: [jax.block_until_ready(compiled(x)) for _ in range(reps)]), reps * CHAIN


# -- modes ---------------------------------------------------------------------------------

@contextlib.contextmanager
def mode(name, adapter):
    if name == "plain":
        yield
        return
    with adapter.instrument():
        if name == "instrumented":
            yield
        elif name == "debugger":
            dbg = Debugger(on_pause=lambda p: "continue")
            dbg.break_on(op="no_such_op")
            with dbg:
                yield
        else:
            with pfd.trace(capture="summary"):
                yield


MODES = ("plain", "instrumented", "debugger", "traced")


def measure(build, fw, adapter, calls, repeats) -> dict:
    """µs per callback in each mode: each mode's program is built once in that mode (TF
    wraps callbacks when they are built), then the modes take turns, ``repeats`` rounds
    after a warm-up round (tracing, compiling, thread pools), so a busy machine's drift
    hits them alike; medians."""
    built, times = {}, {m: [] for m in MODES}
    for r in range(repeats + 1):
        for m in MODES:
            with mode(m, adapter):
                if m not in built:
                    built[m] = build(fw, calls)
                run, n = built[m]
                t0 = time.perf_counter()
                run()
                dt = time.perf_counter() - t0
            if r:
                times[m].append(dt / n * 1e6)
    return {m: statistics.median(v) for m, v in times.items()}


def wrapper_alone(calls=20000, repeats=7) -> dict:
    """µs the wrapper adds per call, measured on ``inc`` without a framework (steady on a
    busy machine, unlike differences of framework timings): what every callback pays."""
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun
    run, op, x = CallbackRun("bench"), ExternalOp("inc", "PyFunc"), np.float32(1)
    modes = {"plain": contextlib.nullcontext, "instrumented": contextlib.nullcontext,
             "debugger": lambda: _debugger(), "traced": lambda: pfd.trace(capture="summary")}
    out = {}
    for m, ctx in modes.items():
        call = (lambda: inc(x)) if m == "plain" else (lambda: run.call(op, inc, (x,)))
        best = []
        with ctx():
            for _ in range(repeats):
                t0 = time.perf_counter()
                for _ in range(calls):
                    call()
                best.append((time.perf_counter() - t0) / calls * 1e6)
        out[m] = min(best)
    run.end()
    return {m: out[m] - out["plain"] for m in MODES[1:]}


@contextlib.contextmanager
def _debugger():
    dbg = Debugger(on_pause=lambda p: "continue")
    dbg.break_on(op="no_such_op")
    with dbg:
        yield


def report(label, us, alone) -> None:
    base = us["plain"]
    parts = [f"{label:24} framework's own {base:6.1f} µs/callback"]
    for m in MODES[1:]:
        parts.append(f"{m} {alone[m] / base:.3f}× (measured +{us[m] - base:.0f} µs)")
    print(";  ".join(parts))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--only", choices=("tf", "jax"))
    a = p.parse_args()
    # instrument() warns about callbacks built before it: here that is on purpose
    warnings.simplefilter("ignore", RuntimeWarning)
    alone = wrapper_alone()
    print("wrapper alone, µs per call: " + ", ".join(f"{m} +{v:.2f}" for m, v in alone.items()))
    print("per context: the wrapper's cost as a ratio to the framework's own per-callback "
          "cost, and the difference measured in the framework (noisy on a busy machine)")
    if a.only != "jax":
        import tensorflow as tf
        from pyfunc_debug import tensorflow as adapter
        print(f"TensorFlow {tf.__version__}")
        for label, build in (("eager numpy_function", tf_eager),
                             ("tf.function chain", tf_function),
                             ("Dataset.map (parallel 4)", tf_dataset_map),
                             ("v1 Session chain", tf_v1_session)):
            report(label, measure(build, tf, adapter, a.calls, a.repeats), alone)
    if a.only != "tf":
        import jax
        from pyfunc_debug import jax as adapter
        print(f"JAX {jax.__version__}")
        report("jit pure_callback chain", measure(jax_jit, jax, adapter, a.calls, a.repeats),
               alone)


if __name__ == "__main__":
    main()
