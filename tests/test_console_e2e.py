"""End to end in a real pseudo-terminal: pause, step into pdb, print an argument, finish."""
from __future__ import annotations

import os
import sys

import pytest
from pdb_prompts import PROMPT_RE

pexpect = pytest.importorskip("pexpect")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_run_console_break_step_into_pdb_and_finish(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm-256color", PYTHONUNBUFFERED="1",
               PDBPP_COLORS="0")  # plain text to match; colours are not under test
    child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "run", "--console",
                                           "--break", "PyFunc",
                                           os.path.join(ROOT, "examples", "py_func_sinh.py")],
                          env=env, cwd=ROOT, dimensions=(40, 120), encoding="utf-8", timeout=60)
    try:
        child.expect_exact("paused before op 'PyFunc' (PyFunc)")
        child.expect_exact("(pfd) ")
        child.sendline("s")
        child.expect(r"my_func\(\)")              # pdb stopped inside the wrapped function
        child.expect(r"return np\.sinh\(x\)")
        child.expect(PROMPT_RE + " ")
        child.sendline("p x")
        child.expect(r"np\.float32\(1\.0\)")      # the real argument
        child.expect(PROMPT_RE + " ")
        child.sendline("c")
        child.expect_exact("py_func(np.sinh)(1.0) = np.float32(1.1752012)")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
