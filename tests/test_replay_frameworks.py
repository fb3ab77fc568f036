"""Replay of calls captured through the adapters (SPEC §11): a tf.data + py_function
pipeline recorded with --tf, a JAX pure_callback recorded with --jax; each call is given
its framework's own tensors again."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TF_PROGRAM = """
    import numpy as np
    import tensorflow as tf


    def scale(x):
        if float(x.numpy()[0]) == 3.0:
            raise ValueError("row 3 is bad")
        return x * 2.0


    if __name__ == "__main__":
        ds = tf.data.Dataset.from_tensor_slices(np.arange(5, dtype=np.float32).reshape(5, 1))
        ds = ds.map(lambda x: tf.py_function(scale, [x], tf.float32, name="scale_py"))
        for item in ds:
            print(item.numpy())
"""

JAX_PROGRAM = """
    import jax
    import jax.numpy as jnp
    import numpy as np


    def host_log(x):
        return np.log(np.asarray(x) - 2.0).astype(np.float32)


    @jax.jit
    def step(x):
        return jax.pure_callback(host_log, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


    if __name__ == "__main__":
        print(step(jnp.arange(4, dtype=jnp.float32)))
"""


WIDEN_PROGRAM = """
    import numpy as np
    import tensorflow as tf


    def widen(x):
        return x.astype(np.float64) * 2


    if __name__ == "__main__":
        ds = tf.data.Dataset.from_tensor_slices(np.arange(4, dtype=np.float32).reshape(4, 1))
        ds = ds.map(lambda x: tf.numpy_function(widen, [x], tf.float32, name="widen_np"))
        for item in ds:
            print(item.numpy())
"""


def _cli(args, cwd, quiet_tf=True):
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore", TF_CPP_MIN_LOG_LEVEL="3")
    if not quiet_tf:   # as a user's shell has it
        env.pop("TF_CPP_MIN_LOG_LEVEL")
    return subprocess.run([sys.executable, "-m", "pyfunc_debug", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                    reason="needs the tensorflow extra")
def test_a_tf_data_py_function_error_replays_with_tf_tensors(tmp_path):
    (tmp_path / "pipeline.py").write_text(textwrap.dedent(TF_PROGRAM))
    r = _cli(["trace", "--tf", "-o", "tf.jsonl", "--capture", "fault", "pipeline.py"], tmp_path)
    assert r.returncode == 1 and "row 3 is bad" in r.stderr
    r = _cli(["replay", "tf.jsonl"], tmp_path, quiet_tf=False)
    assert r.returncode == 1, r.stdout + r.stderr
    # as --tf does, TensorFlow's C++ start-up lines are held back (they would bury ours)
    assert "cpu_feature_guard" not in r.stderr and "I0000" not in r.stderr, r.stderr
    assert "replaying op 'scale_py' (EagerPyFunc) of run 1: __main__:scale" in r.stdout
    assert "input 0: float32[1] min=3 max=3 mean=3 (tensorflow EagerTensor)" in r.stdout
    assert "reproduced: ValueError at pipeline.py:8, as recorded" in r.stdout


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="needs the jax extra")
def test_a_jax_pure_callback_nan_replays_and_a_fix_shows_beside_it(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent(JAX_PROGRAM))
    r = _cli(["trace", "--jax", "-o", "jx.jsonl", "--capture", "fault", "model.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli(["replay", "jx.jsonl"], tmp_path)
    assert "replaying op 'host_log' (pure_callback) of run 1: __main__:host_log" in r.stdout
    assert "input 0: float32[4] min=0 max=3 mean=1.5 (jax" in r.stdout
    assert "still faulty: 2 NaN, was 2, 1 Inf, was 1" in r.stdout and r.returncode == 1
    (tmp_path / "model.py").write_text(textwrap.dedent(JAX_PROGRAM).replace(" - 2.0", " + 1.0"))
    r = _cli(["replay", "jx.jsonl"], tmp_path)
    assert "fixed: 0 NaN, was 2, 0 Inf, was 1" in r.stdout and r.returncode == 0


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                    reason="needs the tensorflow extra")
def test_a_numpy_function_result_of_the_wrong_dtype_is_captured_and_replays(tmp_path):
    """TF fails a graph numpy_function that returned float64 for Tout float32 after the
    function returned: --capture fault keeps that call, replay shows it still faulty (and
    fixed once the function is), and the program fails exactly as it does without us."""
    (tmp_path / "pipeline.py").write_text(textwrap.dedent(WIDEN_PROGRAM))
    env = dict(os.environ, PYTHONWARNINGS="ignore", TF_CPP_MIN_LOG_LEVEL="3")
    plain = subprocess.run([sys.executable, "pipeline.py"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    r = _cli(["trace", "--tf", "-o", "tf.jsonl", "--capture", "fault", "pipeline.py"], tmp_path)
    assert r.returncode == plain.returncode == 1, r.stderr
    error = "tensorflow.python.framework.errors_impl.InvalidArgumentError: "
    assert plain.stderr[plain.stderr.index(error):].rstrip() in r.stderr, r.stderr
    assert "0-th value returned by pyfunc_0 is double, but expects float" in r.stderr
    r = _cli(["replay", "tf.jsonl"], tmp_path)
    assert "replaying op 'widen_np' (PyFunc) of run 1: __main__:widen" in r.stdout, r.stderr
    assert ("recorded fault: " + error + "0-th value returned by pyfunc_0 is double, but "
            "expects float") in r.stdout
    assert ("still faulty: the result fails the op's output check (0-th value returned by "
            "widen_np is double, but expects float)") in r.stdout and r.returncode == 1
    (tmp_path / "pipeline.py").write_text(
        textwrap.dedent(WIDEN_PROGRAM).replace("np.float64", "np.float32"))
    r = _cli(["replay", "tf.jsonl"], tmp_path)
    assert "fixed: returned 1 output, was " + error in r.stdout and r.returncode == 0
