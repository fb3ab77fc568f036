"""``benchmarks/ui_frame.py`` runs against the current UI, at a tiny size (no timing checked)."""
from __future__ import annotations

import pytest

from programs import run_benchmark

pytest.importorskip("textual")


def test_the_ui_frame_benchmark_runs_at_a_tiny_size():
    lines = run_benchmark("ui_frame.py", "--per-tick", "4", "--ticks", "2",
                          "--rounds", "1").stdout.splitlines()
    assert lines[0].startswith("UI thread, 4 events a tick, 120x40")
    assert lines[1].split()[-1] == "1.00x" and lines[2].strip().startswith("tick and Textual")
    assert float(lines[2].split()[-2]) > 0 and lines[4].strip().startswith("feeding")
