"""The real command in a real pseudo-terminal (120x40): pause, pdb drop-in, back, quit."""
from __future__ import annotations

import os
import re
import sys
import time

import pytest
from pdb_prompts import PROMPT_RE

pexpect = pytest.importorskip("pexpect")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|\x1b\][^\x07]*\x07")


class Screen:
    """Reads the child's output; ``wait_for`` looks only at output since the last send."""

    def __init__(self, child):
        self.child = child
        self.fresh = ""

    def send(self, text: str) -> None:
        self.fresh = ""
        self.child.send(text)

    def wait_for(self, pattern: str, timeout: float = 30) -> str:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                chunk = self.child.read_nonblocking(65536, timeout=0.2)
                self.fresh += ANSI.sub("", chunk)
            except pexpect.TIMEOUT:
                pass
            except pexpect.EOF:
                break
            if re.search(pattern, self.fresh):
                return self.fresh
        raise AssertionError(f"{pattern!r} did not appear; last output:\n{self.fresh[-2000:]}")


def test_tui_pause_step_into_pdb_back_and_quit(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm-256color", PDBPP_COLORS="0",
               COLUMNS="120", LINES="40")
    child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "run", "--break", "PyFunc",
                                           os.path.join(ROOT, "examples", "py_func_sinh.py")],
                          env=env, cwd=ROOT, dimensions=(40, 120), encoding="utf-8", timeout=60)
    screen = Screen(child)
    try:
        screen.wait_for(r"PAUSED")                          # the status bar
        screen.wait_for(r"before PyFunc")
        screen.send("s")
        screen.wait_for(r"my_func\(\)[\s\S]*" + PROMPT_RE)    # pdb inside the wrapped function
        screen.send("p x\r")
        screen.wait_for(r"np\.float32\(1\.0\)")             # its real argument
        screen.send("c\r")
        screen.wait_for(r"ops of the current run")          # the app is back on screen
        screen.wait_for(r"FINISHED")
        screen.send("q")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_tui_pdb_set_trace_in_a_wrapped_function_and_what_the_program_prints_next(tmp_path):
    """A wrapped function's own ``pdb.set_trace()`` under the UI: pdb on the terminal (the
    standard pdb's session of its own read the terminal the UI held: the program hung),
    then the app is back before the program goes on, so what it prints next is in the log
    and the run's end is told as it was (it said "no op ran" when the program ended
    before the app was back)."""
    script = tmp_path / "settrace.py"
    script.write_text(
        "import pdb\n"
        "import numpy as np\n"
        "import pyfunc_debug as tf\n\n"
        "def scale(x):\n"
        "    y = x * 3\n"
        "    pdb.set_trace()\n"
        "    return y\n\n"
        "x = tf.compat.v1.placeholder(tf.float32)\n"
        "y = tf.numpy_function(scale, [x], tf.float32, name='scale')\n"
        "with tf.compat.v1.Session() as sess:\n"
        "    print('result', sess.run(y, {x: np.float32(2)}))\n")
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm-256color", PDBPP_COLORS="0",
               COLUMNS="120", LINES="40")
    child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "run", str(script)],
                          env=env, cwd=tmp_path, dimensions=(40, 120), encoding="utf-8",
                          timeout=60)
    screen = Screen(child)
    try:
        screen.wait_for(r"scale\(\)[\s\S]*" + PROMPT_RE)
        screen.send("p y\r")
        screen.wait_for(r"6\.0")
        screen.send("c\r")
        shown = screen.wait_for(r"FINISHED.*")
        shown += screen.wait_for(r"\[stdout\] result 6\.0", timeout=5) \
            if "[stdout] result 6.0" not in shown else ""
        assert "no op ran" not in shown
        screen.send("q")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close()
    assert child.exitstatus == 0
