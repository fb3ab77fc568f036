"""The ``pyfunc-debug`` command line."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from pyfunc_debug import demo
from pyfunc_debug.cli import main


def test_help_lists_the_commands(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_demo_runs_three_runs_with_nan_and_error(capsys):
    assert main(["demo", "--print"]) == 0
    out = capsys.readouterr().out
    assert "run 1: loss=" in out and "has_nan=False" in out
    assert "run 2: loss=np.float32(nan) has_nan=True" in out
    assert "run 3: InvalidArgumentError at op 'validate' (PyFunc)" in out
    assert "demo.py:" in out  # the op's creation site is shown


def test_demo_results_are_real():
    results = demo.run(out=lambda line: None)
    assert np.isfinite(results[0]["loss"]) and not results[0]["has_nan"]
    assert results[1]["has_nan"] == 1
    assert results[2].op.name == "validate"


def test_python_dash_m_works():
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "--help"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and "demo" in r.stdout



