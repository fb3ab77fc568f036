"""Where the UI's cost on a real program goes (issue 24): the tf.data pipeline of
``real_pipeline.py`` with the UI taken apart.

    python benchmarks/ui_parts.py [--images 8000] [--rounds 3] [--modes plain,console,...]
                                  [--against OTHER_ENV/bin/python]

Modes, taking turns each round, each the program's own seconds (as
``real_pipeline.py`` times them) and its ratio to plain:

- ``plain``: ``python`` alone;
- ``console``: ``run --tf --console`` (the debugger, no UI);
- ``link``: what the UI attaches to the program — its bridge and link (values
  captured as the UI captures them, breakpoints on errors) — drained every tick
  on a thread of its own, with no Textual app at all;
- ``still``: the whole UI in a pseudo-terminal, its ticker stopped: the app is up
  but never applies an event nor redraws after the first screen;
- ``ui``: ``run --tf`` with the UI, as a user runs it;
- ``attach``: the UI in another process: the program under ``run --tf --listen
  127.0.0.1:0 --wait``, and ``pyfunc-debug attach`` with the UI in a
  pseudo-terminal (what the program's process keeps is the attach server's link);
- ``attach-values``: the same, with value summaries (``attach --capture summary``);
- ``attach-console``: the same with ``attach --console`` (no UI: what serving the
  events costs the program);
- ``against``: with ``--against PYTHON``, ``ui`` under that interpreter: another
  checkout's environment (say the previous release's, with this one's packages on
  its path), the same program. Every round runs the modes in turn, in reverse
  order every other round, so the machine's drift hits this code and that one
  alike: on a shared machine a single run moves by 0.1x, and only rounds taken in
  turn show a change smaller than that. ``--modes`` picks modes
  (``--modes plain,console,ui --against ...``: the UI against another version).

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
MODES = ("plain", "console", "link", "still", "ui", "attach", "attach-values",
         "attach-console")


def seconds(mode: str, size: int, against: str | None = None) -> float:
    """The program's seconds in ``mode`` (one process; a pty where Textual runs)."""
    if mode in ("plain", "console", "ui"):
        return rp.run_mode(mode, "tf", size)
    if mode in ("attach", "attach-console", "attach-values"):
        return attach_run(size, console=mode == "attach-console",
                          capture="summary" if mode == "attach-values" else "none")
    if mode == "against":   # the same command, another interpreter (and its pyfunc_debug)
        return rp.ui_run("tf", size, command=lambda *a: [against, *rp._command(*a)[1:]])

    def part_command(*args) -> list:   # this file runs the CLI with a part left out
        ui = rp._command(*args)   # [python, -m, pyfunc_debug, run, ...]
        return [ui[0], HERE, "--part", mode, "--", *ui[3:]]

    return rp.ui_run("tf", size, command=part_command)


def attach_run(size: int, timeout: float = 900.0, console: bool = False,
               capture: str = "none") -> float:
    """The program served (``run --tf --listen --wait``) and the UI attached from another
    process in a pseudo-terminal; ``q`` (detach) once the program has written its time.
    ``console``: ``attach --console`` instead of the UI (it ends with the program)."""
    import re
    import subprocess
    import tempfile

    import pexpect

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        program = rp._command("ui", "tf", size, out, tmp)
        target = subprocess.Popen([*program[:4], "--listen", "127.0.0.1:0", "--wait",
                                   *program[4:]], env=rp._env(), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            found = None
            while found is None:
                line = target.stderr.readline()
                if not line:
                    raise RuntimeError("attach mode: the target ended before listening")
                found = re.search(r"listening on (\S+) token (\S+)", line)
            threading_drain(target.stderr)
            attach = [sys.executable, "-m", "pyfunc_debug", "attach", found[1],
                      "--token", found[2], "--capture", capture,
                      *(["--console"] if console else [])]
            env = dict(rp._env(), TERM="xterm-256color", COLUMNS="120", LINES="40")
            child = pexpect.spawn(attach[0], attach[1:], env=env, dimensions=(40, 120),
                                  timeout=timeout)
            try:
                rp.read_until_written(child, out, timeout, "attach mode")
                if not console:
                    child.send("q")
                child.expect(pexpect.EOF, timeout=60)
            finally:
                child.close(force=True)
            target.wait(timeout=120)
        finally:
            if target.poll() is None:
                target.kill()
        return rp._seconds(out)


def threading_drain(stream) -> None:
    """Read ``stream`` to its end on a thread of its own (a pipe never read would stall
    the writer)."""
    import threading
    threading.Thread(target=stream.read, daemon=True).start()


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
    p.add_argument("--modes", default=",".join(MODES),
                   help="modes to run, comma-separated (plain first: the ratios' base)")
    p.add_argument("--against", metavar="PYTHON",
                   help="also the UI under this interpreter (mode 'against')")
    p.add_argument("--part", choices=("link", "still"), help=argparse.SUPPRESS)
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.part:
        rest = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
        sys.exit(part(a.part, rest))
    if not rp._have("tensorflow", "textual", "pexpect"):
        print("ui_parts: skipped (needs the tensorflow extra, textual and pexpect)")
        return
    modes = [m for m in a.modes.split(",") if m]
    if a.against:
        modes.append("against")
    unknown = set(modes) - set(MODES) - {"against"}
    if unknown or modes[:1] != ["plain"]:
        p.error(f"--modes: plain first, then any of {', '.join(MODES[1:])}")
    times = {m: [] for m in modes}
    for r in range(a.rounds):
        for m in (modes if r % 2 == 0 else modes[::-1]):
            times[m].append(seconds(m, a.images, a.against))
    base = statistics.median(times["plain"])
    print(f"tf.data + py_function, {a.images} images, {a.rounds} rounds (medians; min-max)")
    for m, v in times.items():
        med = statistics.median(v)
        print(f"  {m:14} {med:7.2f} s ({min(v):.2f}-{max(v):.2f})  {med / base:5.2f}x")


if __name__ == "__main__":
    main()
