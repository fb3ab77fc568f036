"""The benchmarks no other smoke test runs (attach, Dask, the frameworks' wrapper, the
instruction counts) run at a tiny size; and every script in ``benchmarks/`` is run by
some test, so none rots unseen (correctness only: no timing is checked)."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil

import pytest

from programs import run_benchmark

HERE = pathlib.Path(__file__).resolve().parent
BENCHMARKS = HERE.parent / "benchmarks"
# modules the benchmarks import rather than scripts of their own (hotpaths' scale case
# runs scaling.py in fresh processes: test_hot_paths checks its table)
HELPERS = {"scaling"}


def test_every_benchmark_script_is_run_by_a_test():
    tests = "".join(p.read_text() for p in HERE.glob("test_*.py"))
    missing = []
    for script in sorted(BENCHMARKS.glob("*.py")):
        name = script.stem
        ran = re.search(rf'"{name}\.py"|_bench\("{name}"\)|^\s*import {name}$', tests, re.M)
        if name not in HELPERS and ran is None:
            missing.append(script.name)
    assert not missing, f"benchmarks no test runs: {missing}"


def test_the_attach_benchmark_runs_at_a_tiny_size():
    out = run_benchmark("attach.py", "--n", "20", "--runs", "2", "--pairs", "1").stdout
    assert "client attached" in out and "target slowdown" in out
    assert re.search(r"streamed to client +[\d,]+ events", out), out


def test_the_attach_benchmarks_served_callbacks_run_at_a_tiny_size():
    out = run_benchmark("attach.py", "--callbacks", "40", "--rounds", "1").stdout
    for way in ("unserved", "attached, --capture none", "(console)", "(the UI: pending)"):
        assert re.search(rf"{re.escape(way)} +[\d.]+ +[\d.]+ +[+-][\d.]+", out), out


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="needs the distributed extra")
def test_the_dask_benchmark_runs_at_a_tiny_size():
    out = run_benchmark("dask_ops.py", "--n", "4", "--runs", "1", timeout=600).stdout
    for row in ("remote op overhead:", "+ --break-on error:", "4 ops on one worker:",
                "4 ops alternating:"):
        assert row in out, out


@pytest.mark.skipif(not any(importlib.util.find_spec(m) for m in ("tensorflow", "jax")),
                    reason="needs the tensorflow or jax extra")
def test_the_frameworks_benchmark_runs_at_a_tiny_size():
    out = run_benchmark("frameworks.py", "--calls", "20", "--repeats", "1",
                        timeout=600).stdout
    rows = [line for line in out.splitlines() if "µs/callback" in line]
    assert rows and all("instrumented" in r and "traced" in r for r in rows), out


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_the_instruction_count_runs_at_a_tiny_size():
    out = run_benchmark("instructions.py", "--runs", "1", "--modes", "trace-summary",
                        timeout=600).stdout
    # one call's difference is within the count's noise at this size (a CI run printed
    # -126 for the base): a row per mode is what is checked, not its number
    rows = re.findall(r"^  (\S+) +-?[\d,]+ +-?[\d.]+x$", out, re.M)
    assert rows == ["base", "trace-summary"], out
