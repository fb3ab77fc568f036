"""Where the UI's cost on a real program goes (issue 24): the tf.data pipeline of
``real_pipeline.py`` with the UI taken apart.

    python benchmarks/ui_parts.py [--images 8000] [--rounds 3]

Modes, taking turns each round, each the program's own seconds (as
``real_pipeline.py`` times them) and its ratio to plain:

- ``plain``: ``python`` alone;
- ``console``: ``run --tf --console`` (the debugger, no UI);
- ``link``: what the UI attaches to the program — its bridge and link (values
  captured as the UI captures them, breakpoints on errors) — drained every tick
  on a thread of its own, with no Textual app at all;
- ``still``: the whole UI in a pseudo-terminal, its ticker stopped: the app is up
  but never applies an event nor redraws after the first screen;
- ``ui``: ``run --tf`` with the UI, as a user runs it.

``link`` minus ``console`` is what the UI's link costs the program's threads;
``still`` minus ``link``, an idle Textual app beside the program; ``ui`` minus
``still``, applying the events and drawing four times a second. The program's
Python is bound by the interpreter lock (its callbacks' threads and the
training loop take about one core together), so each part's cost is about the
lock time it takes. Needs the ``tensorflow`` extra, ``textual`` and ``pexpect``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import real_pipeline as rp   # beside this file

HERE = os.path.abspath(__file__)
MODES = ("plain", "console", "link", "still", "ui")


def seconds(mode: str, size: int) -> float:
    """The program's seconds in ``mode`` (one process; a pty where Textual runs)."""
    if mode in ("plain", "console", "ui"):
        return rp.run_mode(mode, "tf", size)

    def part_command(*args) -> list:   # this file runs the CLI with a part left out
        ui = rp._command(*args)   # [python, -m, pyfunc_debug, run, ...]
        return [ui[0], HERE, "--part", mode, "--", *ui[3:]]

    return rp.ui_run("tf", size, command=part_command)


# -- in the child: the CLI with one part of the UI left out ---------------------------------

def _link_only(app) -> int:
    """``launch.run_app`` without the app: the program runs on a worker thread with the
    app's bridge (and its link), drained every tick as the app drains it."""
    import threading

    from pyfunc_debug.tui.app import BATCH, TICK
    done = threading.Event()

    def drain():
        while not done.wait(TICK):
            app.bridge.drain(BATCH)

    threading.Thread(target=drain, daemon=True, name="drain").start()
    worker = threading.Thread(target=lambda: app.bridge.run(app.target), name="pfd-worker")
    worker.start()
    worker.join()
    done.set()
    return 0


def part(mode: str, cli_args: list) -> int:
    if mode == "link":
        import pyfunc_debug.tui.launch as launch
        launch.run_app = _link_only
    elif mode == "still":
        import pyfunc_debug.tui.app as app
        app.TICK = 1e6   # the ticker's first call never comes
    from pyfunc_debug.cli import main
    return main(cli_args)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=8000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--part", choices=("link", "still"), help=argparse.SUPPRESS)
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.part:
        rest = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
        sys.exit(part(a.part, rest))
    if not rp._have("tensorflow", "textual", "pexpect"):
        print("ui_parts: skipped (needs the tensorflow extra, textual and pexpect)")
        return
    times = {m: [] for m in MODES}
    for _ in range(a.rounds):
        for m in MODES:
            times[m].append(seconds(m, a.images))
    base = statistics.median(times["plain"])
    print(f"tf.data + py_function, {a.images} images, {a.rounds} rounds (medians; min-max)")
    for m, v in times.items():
        med = statistics.median(v)
        print(f"  {m:8} {med:7.2f} s ({min(v):.2f}-{max(v):.2f})  {med / base:5.2f}x")


if __name__ == "__main__":
    main()
