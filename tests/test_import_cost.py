"""``import pyfunc_debug`` stays cheap (issue 28) and every public name still works.

What the first run does not need loads on first use (PEP 562 ``__getattr__``):
these tests check that it is not loaded by the import, that every name in
``__all__`` resolves, and that the import benchmark runs.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
NOT_LOADED = ("pyfunc_debug.distributed", "pyfunc_debug.remote", "dask", "textual",
              "pyfunc_debug.debug", "pyfunc_debug.serialize", "pyfunc_debug.trace.recorder",
              "pyfunc_debug.trace.diff", "pyfunc_debug.autodiff")


def _run(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYFUNC_DEBUG_LISTEN"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_import_loads_none_of_what_the_first_run_does_not_need():
    out = _run("import sys, pyfunc_debug; "
               f"print([m for m in sys.modules if any(m == n or m.startswith(n + '.') "
               f"for n in {NOT_LOADED!r})])")
    assert out.strip() == "[]"


def test_a_first_run_still_needs_none_of_it():
    out = _run("import sys, numpy as np, pyfunc_debug as tf\n"
               "g = tf.Graph()\n"
               "with g.as_default():\n"
               "    x = tf.compat.v1.placeholder(tf.float32)\n"
               "    y = tf.numpy_function(lambda a: a + 1, [x], tf.float32)\n"
               "with tf.compat.v1.Session(graph=g) as s:\n"
               "    assert s.run(y, {x: np.float32(1)}) == 2\n"
               "print([m for m in sys.modules if m.split('.')[0] in ('dask', 'textual') or "
               "m.startswith(('pyfunc_debug.distributed', 'pyfunc_debug.remote'))])")
    assert out.strip() == "[]"


def test_every_public_name_resolves():
    import pyfunc_debug as tf
    missing = [n for n in tf.__all__ if getattr(tf, n, None) is None]
    assert missing == []
    assert callable(tf.trace) and callable(tf.load_trace) and callable(tf.diff_traces)
    assert callable(tf.gradients) and callable(tf.import_graph_def)
    assert tf.debug.Debugger is not None and tf.compat.v1.gradients is tf.gradients
    assert set(tf.__all__) <= set(dir(tf))
    with pytest.raises(AttributeError):
        tf.no_such_name   # noqa: B018


def test_star_import_and_the_lazy_names_in_a_fresh_process():
    out = _run("from pyfunc_debug import *\n"
               "import pyfunc_debug.trace.summary, pyfunc_debug as tf\n"
               "assert callable(trace) and callable(tf.trace), tf.trace\n"
               "assert debug.Debugger and gradients and import_graph_def and load_trace\n"
               "assert tf.compat.v1.gradients is gradients\n"
               "print('ok')")
    assert out.strip() == "ok"


def test_the_trace_function_survives_its_subpackage_loading_first():
    out = _run("import pyfunc_debug as tf, pyfunc_debug.trace.jsonl\n"
               "print(callable(tf.trace), type(tf.debug).__name__)")
    assert out.split() == ["True", "module"]


def test_session_cluster_loads_the_distributed_package_when_asked():
    out = _run("import sys, pyfunc_debug as tf\n"
               "from pyfunc_debug.runtime import hooks\n"
               "assert 'pyfunc_debug.distributed' not in sys.modules\n"
               "try:\n"
               "    tf.Session(cluster=object())\n"
               "except Exception as e:\n"
               "    print(type(e).__name__)\n"
               "import pyfunc_debug.distributed as d\n"
               "print('pyfunc_debug.distributed' in sys.modules, hooks.cluster is d.cluster_executor)")
    assert out.split()[-2:] == ["True", "True"]


def test_the_import_benchmark_runs_at_a_tiny_size():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "import_time.py"),
                             "--rounds", "1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "pyfunc_debug" in result.stdout and "x numpy" in result.stdout
    assert "should not" not in result.stdout
