"""The built wheel, as a user gets it, on one interpreter (CI runs this on every Python
from 3.10 to 3.13). Run it with the python of a fresh venv where only the wheel (no
extras) plus pytest and pexpect are installed; no checkout on sys.path.

Checks, each as a user meets it:
- the distribution's top-level names are ``pyfunc_debug*`` only, and imports come
  from site-packages (a user's own ``tui`` module still imports under ``run``);
- ``pyfunc-debug --version``, ``demo --print``; the UI opens headless on the demo
  and pauses (a style sheet missing from package data fails here);
- ``pdb``, ``breakpoint()`` and pytest still work for unrelated code; the pytest
  plugin writes a failing test's trace;
- ``pyfunc-debug run`` in a real pty: the UI opens at the failing op, ``q`` quits,
  exit status 1 with the user's error line.
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

KEYERROR = """
import numpy as np
import pyfunc_debug as tf
import tui                          # the user's own module of that name

def lookup(x):
    table = {1: 2}
    return np.int64(table[int(x) + 1])

print("user tui:", tui.MINE)
x = tf.compat.v1.placeholder(tf.float32)
y = tf.compat.v1.py_func(lookup, [x], tf.int64, name="lookup")
with tf.compat.v1.Session() as sess:
    print(sess.run(y, {x: 1.0}))
"""

TEST_FILE = """
import numpy as np
import pyfunc_debug as tf

def test_passes():
    assert 1 + 1 == 2

def divide(v):
    return np.float32(v) + {}[1]

def test_fails_in_an_op():
    x = tf.compat.v1.placeholder(tf.float32)
    y = tf.compat.v1.py_func(divide, [x], tf.float32, name="div")
    with tf.compat.v1.Session() as sess:
        sess.run(y, {x: 1.0})
