"""The pytest path of replay (SPEC §11): a failing test's --pfd-trace file replays the
failing call, and the failure report prints the command."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from test_pytest_plugin import QUIET, RAISE_LINE, TESTS

pytest_plugins = ["pytester"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_failing_tests_trace_replays_its_failing_call(pytester):
    pytester.makepyfile(test_inner=TESTS)
    result = pytester.runpytest(*QUIET, "--pfd-trace=traces")
    result.assert_outcomes(failed=1, passed=1)
    path = os.path.join("traces", "test_inner.py__test_fails.jsonl")
    result.stdout.fnmatch_lines([
        "*- pyfunc-debug trace -*",
        "error: KeyError: 2  [raised as UnknownError]",
        f"step into the call of op 'lookup' that went wrong: pyfunc-debug replay {path} "
        "--op lookup --pdb",
    ])
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, "-m", "pyfunc_debug", "replay", path],
                          cwd=pytester.path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"replaying op 'lookup' \(PyFunc\) of run \d+: test_inner:lookup",
                     done.stdout)   # run ids count per process: the inner pytest ran others
    assert f"reproduced: KeyError at test_inner.py:{RAISE_LINE}, as recorded" in done.stdout
