"""``benchmarks/tui_throughput.py`` runs against the current UI, at a tiny size."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("textual")

SCRIPT = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", "tui_throughput.py")


def test_the_tui_throughput_benchmark_runs_at_a_tiny_size():
    result = subprocess.run([sys.executable, SCRIPT, "--counts", "500", "--runs", "2",
                             "--ops", "20"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "NoMatches" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("pushed       500 events")
    assert lines[1].startswith("real run") and "20-op chain" in lines[1]