"""


def sh(*args, stdin=None, cwd=None, env=None, timeout=120):
    r = subprocess.run(list(args), capture_output=True, text=True, input=stdin, cwd=cwd,
                       env=env or ENV, timeout=timeout)
    return r


def check(cond, what, detail=""):
    if not cond:
        raise SystemExit(f"wheel check FAILED: {what}\n{detail}")
    print(f"  ok  {what}")


def top_level_names(work) -> None:
    from importlib.metadata import distribution
    files = distribution("pyfunc-debug").files
    tops = {str(f).split("/")[0] for f in files}
    tops = {t[:-3] if t.endswith(".py") else t for t in tops
            if not t.endswith((".dist-info", ".data")) and t != ".." and t != "__pycache__"}
    check(tops and all(t.startswith("pyfunc_debug") for t in tops),
          f"top-level names are pyfunc_debug* only: {sorted(tops)}")
    import pyfunc_debug
    import pyfunc_debug.tui
    for mod in (pyfunc_debug.tui, pyfunc_debug):
        check("site-packages" in mod.__file__, f"{mod.__name__} from site-packages")


def commands(work) -> None:
    r = sh(os.path.join(BIN, "pyfunc-debug"), "--version")
    check(r.returncode == 0 and r.stdout.startswith("pyfunc-debug "), "pyfunc-debug --version",
          r.stderr)
    r = sh(os.path.join(BIN, "pyfunc-debug"), "demo", "--print", cwd=work)
    check(r.returncode == 0 and "normalize" in r.stdout, "pyfunc-debug demo --print", r.stderr)
    r = sh(os.path.join(BIN, "pyfunc-debug"), "demo", "--list", cwd=work)
    check(r.returncode == 0 and "nan_hunt" in r.stdout and "site-packages" in r.stdout,
          "pyfunc-debug demo --list (the examples ship in the wheel)", r.stdout + r.stderr)
    r = sh(os.path.join(BIN, "pyfunc-debug"), "demo", "--example", "py_func_sinh", "--console",
           cwd=work, stdin="")
    check(r.returncode == 0 and "1.1752012" in r.stdout, "pyfunc-debug demo --example py_func_sinh",
          r.stdout + r.stderr)


async def _demo_pauses() -> None:
    from pyfunc_debug.tui.launch import demo_app
    from pyfunc_debug.tui.widgets.status_bar import StatusBar
    app = demo_app(show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 30
        while app.pause is None and time.monotonic() < deadline:
            await pilot.pause(0.05)
        check(app.pause is not None and app.pause.op_name == "normalize",
              "headless UI pauses at normalize in the demo")
        status = str(app.query_one(StatusBar).render())
        check("PAUSED" in status, "status bar says PAUSED", status)
        await pilot.press("q")
        await pilot.pause(0.2)


def neighbours(work) -> None:
    """pdb, breakpoint() and pytest for code that is not ours."""
    r = sh(sys.executable, "-c", "import pdb; print(pdb.Pdb.__module__)")
    check(r.returncode == 0, f"import pdb ({r.stdout.strip()})", r.stderr)
    r = sh(sys.executable, "-c", "x = 41\nbreakpoint()\nprint('after', x + 1)",
           stdin="p x\nc\n")
    check(r.returncode == 0 and "41" in r.stdout and "after 42" in r.stdout, "breakpoint()",
          r.stdout + r.stderr)
    project = os.path.join(work, "unrelated")
    os.makedirs(project)
    with open(os.path.join(project, "test_plain.py"), "w") as f:
        f.write("def test_one():\n    assert True\n")
    r = sh(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    check(r.returncode == 0 and "1 passed" in r.stdout, "pytest in an unrelated project",
          r.stdout + r.stderr)
    r = sh(sys.executable, "-c", "import sys, pyfunc_debug_pytest; "
           "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pyfunc_debug')))")
    check(r.returncode == 0 and r.stdout.strip() == "[]",
          "the pytest entry point imports neither numpy nor the engine", r.stdout + r.stderr)


def plugin(work) -> None:
    project = os.path.join(work, "graphs")
    os.makedirs(project)
    with open(os.path.join(project, "test_graph.py"), "w") as f:
        f.write(TEST_FILE)
    r = sh(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pfd-trace=traces",
           cwd=project)
    written = os.listdir(os.path.join(project, "traces")) if os.path.isdir(
        os.path.join(project, "traces")) else []
    check(r.returncode == 1 and "1 failed, 1 passed" in r.stdout, "pytest --pfd-trace runs",
          r.stdout + r.stderr)
    traces = [w for w in written if w.endswith(".jsonl") and not w.endswith(".faults.jsonl")]
    check(len(traces) == 1 and "fails_in_an_op" in traces[0],
          f"a failing test's trace is written: {written}")
    command = f"pyfunc-debug replay {os.path.join('traces', traces[0])} --op div --pdb"
    check(command in r.stdout, "the failure report prints the replay command", r.stdout)
    r = sh(os.path.join(BIN, "pyfunc-debug"), "replay", os.path.join("traces", traces[0]),
           cwd=project)
    check(r.returncode == 1 and "reproduced: KeyError" in r.stdout,
          "pyfunc-debug replay re-raises the failing test's call", r.stdout + r.stderr)


def pty_run(work) -> None:
    import pexpect
    with open(os.path.join(work, "keyerror.py"), "w") as f:
        f.write(KEYERROR)
    with open(os.path.join(work, "tui.py"), "w") as f:
        f.write("MINE = 'yes'\n")
    env = dict(ENV, TERM="xterm-256color", COLUMNS="120", LINES="40")
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(os.path.join(BIN, "pyfunc-debug"), ["run", "keyerror.py"], cwd=work,
                          env=env, dimensions=(40, 120), encoding="utf-8", timeout=60)
    seen = ""
    deadline = time.monotonic() + 60
    while "KeyError" not in seen and time.monotonic() < deadline:
        try:
            seen += child.read_nonblocking(65536, timeout=1)
        except pexpect.TIMEOUT:
            pass
    check("KeyError" in seen, "run: the UI opens at the failing op (pty)", seen[-2000:])
    time.sleep(0.5)
    child.send("q")
    rest = ""
    try:
        while True:
            rest += child.read_nonblocking(65536, timeout=30)
    except pexpect.EOF:
        pass
    child.close()
    check(child.exitstatus == 1, f"run: q quits with the script's status 1 ({child.exitstatus})",
          rest[-2000:])
    check("user tui: yes" in seen + rest, "the user's own tui module is the one imported")
    check("KeyError: 2" in rest, "run: the exit summary names the user's error", rest[-2000:])


def main() -> int:
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    print(f"wheel check on Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)   # not the checkout: imports come from the wheel
        top_level_names(work)
        commands(work)
        asyncio.run(_demo_pauses())
        neighbours(work)
        plugin(work)
        pty_run(work)
    print("wheel check: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
