"""Instructions per op of the traced scalar chain, counted by valgrind (no clock, no noise).

    python benchmarks/instructions.py [--runs 10] [--modes base trace-summary ...]

On a shared machine the tracing rows of ``hotpaths.py`` move by ±10% from one
hour to the next; this counts the instructions the CPU executes instead, which
the neighbours do not change. Each mode runs the 1000-op scalar ``py_func``
chain of ``hotpaths.py`` (5 runs per subscription, as there) under
``valgrind --tool=callgrind``, once for one call and once for ``--runs`` + 1
calls; the difference over the extra ops is the cost of one op, start-up and
imports excluded. It prints instructions per op and the ratio to ``base`` (no
subscriber). It does not see memory stalls: a traced op's time ratio is
higher than its instruction ratio (the events it keeps miss the caches), so
use it to compare two versions of the code, not to predict seconds. Needs
valgrind (``apt install valgrind``); the default ``--runs 10`` takes about five
minutes.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import hotpaths  # beside this file

# mode -> the ``hotpaths.scalar_tracing_cases`` case it counts ("base": the plain run)
MODES = {"base": None,
         "subscribe-none": "subscribe(cb, capture='none')",
         "subscribe-summary": "subscribe(cb, capture='summary')",
         "trace-summary": "trace(capture='summary')",
         "trace-jsonl": "trace(path='x.jsonl')"}
OPS_PER_CALL = hotpaths.SCALAR_CHAIN * hotpaths.RUNS


def _child(mode: str, calls: int, tmp: str) -> None:
    base, cases = hotpaths.scalar_tracing_cases(tmp)
    fn = base if MODES[mode] is None else cases[MODES[mode]]
    for _ in range(calls):
        fn()


def _count(mode: str, calls: int, tmp: str) -> int:
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--child", mode, str(calls), tmp], env=env, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"valgrind run of {mode!r} failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="calls counted beyond the first")
    ap.add_argument("--modes", nargs="*", choices=list(MODES), default=list(MODES))
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]), args.child[2])
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py needs valgrind on PATH (apt install valgrind)")
    modes = ["base"] + [m for m in args.modes if m != "base"]
    ops = args.runs * OPS_PER_CALL
    print(f"instructions per op of the scalar chain (callgrind), {ops:,} ops counted per mode")
    per_op = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            per_op[mode] = (_count(mode, args.runs + 1, tmp) - _count(mode, 1, tmp)) / ops
            print(f"  {mode:20} {per_op[mode]:9,.0f} {per_op[mode] / per_op['base']:6.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
