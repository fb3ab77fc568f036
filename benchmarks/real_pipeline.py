"""Real TensorFlow and JAX programs under pyfunc-debug: whole-program ratios and the
per-call recording cost (issue 24).

    python benchmarks/real_pipeline.py [--images 2000] [--steps 2000] [--rounds 3]
                                       [--only tf|jax|ui|calls] [--calls 3000]

**Programs** (each run as its own process, the time measured inside it from
after the imports to the end of its work):

- ``tf``: ``--images`` 8x8 float32 images from ``tf.data``, each mapped through
  ``tf.py_function`` (``num_parallel_calls=AUTOTUNE``), batched, and one epoch
  of a tiny Keras model trained on them, timed to the end of training (not the
  iterator's release after it, which sometimes stalls TensorFlow itself).
- ``jax``: ``--steps`` calls of a ``jit``-compiled step holding a
  ``jax.pure_callback`` on a 64-element float32 array.

Each program runs in five modes, taking turns for ``--rounds`` rounds (a busy
machine's drift hits them alike): plain ``python``; ``pyfunc-debug trace --tf``
(or ``--jax``) to a ``.jsonl`` trace, value summaries on; the same with
``--capture fault`` (faulty calls' inputs kept; printed also as a ratio to the
summary trace); ``run --tf
--console`` (no breakpoint); ``run --tf`` with the Textual UI in a
pseudo-terminal (``ui_run``, also ``--only ui``). Printed: median seconds,
min–max, and each mode's ratio to plain (medians).

**Per call** (``--only calls``; in this process): a callback ``x + 1`` through
the adapters' wrapper (``CallbackRun.call``), unrecorded (instrumented, nobody
listening) and recorded (``trace(capture="summary")``, which leaves small arrays'
summaries pending: reading ``tr.events`` afterwards takes them, timed apart and
printed per call), alternating rounds,
medians (for 1M elements also the ratio of the best rounds, which a busy
machine disturbs least); for a 64-element float32 array the difference in µs,
and for a 1M-element float32 array the difference as a ratio to **one pass**
over it, defined as one ``np.maximum.reduce(x)`` (the cheapest read of every element
we know: SIMD, one core), and per summarised array also to ``x.sum()`` (numpy's
pairwise sum, about 3x as long),
timed in the same rounds. The recorded call summarises two arrays (input and
output), so the ratio is also given per summarised array. For 64 elements
also recorded to a ``.jsonl`` file, as ``trace --tf`` records: the CPU this
process spends per call over the unrecorded call (the calling thread and the
writer's thread), and what reading the file back costs per call (``load_trace``,
which takes the small arrays' summaries the file keeps pending). The same callback
on 64 elements in a ``tf.function`` (``tf.numpy_function``, ``instrument()``
with and without a trace) gives the in-framework difference, noisier.

Needs the ``tensorflow`` and/or ``jax`` extras (each part is skipped, with a
line saying so, without its extra); the UI mode needs ``textual`` and ``pexpect``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.abspath(__file__)
MODES = ("plain", "trace", "fault", "console", "ui")


# -- the programs (run in a child process: --workload) -------------------------------------

def tf_program(images: int) -> float:
    """Seconds for the tf.data + py_function pipeline and one epoch of training, up to the
    end of training (Keras' ``on_train_end``). What ``fit`` does after that, releasing the
    dataset's iterator, sometimes stalls TensorFlow for 0.5-2.5 s, plain runs too (seen
    in 1 run of 3 here, by marking that moment): timed, it made every mode's times bimodal
    and their medians a matter of luck."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    data = rng.random((images, 8, 8), dtype=np.float32)
    labels = rng.random((images, 1), dtype=np.float32)

    def augment(img):            # what a real callback does: numpy on the element
        img = np.asarray(img)
        return (img - img.mean()) / (img.std() + np.float32(1e-6))

    def load(img, label):
        out = tf.py_function(augment, [img], tf.float32, name="augment")
        out.set_shape((8, 8))
        return out, label

    t0 = time.perf_counter()
    ds = (tf.data.Dataset.from_tensor_slices((data, labels))
          .map(load, num_parallel_calls=tf.data.AUTOTUNE).batch(32))
    model = tf.keras.Sequential([tf.keras.Input((8, 8)), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    ended = []

    class TrainEnd(tf.keras.callbacks.Callback):
        def on_train_end(self, logs=None):
            ended.append(time.perf_counter())

    model.fit(ds, epochs=1, verbose=0, callbacks=[TrainEnd()])
    return ended[0] - t0


def jax_program(steps: int) -> float:
    """Seconds for ``steps`` calls of a jit step holding a pure_callback."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    def host(x):
        return np.tanh(x).astype(np.float32)

    @jax.jit
    def step(x):
        y = jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return y * 0.5 + 0.25

    x = jnp.linspace(0.0, 1.0, 64, dtype=jnp.float32)
    t0 = time.perf_counter()
    for _ in range(steps):
        x = step(x)
    jax.block_until_ready(x)
    return time.perf_counter() - t0


def _workload(kind: str, size: int, out: str) -> None:
    seconds = tf_program(size) if kind == "tf" else jax_program(size)
    with open(out, "w") as f:
        json.dump({"seconds": seconds}, f)


# -- the modes -----------------------------------------------------------------------------

def _command(mode: str, kind: str, size: int, out: str, tmp: str) -> list:
    program = [HERE, "--workload", kind, "--size", str(size), "--out", out]
    flag = "--" + kind
    if mode == "plain":
        return [sys.executable, *program]
    pfd = [sys.executable, "-m", "pyfunc_debug"]
    if mode in ("trace", "fault"):   # fault: summaries, plus inputs kept for faulty calls
        return [*pfd, "trace", flag, "-o", os.path.join(tmp, "t.jsonl"), "--capture",
                "summary" if mode == "trace" else "fault", *program]
    if mode == "console":
        return [*pfd, "run", flag, "--console", *program]
    return [*pfd, "run", flag, *program]


def _env() -> dict:
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")


def _seconds(out: str) -> float:
    with open(out) as f:
        return json.load(f)["seconds"]


def ui_run(kind: str, size: int, timeout: float = 900.0, command=None) -> float:
    """The program under ``pyfunc-debug run --tf`` (or ``--jax``) with the Textual UI, in a
    pseudo-terminal (120x40) whose output is read all along (a terminal that is not read
    would stall the UI); ``q`` once the program has written its time. Returns that time.
    ``command``: another ``_command`` (``ui_parts.py`` runs parts of the UI so)."""
    import pexpect

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = (command or _command)("ui", kind, size, out, tmp)
        env = dict(_env(), TERM="xterm-256color", COLUMNS="120", LINES="40")
        child = pexpect.spawn(cmd[0], cmd[1:], env=env, dimensions=(40, 120), timeout=timeout)
        try:
            read_until_written(child, out, timeout, "ui mode")
            child.send("q")
            child.expect(pexpect.EOF, timeout=60)
        finally:
            child.close(force=True)
        return _seconds(out)


def read_until_written(child, out: str, timeout: float, what: str) -> None:
    """Read ``child``'s terminal (a terminal that is not read would stall the UI) until the
    program has written its time to ``out``."""
    import pexpect

    deadline = time.monotonic() + timeout
    while not os.path.exists(out) or os.path.getsize(out) == 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: no result within {timeout:.0f} s")
        try:
            child.read_nonblocking(65536, timeout=0.1)
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            if not os.path.exists(out):
                raise RuntimeError(f"{what}: the program ended without a result")
            break
    time.sleep(0.2)     # the file is written: let json.dump's close land


def run_mode(mode: str, kind: str, size: int) -> float:
    """The program's own seconds in ``mode`` (one process)."""
    if mode == "ui":
        return ui_run(kind, size)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        r = subprocess.run(_command(mode, kind, size, out, tmp), env=_env(),
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"{kind} in mode {mode} failed ({r.returncode}):\n"
                               f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return _seconds(out)


def programs(kind: str, size: int, rounds: int, modes=MODES) -> dict:
    """Seconds per mode, ``rounds`` alternating rounds."""
    times = {m: [] for m in modes}
    for _ in range(rounds):
        for m in modes:
            times[m].append(run_mode(m, kind, size))
    return times


def report_programs(label: str, times: dict) -> None:
    base = statistics.median(times["plain"])
    print(label)
    for m, v in times.items():
        med = statistics.median(v)
        print(f"  {m:8} {med:7.2f} s (min {min(v):.2f}, max {max(v):.2f})  "
              f"{med / base:.3f}x plain")
    if "fault" in times and "trace" in times:   # issue 27's target: fault <= 1.1x summary
        print(f"fault capture / summary trace: "
              f"{statistics.median(times['fault']) / statistics.median(times['trace']):.3f}x")


# -- per call ------------------------------------------------------------------------------

def _timed(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def per_call(calls: int, rounds: int) -> dict:
    """µs per call of ``x + 1`` through the wrapper, unrecorded and recorded, and of one
    pass (``np.maximum.reduce``), for 64 and 1M float32 elements; alternating rounds."""
    import numpy as np

    import pyfunc_debug as pfd
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun

    run, op = CallbackRun("bench"), ExternalOp("inc", "PyFunc")

    def inc(x):
        return x + np.float32(1)

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        x = np.random.default_rng(0).random(64, dtype=np.float32)
        t = {"program": [], "load": []}
        for r in range(rounds + 1):
            here, load = _to_jsonl(lambda: run.call(op, inc, (x,)), run, calls * 10, tmp)
            if r:
                t["program"].append(here)
                t["load"].append(load)
        out["jsonl"] = {k: statistics.median(v) for k, v in t.items()}
    for size, n in ((64, calls), (1 << 20, max(3, calls // 100))):
        x = np.random.default_rng(0).random(size, dtype=np.float32)
        t = {"unrecorded": [], "recorded": [], "read": [], "pass": [], "sum": []}
        for r in range(rounds + 1):     # round 0 warms up (first trace, first run)
            unrecorded = _timed(lambda: run.call(op, inc, (x,)), n)
            with pfd.trace(capture="summary") as tr:
                recorded = _timed(lambda: run.call(op, inc, (x,)), n)
                run.end()
            read = _timed(lambda: tr.events, 1) / n   # small summaries are taken then
            one_pass = _timed(lambda: np.maximum.reduce(x), n)
            a_sum = _timed(x.sum, n)
            if r:
                t["unrecorded"].append(unrecorded)
                t["recorded"].append(recorded)
                t["read"].append(read)
                t["pass"].append(one_pass)
                t["sum"].append(a_sum)
        out[size] = {k: statistics.median(v) for k, v in t.items()}
        out[size]["spread"] = {k: (min(v), max(v)) for k, v in t.items()}
    return out


def _to_jsonl(call, run, n: int, tmp: str) -> tuple:
    """(µs of this process's CPU per recorded call over an unrecorded one, µs per call of
    loading the file back) for ``n`` calls recorded to a ``.jsonl`` trace."""
    import pyfunc_debug as pfd

    def cpu_per_call(fn):
        c0 = time.process_time()
        fn()
        return (time.process_time() - c0) / n * 1e6

    def unrecorded():
        for _ in range(n):
            call()

    path = os.path.join(tmp, "calls.jsonl")

    def recorded():
        with pfd.trace(path):
            for _ in range(n):
                call()
            run.end()

    base, here = cpu_per_call(unrecorded), cpu_per_call(recorded)
    return here - base, cpu_per_call(lambda: pfd.load_trace(path))


def tf_per_call(calls: int, rounds: int):
    """µs per ``tf.numpy_function`` call on 64 float32 in a ``tf.function`` chain, with
    ``instrument()``, with and without ``trace(capture="summary")``."""
    import numpy as np

    import pyfunc_debug as pfd
    from pyfunc_debug.tf_startup import import_quietly
    tf = import_quietly("tensorflow")   # no start-up lines among the figures
    from pyfunc_debug import tensorflow as adapter

    chain = 50

    def inc(x):
        return x + np.float32(1)

    with adapter.instrument():
        @tf.function
        def f(x):
            for _ in range(chain):
                x = tf.numpy_function(inc, [x], tf.float32, name="inc")
            return x
        x = tf.constant(np.zeros(64, np.float32))
        reps = max(1, calls // chain)
        t = {"unrecorded": [], "recorded": []}
        for r in range(rounds + 1):     # round 0 warms up (tracing the function)
            unrecorded = _timed(lambda: f(x), reps) / chain
            with pfd.trace(capture="summary"):
                recorded = _timed(lambda: f(x), reps) / chain
            if r:
                t["unrecorded"].append(unrecorded)
                t["recorded"].append(recorded)
    found = {k: statistics.median(v) for k, v in t.items()}
    found["spread"] = {k: (min(v), max(v)) for k, v in t.items()}
    return found


def report_calls(calls: dict, tf_calls) -> None:
    small, big = calls[64], calls[1 << 20]
    print("per call, x + 1 through the wrapper (medians; min-max):")
    print(f"  64 float32 recorded to .jsonl: this process +{calls['jsonl']['program']:.2f} µs CPU "
          f"per call; loading it back {calls['jsonl']['load']:.2f} µs per call "
          f"(the summaries taken then)")
    d = small["recorded"] - small["unrecorded"]
    print(f"  64 float32:  unrecorded {small['unrecorded']:.2f} µs, recorded "
          f"{small['recorded']:.2f} µs ({small['spread']['recorded'][0]:.2f}-"
          f"{small['spread']['recorded'][1]:.2f}): recording +{d:.2f} µs per call; "
          f"reading tr.events then {small['read']:.2f} µs per call (the summaries taken)")
    d = big["recorded"] - big["unrecorded"]
    lo = {k: v[0] for k, v in big["spread"].items()}   # best rounds: the neighbours' least
    d_lo = lo["recorded"] - lo["unrecorded"]
    print(f"  1M float32:  unrecorded {big['unrecorded']:.0f} µs, recorded "
          f"{big['recorded']:.0f} µs, one pass {big['pass']:.0f} µs: recording "
          f"{d / big['pass']:.2f}x one pass ({d / big['pass'] / 2:.2f}x per summarised array); "
          f"best rounds: {d_lo / lo['pass']:.2f}x ({d_lo / lo['pass'] / 2:.2f}x per array); "
          f"x.sum() {big['sum']:.0f} µs: {d / big['sum'] / 2:.2f}x per array")
    if tf_calls is not None:
        d = tf_calls["recorded"] - tf_calls["unrecorded"]
        print(f"  tf.function numpy_function, 64 float32: instrumented "
              f"{tf_calls['unrecorded']:.1f} µs, recorded {tf_calls['recorded']:.1f} µs: "
              f"+{d:.1f} µs per call")


def _have(*mods) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in mods)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=2000, help="tf: images through the pipeline")
    p.add_argument("--steps", type=int, default=2000, help="jax: jit steps")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--calls", type=int, default=3000, help="per-call: calls per round")
    p.add_argument("--only", choices=("tf", "jax", "ui", "calls"),
                   help="ui: only the tf program's plain and UI modes")
    p.add_argument("--workload", choices=("tf", "jax"), help=argparse.SUPPRESS)
    p.add_argument("--size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.workload:
        _workload(a.workload, a.size, a.out)
        return
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    ui_ok = _have("textual", "pexpect")
    if not ui_ok:
        print("ui mode skipped: needs textual and pexpect")
    modes = tuple(m for m in MODES if m != "ui" or ui_ok)
    if a.only in (None, "calls"):
        report_calls(per_call(a.calls, a.rounds),
                     tf_per_call(a.calls, a.rounds) if _have("tensorflow") else None)
    if a.only in (None, "tf", "ui"):
        if not _have("tensorflow"):
            print("tf program skipped: needs the tensorflow extra")
        else:
            chosen = ("plain", "ui") if a.only == "ui" else modes
            if a.only == "ui" and not ui_ok:
                return
            report_programs(f"tf.data + py_function, {a.images} 8x8 images, Keras epoch "
                            f"({a.rounds} rounds)", programs("tf", a.images, a.rounds, chosen))
    if a.only in (None, "jax"):
        if not _have("jax"):
            print("jax program skipped: needs the jax extra")
        else:
            report_programs(f"jax jit + pure_callback, {a.steps} steps ({a.rounds} rounds)",
                            programs("jax", a.steps, a.rounds, modes))


if __name__ == "__main__":
    main()
