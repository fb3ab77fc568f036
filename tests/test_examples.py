"""Every script in examples/ runs on its own and gives its real result."""
from __future__ import annotations

import pathlib
import runpy
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="example")


def test_py_func_sinh():
    assert _load("py_func_sinh")["main"]() == np.float32(1.1752012)


def test_log_huber():
    results = _load("log_huber")["main"]()
    for mode in ("graph", "eager"):
        assert tuple(results[(mode, 1.0)]) == (1.0, 2.0)
        assert results[(mode, 3.0)][0] == pytest.approx(7.243721, rel=1e-6)
        assert results[(mode, 3.0)][1] == pytest.approx(2.6666667, rel=1e-6)


def test_numpy_function_in_function():
    assert _load("numpy_function_in_function")["main"]().numpy() == np.float32(1.3810978)


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")
                                           if p.name != "__init__.py"))  # the package's
def test_each_example_exits_zero_as_a_script(script):
    if script == "dask_pipeline.py":
        pytest.importorskip("dask.distributed")  # the ``distributed`` extra
    result = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
