"""Attach from a real terminal (pexpect): the target serves (``run --listen --wait``), the
client's console stops at the NaN-producing op of examples/nan_hunt.py, and ``s`` opens pdb
inside the target's wrapped function on the client's terminal."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pexpect = pytest.importorskip("pexpect")

from test_tui_e2e import ROOT, Screen  # noqa: E402


def _env(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm-256color", PDBPP_COLORS="0",
               PYTHONUNBUFFERED="1", NO_COLOR="1")
    for k in ("PYFUNC_DEBUG_LISTEN", "PYFUNC_DEBUG_TOKEN", "PYFUNC_DEBUG_WAIT"):
        env.pop(k, None)
    return env


def listening(script: str, env) -> tuple:
    """``run --listen 127.0.0.1:0 --wait SCRIPT``: (process, address, token) it announced."""
    target = subprocess.Popen([sys.executable, "-m", "pyfunc_debug", "run", "--listen",
                               "127.0.0.1:0", "--wait", script], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = target.stderr.readline()
    found = re.fullmatch(r"pyfunc-debug: listening on (127\.0\.0\.1:\d+) token (\S+)\n", line)
    if not found:
        target.kill()
        raise AssertionError(line + target.stderr.read())
    return (target, *found.groups())


def test_attach_console_breaks_at_the_nan_producer_and_steps_into_it(tmp_path):
    env = _env(tmp_path)
    target, address, token = listening("examples/nan_hunt.py", env)
    try:
        # before the NaN-producing function runs (to step into it), and where it made the NaN
        child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "attach", address,
                                               "--token", token, "--console", "--break-on", "nan",
                                               "--break", "features/log_intensity"],
                              env=env, cwd=ROOT, dimensions=(40, 120), encoding="utf-8",
                              timeout=60)
        screen = Screen(child)
        screen.wait_for(r"paused before op 'features/log_intensity'[\s\S]*\(pfd\) ")
        screen.send("s\r")
        seen = screen.wait_for(r"\(Pdb\+*\) ")
        assert "log_intensity()" in seen              # pdb in the target's function ...
        screen.send("p float(x.min())\r")
        assert "-0.05" in screen.wait_for(r"\(Pdb\+*\) ")   # ... with its real input
        screen.send("\x03")                           # Ctrl+C: the remote pdb's, not ours
        assert "KeyboardInterrupt" in screen.wait_for(r"KeyboardInterrupt[\s\S]*\(Pdb\+*\) ")
        # Ctrl+C during a blocking call in the target wakes it, as at a local terminal (an
        # asynchronous exception waited for the sleep's end), and drops the lines typed
        # ahead meanwhile
        screen.send("import time; time.sleep(120); print('slept')\r")
        screen.send("print('typed' + ' ahead')\r")
        import time
        time.sleep(1.0)
        screen.send("\x03")
        seen = screen.wait_for(r"KeyboardInterrupt[\s\S]*\(Pdb\+*\) ", timeout=30)
        screen.send("p 6 * 7\r")
        seen = screen.wait_for(r"42[\s\S]*\(Pdb\+*\) ")
        assert "slept" not in seen and "typed ahead" not in seen
        screen.send("c\r")
        seen = screen.wait_for(r"\(pfd\) ")
        assert "paused after op 'features/log_intensity'" in seen and "nan=1" in seen
        screen.send("c\r")
        screen.wait_for("the target process ended")
        child.expect(pexpect.EOF, timeout=30)
        child.close()
        assert child.exitstatus == 0
        out, _ = target.communicate(timeout=30)
        assert target.returncode == 0
        assert "final loss" in out
    finally:
        target.kill()
