"""Remote ops in a real terminal (pexpect): ``run --console --break-on error`` on
examples/dask_pipeline.py pauses at the error ``parse`` raised on a Dask worker, and ``pm``
opens pdb inside that worker, at the ``raise``, on this terminal; attached to a target
that runs the pipeline, ``s`` opens pdb in the target's worker on the client's terminal."""
from __future__ import annotations

import re
import sys

import pytest

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("dask.distributed")

from test_remote_pty import _env, listening  # noqa: E402
from test_tui_e2e import ROOT, Screen  # noqa: E402


def test_console_pauses_at_a_worker_error_and_post_mortem_runs_in_the_worker(tmp_path):
    env = _env(tmp_path)
    child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "run", "--console",
                                           "--break-on", "error", "examples/dask_pipeline.py",
                                           "--bad-record"],
                          env=env, cwd=ROOT, dimensions=(40, 120), encoding="utf-8", timeout=60)
    try:
        screen = Screen(child)
        seen = screen.wait_for(r"paused at error in op 'parse'[\s\S]*\(pfd\) ", timeout=60)
        assert "(on worker tcp://" in seen and "malformed record" in seen
        screen.send("pm\r")
        seen = screen.wait_for(r"\(Pdb\+*\) ")
        assert "parse()" in seen and "raise ValueError" in seen   # the frame that raised
        screen.send("p line\r")
        assert "b'7;0.25'" in screen.wait_for(r"\(Pdb\+*\) ")      # its real value
        screen.send("!import os; print('pid', os.getpid())\r")
        pid = int(re.search(r"pid (\d+)", screen.wait_for(r"pid \d+[\s\S]*\(Pdb\+*\) ")).group(1))
        assert pid != child.pid                                    # in the worker, not here
        screen.send("c\r")
        seen = screen.wait_for(r"InvalidArgumentError[\s\S]*malformed record")
        child.expect(pexpect.EOF, timeout=60)
        child.close()
        assert child.exitstatus == 1
    finally:
        child.terminate(force=True)


def test_attach_steps_into_a_remote_op_through_the_target_to_its_worker(tmp_path):
    # two relays in a row: the attached client's terminal -> the target -> its Dask worker
    env = _env(tmp_path)
    target, address, token = listening("examples/dask_pipeline.py", env)
    child = None
    try:
        child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "attach", address,
                                               "--token", token, "--console",
                                               "--break", "features"],
                              env=env, cwd=ROOT, dimensions=(40, 120), encoding="utf-8",
                              timeout=60)
        screen = Screen(child)
        screen.wait_for(r"paused before op 'features'[\s\S]*\(pfd\) ")   # the local run
        screen.send("c\r")
        seen = screen.wait_for(r"paused before op 'features'[\s\S]*\(pfd\) ", timeout=60)
        assert "(on worker tcp://" in seen                                # the cluster run
        screen.send("s\r")
        assert "features()" in screen.wait_for(r"\(Pdb\+*\) ")
        screen.send("p count\r")
        assert "array([3., 4., 1., 5.])" in screen.wait_for(r"\(Pdb\+*\) ")
        screen.send("!import os; print('pid', os.getpid())\r")
        pid = int(re.search(r"pid (\d+)", screen.wait_for(r"pid \d+[\s\S]*\(Pdb\+*\) ")).group(1))
        assert pid not in (target.pid, child.pid)                          # the worker's
        screen.send("c\r")
        screen.wait_for("the target process ended")
        child.expect(pexpect.EOF, timeout=30)
        out, _ = target.communicate(timeout=60)
        assert target.returncode == 0 and "scores:" in out
    finally:
        target.kill()
        if child is not None:
            child.terminate(force=True)
