"""What ``import pyfunc_debug`` costs, against ``import numpy`` timed in the same run.

    python benchmarks/import_time.py [--rounds 9] [--module pyfunc_debug ...] [--before DIR]

Each round starts fresh interpreters one after another — the baseline
(``import numpy``), then each module — so machine load hits them alike. A child
reports the import's own time (``perf_counter`` around it) and CPU time (less
disturbed by a busy machine), the process's wall time and its peak RSS. Printed: medians over the rounds, the spread, the ratio to
numpy's, and the goals (≤ 200 ms and ≤ 40 MB for ``pyfunc_debug``; ≤ 500 ms for the
UI's ``pyfunc_debug.tui.app``, which needs Textual).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = """
import time
t0, c0 = time.perf_counter(), time.process_time()
import {module}
t1, c1 = time.perf_counter(), time.process_time()
rss = 0
with open("/proc/self/status") as f:
    for line in f:
        if line.startswith("VmHWM:"):
            rss = int(line.split()[1]) * 1024
import json, sys
print(json.dumps({{"import": t1 - t0, "cpu": c1 - c0, "rss": rss,
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in {avoid!r})}}))
"""

# packages `import pyfunc_debug` must not load: the first run needs none of them
AVOID = ("dask", "distributed", "textual", "pyfunc_debug.distributed", "pyfunc_debug.remote")
# the UI needs Textual, of course: for it only the core's other avoidances hold
UI_NEEDS = ("textual",)
GOALS = {"pyfunc_debug": (0.200, 40 * 2**20), "pyfunc_debug.tui.app": (0.500, None)}


def avoided(module: str) -> tuple:
    """The packages ``module`` must not load."""
    ui = module == "pyfunc_debug.tui" or module.startswith("pyfunc_debug.tui.")
    return tuple(a for a in AVOID if not (ui and a.split(".")[0] in UI_NEEDS))
# bytecode of every child, written on the warm-up round, away from the source tree
CACHE = os.path.join(tempfile.gettempdir(), f"pfd-import-time-{os.getuid()}")


def child(module: str, path: str | None = None) -> dict:
    """One fresh interpreter importing ``module`` (from ``path`` first, when given): its
    import time, wall time, peak RSS."""
    avoid = avoided(module)
    code = CHILD.format(module=module, avoid=tuple(a.split(".")[0] for a in avoid))
    env = dict(os.environ, PYTHONPYCACHEPREFIX=CACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # bytecode as a user's install has it, cached
    if path:
        env["PYTHONPATH"] = path
    env.pop("PYFUNC_DEBUG_LISTEN", None)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout
    wall = time.perf_counter() - t0
    got = json.loads(out.strip().splitlines()[-1])
    got["wall"] = wall
    got["loaded"] = [m for m in got["loaded"] if any(m == a or m.startswith(a + ".")
                                                     for a in avoid)]
    return got


def measure(modules, rounds: int, before: str | None = None) -> dict:
    """label -> {"import"/"wall"/"rss": [per round], "loaded": modules it should not load}.
    ``before``: a checkout whose ``pyfunc_debug`` is timed too, in the same rounds."""
    names = {"numpy": ("numpy", None), **{m: (m, None) for m in modules}}
    if before:
        names["pyfunc_debug@before"] = ("pyfunc_debug", before)
    for m, path in names.values():
        child(m, path)   # warm: bytecode and the page cache
    got = {m: {"import": [], "cpu": [], "wall": [], "rss": [], "loaded": set()} for m in names}
    for _ in range(rounds):
        for m, (module, path) in names.items():
            r = child(module, path)
            for k in ("import", "cpu", "wall", "rss"):
                got[m][k].append(r[k])
            got[m]["loaded"].update(r["loaded"])
    return got


def report(got: dict) -> None:
    base = statistics.median(got["numpy"]["import"])
    cpu_base = statistics.median(got["numpy"]["cpu"])
    print(f"  {'module':20} {'import ms':>10} {'spread':>15} {'x numpy':>8} {'CPU ms':>7} "
          f"{'x numpy':>8} {'process ms':>11} {'peak RSS MB':>12}  goal")
    for m, r in got.items():
        med = statistics.median(r["import"])
        rss = statistics.median(r["rss"])
        goal = GOALS.get(m)   # (not for a "@before" row)
        mark = ""
        if goal is not None:
            ms, mb = goal
            mark = f"≤{ms * 1e3:.0f} ms" + ("" if mb is None else f", ≤{mb / 2**20:.0f} MB") + \
                (": ok" if med <= ms and (mb is None or rss <= mb) else ": MISS")
        print(f"  {m:20} {med * 1e3:10.1f} {min(r['import']) * 1e3:6.1f}–"
              f"{max(r['import']) * 1e3:6.1f} {med / base:7.2f}x "
              f"{statistics.median(r['cpu']) * 1e3:7.1f} {statistics.median(r['cpu']) / cpu_base:7.2f}x "
              f"{statistics.median(r['wall']) * 1e3:11.1f} {rss / 2**20:12.1f}  {mark}")
        if r["loaded"]:
            print(f"    loads what it should not: {', '.join(sorted(r['loaded']))}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--module", nargs="*", default=["pyfunc_debug"])
    ap.add_argument("--before", metavar="DIR", help="a checkout (e.g. a git worktree) whose "
                    "pyfunc_debug is timed in the same rounds, for a before/after")
    args = ap.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"import time, median of {args.rounds} rounds of fresh interpreters "
          f"(load average {load}, {time.strftime('%Y-%m-%d')}; base = import numpy)")
    report(measure(args.module, args.rounds, args.before))


if __name__ == "__main__":
    main()
