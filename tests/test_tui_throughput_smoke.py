"""``benchmarks/tui_throughput.py`` runs against the current UI, at a tiny size."""
from __future__ import annotations

import pytest

from programs import run_benchmark

pytest.importorskip("textual")


def test_the_tui_throughput_benchmark_runs_at_a_tiny_size():
    result = run_benchmark("tui_throughput.py", "--counts", "500", "--runs", "2", "--ops", "20")
    assert "NoMatches" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("pushed       500 events")
    assert lines[1].startswith("real run") and "20-op chain" in lines[1]
