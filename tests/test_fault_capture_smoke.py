"""``benchmarks/fault_capture.py`` runs, at a tiny size (correctness only: no timing checked)."""
from __future__ import annotations

import os
import sys

BENCHMARKS = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks")


def test_the_fault_capture_benchmark_runs(capsys):
    sys.path.insert(0, BENCHMARKS)
    try:
        import fault_capture
    finally:
        sys.path.remove(BENCHMARKS)
    fault_capture.main(["--rounds", "1", "--ops", "20", "--calls", "1"])
    out = capsys.readouterr().out
    assert out.count("base = capture='summary'") == 4
    for row in ("trace(capture='fault')", "trace('x.jsonl', capture='fault')",
                "1 fault/run", "trace(capture='fault'), callbacks"):
        assert row in out
