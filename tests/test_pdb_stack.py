"""A pdb session's stack is the user's program: ``w`` lists no frame of ours (the
executor, an op's kernel, the pdb bridge) and says how many it left out, and ``u`` from
a wrapped function goes to the line that ran the session. On pdbpp and the standard pdb
(CI runs this file on Python 3.13 too)."""
from __future__ import annotations

import io
import os
import re

import numpy as np

import pyfunc_debug as pfd
from pyfunc_debug.debug import Debugger, PdbRunner

OURS = os.path.dirname(pfd.__file__) + os.sep


def _session(func, commands: str, action: str, **break_on) -> str:
    """What pdb said while ``func`` ran as a ``numpy_function`` op, ``commands`` typed."""
    x = pfd.compat.v1.placeholder(pfd.float32)
    y = pfd.numpy_function(func, [x], pfd.float32)
    out = io.StringIO()
    dbg = Debugger(on_pause=lambda p: action,
                   pdb_runner=PdbRunner(stdin=io.StringIO(commands), stdout=out))
    if break_on:
        dbg.break_on(**break_on)
    try:
        with dbg, pfd.Session() as sess:
            sess.run(y, {x: np.float32(2)})  # the session's line
    except pfd.errors.OpError:
        pass
    return out.getvalue()


def double(x):
    y = x * 2
    return y


def fails(x):
    y = x * 2
    return y.missing


def stops(x):
    breakpoint()
    return x * 2


def test_stepping_into_an_op_shows_only_the_wrapped_function(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    said = _session(double, "w\nu\nc\n", "step_into", op_type="PyFunc")
    assert "y = x * 2" in said
    assert OURS not in said
    assert "frame(s) of its own not shown" in said
    assert "Oldest frame" in said   # nothing of ours to go up into


def test_post_mortem_shows_the_failing_function_without_the_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    said = _session(fails, "w\nu\nc\n", "post_mortem", on_error=True)
    assert "return y.missing" in said
    assert OURS not in said and "Oldest frame" in said


def test_up_from_a_breakpoint_goes_to_the_line_that_ran_the_session(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PYTHONBREAKPOINT", raising=False)
    said = _session(stops, "w\nu\nc\n", "continue")
    assert OURS not in said
    assert said.count("sess.run(y, {x: np.float32(2)})  # the session's line") >= 2  # w, u


def test_under_the_run_command_the_stack_starts_at_the_users_script(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "wrong.py"
    script.write_text(
        "import numpy as np\n"
        "import pyfunc_debug as tf\n"
        "def wrong(x):\n"
        "    return (x * 2).astype(np.float64)\n"
        "x = tf.compat.v1.placeholder(tf.float32)\n"
        "y = tf.numpy_function(wrong, [x], tf.float32)\n"
        "with tf.Session() as sess:\n"
        "    sess.run(y, {x: np.float32(2)})  # the script's line\n")
    env = dict(os.environ, HOME=str(tmp_path), NO_COLOR="1")
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "run", "--break-on", "error",
                        "--console", str(script)], input="pm\nw\nu\nc\nc\n",
                       capture_output=True, text=True, env=env, timeout=120)
    out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout)   # pdbpp highlights even into a pipe
    said = out[out.index("frame(s) of its own not shown"):]
    stack = said[:said.index("return (x * 2)")]
    assert "runpy" not in stack and OURS not in stack
    assert "wrong.py(8)<module>()" in stack   # the oldest frame shown: the script's own
    assert "Oldest frame" not in said   # u went up to it
    assert said.count("# the script's line") >= 2   # in w, and where u stood
