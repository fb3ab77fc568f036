"""``benchmarks/real_pipeline.py`` runs, at a tiny size: the per-call figures in this
process, the JAX program in its four modes (plain, trace, console, UI) through ``main``,
and the TF pipeline under ``trace --tf``. Correctness only: no timing is checked."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

BENCHMARKS = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks")
SCRIPT = os.path.join(BENCHMARKS, "real_pipeline.py")
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")


def _bench():
    sys.path.insert(0, BENCHMARKS)
    try:
        import real_pipeline
    finally:
        sys.path.remove(BENCHMARKS)
    return real_pipeline


def test_the_per_call_figures_come_out(capsys):
    bench = _bench()
    calls = bench.per_call(calls=20, rounds=1)
    bench.report_calls(calls, None)
    out = capsys.readouterr().out
    assert "64 float32:" in out and "x one pass" in out
    assert calls[64]["recorded"] > 0 and calls[1 << 20]["pass"] > 0
    assert "64 float32 recorded to .jsonl: this process +" in out
    assert calls["jsonl"]["load"] > 0   # the file was read back, and timed


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="needs the jax extra")
def test_the_jax_program_runs_in_every_mode():
    result = subprocess.run([sys.executable, SCRIPT, "--only", "jax", "--steps", "3",
                             "--rounds", "1"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("jax jit + pure_callback, 3 steps") for line in lines)
    modes = [line.split()[0] for line in lines if line.startswith("  ")]
    ui = importlib.util.find_spec("textual") and importlib.util.find_spec("pexpect")
    assert modes == (["plain", "trace", "fault", "console", "ui"] if ui else
                     ["plain", "trace", "fault", "console"])
    assert any(line.startswith("fault capture / summary trace: ") for line in lines)


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                    reason="needs the tensorflow extra")
def test_the_tf_pipeline_runs_under_trace():
    assert _bench().run_mode("trace", "tf", 16) > 0
    assert _bench().run_mode("fault", "tf", 16) > 0


@pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("tensorflow", "textual",
                                                                  "pexpect")),
                    reason="needs the tensorflow extra, textual and pexpect")
def test_the_ui_parts_benchmark_runs_every_part():
    from programs import run_benchmark
    result = run_benchmark("ui_parts.py", "--images", "16", "--rounds", "1", timeout=600)
    modes = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("  ")]
    assert modes == ["plain", "console", "link", "still", "ui", "attach", "attach-values",
                     "attach-console"], result.stdout


@pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("tensorflow", "textual",
                                                                  "pexpect")),
                    reason="needs the tensorflow extra, textual and pexpect")
def test_the_ui_parts_benchmark_takes_turns_with_another_interpreter():
    import sys

    from programs import run_benchmark
    result = run_benchmark("ui_parts.py", "--images", "16", "--rounds", "2", "--modes",
                           "plain,ui", "--against", sys.executable, timeout=600)
    modes = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("  ")]
    assert modes == ["plain", "ui", "against"], result.stdout
