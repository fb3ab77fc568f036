"""What capture="fault" costs over capture="summary" (issue 27: at most 1.1x).

    python benchmarks/fault_capture.py [--rounds 7] [--ops 1000] [--instructions [--runs 4]]

The scalar chain of ``hotpaths.py`` (``--ops`` py_func, ``RUNS`` runs per
trace) recorded in memory and to a ``.jsonl`` file, each with
``capture="summary"`` as the baseline of the same round (alternating, best of
a few calls, median over ``--rounds``). Every call in these runs is clean, the
case fault capture must make cheap; a last row shows one faulty call (a NaN
made at the chain's end) per run, whose inputs are then written. A last case
times framework callbacks (64 float32) through the TF/JAX adapters' wrapper.

On a loaded machine the time ratios swing by ±30%; ``--instructions`` counts
the instructions per op of the two clean-chain rows under valgrind's callgrind
instead (as ``instructions.py`` does: ``--runs`` + 1 calls minus one call),
which the neighbours do not change.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hotpaths  # noqa: E402
from hotpaths import RUNS, traced, chain, machine, ratios, session_run, show  # noqa: E402

import pyfunc_debug as pfd  # noqa: E402


def _nan_at_end(n):
    """The scalar chain whose last op makes a NaN from a finite input (a fault each run)."""
    g, x, y = chain(n - 1)
    with g.as_default():
        y = pfd.numpy_function(lambda v: np.float32(np.nan) * v, [y], pfd.float32,
                               name="nan_maker")
    return g, x, y


def _callbacks(calls: int, capture: str):
    """``calls`` calls of a framework callback ``x + 1`` (64 float32) through the adapters'
    wrapper (``CallbackRun.call``, as ``--tf``/``--jax`` run them), recorded in memory."""
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun
    run, op = CallbackRun("bench"), ExternalOp("inc", "PyFunc")
    x = np.random.default_rng(0).random(64, dtype=np.float32)

    def inc(v):
        return v + np.float32(1)

    def fn():
        with pfd.trace(capture=capture):
            for _ in range(calls):
                run.call(op, inc, (x,))
            run.end()
    return fn


def cases(ops: int, tmp: str) -> list:
    """(title, baseline, {case: fn}, target) rows."""
    run = session_run(*chain(ops), np.float32(1.0))
    path = os.path.join(tmp, "f.jsonl")
    faulty = session_run(*_nan_at_end(ops), np.float32(1.0))
    return [
        ("in memory: trace(capture=...)", traced(run, capture="summary"),
         {"trace(capture='fault')": traced(run, capture="fault")}, 1.1),
        ("streamed: trace('x.jsonl', capture=...)", traced(run, path=path, capture="summary"),
         {"trace('x.jsonl', capture='fault')": traced(run, path=path, capture="fault")}, 1.1),
        ("streamed, one faulty call per run (its inputs written)",
         traced(faulty, path=path, capture="summary"),
         {"trace('x.jsonl', capture='fault'), 1 fault/run": traced(faulty, path=path,
                                                                     capture="fault")}, None),
        ("a TF/JAX callback through the adapters' wrapper, in memory (per call)",
         _callbacks(ops * RUNS, "summary"),
         {"trace(capture='fault'), callbacks": _callbacks(ops * RUNS, "fault")}, 1.1),
    ]


def _flat(ops: int, tmp: str) -> dict:
    """Every timed function of ``cases`` by name (the baselines as "<title> base")."""
    out = {}
    for title, base, rows, _ in cases(ops, tmp)[:2]:
        out[f"{title.split(':')[0]}: summary"] = base
        out.update({f"{title.split(':')[0]}: fault": fn for fn in rows.values()})
    return out


def _count(name: str, ops: int, calls: int, tmp: str) -> int:
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--ops", str(ops), "--child", name, str(calls), tmp],
        env=dict(os.environ, PYTHONHASHSEED="0"), capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"valgrind run of {name!r} failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def instructions(ops: int, runs: int) -> dict:
    """Instructions per op of each clean-chain row (callgrind)."""
    per_op = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in _flat(ops, tmp):
            n = (_count(name, ops, runs + 1, tmp) - _count(name, ops, 1, tmp))
            per_op[name] = n / (runs * ops * RUNS)
    return per_op


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--ops", type=int, default=hotpaths.SCALAR_CHAIN)
    ap.add_argument("--calls", type=int, default=5, help="calls per round (the best counts)")
    ap.add_argument("--instructions", action="store_true", help="count instructions (valgrind)")
    ap.add_argument("--runs", type=int, default=4, help="with --instructions: calls counted")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        fn = _flat(args.ops, args.child[2])[args.child[0]]
        for _ in range(int(args.child[1])):
            fn()
        return
    if args.instructions:
        per_op = instructions(args.ops, args.runs)
        print(f"instructions per op of the scalar chain of {args.ops} py_func (callgrind)")
        for name, n in per_op.items():
            base = per_op[name.replace("fault", "summary")]
            print(f"  {name:24} {n:9,.0f} {n / base:6.3f}x")
        return
    print(f"machine: {machine()}; {args.rounds} rounds per case")
    with tempfile.TemporaryDirectory() as tmp:
        for title, base, rows, target in cases(args.ops, tmp):
            goal = {k: target for k in rows} if target else None
            what = (title if title.startswith("a TF/JAX") else
                     f"scalar chain of {args.ops} py_func, {RUNS} runs per trace, {title}")
            show(f"{what} (base = capture='summary')", ratios(base, rows, args.rounds, args.calls),
                 args.ops * RUNS, goal)


if __name__ == "__main__":
    main()
