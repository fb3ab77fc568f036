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
