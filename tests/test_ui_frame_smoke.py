"""``benchmarks/ui_frame.py`` runs against the current UI, at a tiny size (no timing checked)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("textual")

SCRIPT = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", "ui_frame.py")


def test_the_ui_frame_benchmark_runs_at_a_tiny_size():
    result = subprocess.run([sys.executable, SCRIPT, "--per-tick", "4", "--ticks", "2",
                             "--rounds", "1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("UI thread, 4 events a tick, 120x40")
    assert lines[1].split()[-1] == "1.00x" and lines[2].strip().startswith("tick and Textual")
    assert float(lines[2].split()[-2]) > 0 and lines[4].strip().startswith("feeding")
