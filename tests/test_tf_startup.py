"""TensorFlow's C++ start-up lines are held back at import (``--tf``, replay), whatever
the CPU; every other line written to stderr meanwhile still reaches it, in order, and
what TensorFlow logs at run time reaches it as it does without pyfunc-debug."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap

import pytest

from pyfunc_debug.tf_startup import chatter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# as TensorFlow 2.21 prints them on an AVX-512 CPU, whatever TF_CPP_MIN_LOG_LEVEL says
PREAMBLE = (b"WARNING: All log messages before absl::InitializeLog() is called are written "
            b"to STDERR")
ONEDNN = (b"I0000 00:00:1795870992.767837    6686 port.cc:153] oneDNN custom operations are "
          b"on. You may see slightly different numerical results")
WARN = b"W1128 13:02:11.123456    6686 cuda_executor.cc:1228] could not open file"
ERROR = b"E0000 00:00:1795870992.806259    6686 cuda_dnn.cc:8310] Unable to register cuDNN"
# below level 1: one message of two lines, in one write as absl writes every message
GUARD = (b"I0000 00:00:1795934811.119705   28082 cpu_feature_guard.cc:227] This TensorFlow "
         b"binary is optimized to use available CPU instructions in performance-critical "
         b"operations.\nTo enable the following instructions: AVX2 AVX512F AVX512_VNNI "
         b"AVX512_BF16 FMA, in other operations, rebuild TensorFlow with the appropriate "
         b"compiler flags.")


def test_lines_below_the_level_are_chatter_and_others_are_not():
    assert chatter(PREAMBLE, 2) and chatter(ONEDNN, 2) and chatter(WARN, 2)
    assert not chatter(ERROR, 2) and chatter(ERROR, 3)
    assert chatter(ONEDNN, 1) and not chatter(WARN, 1)
    assert not any(chatter(line, 0) for line in (PREAMBLE, ONEDNN, WARN, ERROR))
    assert not chatter(b"UserWarning: something of the user's", 3)
    assert not chatter(b"F0000 00:00:1.5 1 x.cc:1] fatal", 3)


NOISY = f"""
    import os, sys
    for message in ({PREAMBLE!r}, {ONEDNN!r}, {GUARD!r}):
        os.write(2, message + b"\\n")
    print("a line of the user's", file=sys.stderr, flush=True)
    for message in ({ERROR!r}, {PREAMBLE!r}, {ONEDNN!r}):
        os.write(2, message + b"\\n")
    os.write(2, b"last")
    print("TF_CPP_MIN_LOG_LEVEL", os.environ.get("TF_CPP_MIN_LOG_LEVEL"), file=sys.stderr)
"""


def _import_noisy(tmp_path, level):
    (tmp_path / "noisy.py").write_text(textwrap.dedent(NOISY))
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    if level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = level
    code = ("from pyfunc_debug.tf_startup import import_quietly; import sys; "
            "import_quietly('noisy'); print('after', file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stderr.decode().splitlines()


@pytest.mark.parametrize("level", [None, "2"])   # unset: held back as at 2, left unset
def test_an_import_at_level_2_keeps_every_line_but_the_chatter(tmp_path, level):
    # a message's second line goes with it; an unended line is kept as it was
    assert _import_noisy(tmp_path, level) == ["a line of the user's", ERROR.decode(),
                                              f"lastTF_CPP_MIN_LOG_LEVEL {level}", "after"]


def test_an_import_at_level_0_keeps_everything(tmp_path):
    lines = _import_noisy(tmp_path, "0")
    assert lines == [PREAMBLE.decode(), ONEDNN.decode(), *GUARD.decode().splitlines(),
                     "a line of the user's", ERROR.decode(), PREAMBLE.decode(),
                     ONEDNN.decode(), "lastTF_CPP_MIN_LOG_LEVEL 0", "after"]


FAILING_CALLBACK = """
    import tensorflow as tf


    def bad(x):
        raise ValueError("boom in the callback")


    @tf.function
    def f(x):
        return tf.numpy_function(bad, [x], tf.float32)


    try:
        f(tf.constant(1.0))
    except tf.errors.InvalidArgumentError:
        print("caught")
"""


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                    reason="needs the tensorflow extra")
def test_run_tf_shows_tensorflows_runtime_warnings_as_python_does(tmp_path):
    """TF prints a failing callback's traceback in a W line at run time: under --tf too,
    with the level unset as a user's shell has it; the start-up lines are held back."""
    (tmp_path / "failing.py").write_text(textwrap.dedent(FAILING_CALLBACK))
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore")
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "run", "--tf", "--console",
                        "failing.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "caught" in r.stdout, r.stdout + r.stderr
    warning = re.search(r"^W\d{4} [^\n]* op_kernel\.cc:\d+\] INVALID_ARGUMENT: ValueError: "
                        r"boom in the callback\nTraceback[^\0]*?failing\.py\", line 6, in bad",
                        r.stderr, re.M)   # TF's W line, and the callback's traceback in it
    assert warning is not None, r.stderr
    for startup in ("All log messages before absl", "oneDNN custom operations",
                    "cpu_feature_guard", "To enable the following instructions"):
        assert startup not in r.stderr, r.stderr


@pytest.mark.parametrize("ui, users, expect", [(True, None, "2"), (False, None, None),
                                                (True, "0", "0")])
def test_under_the_ui_tensorflows_runtime_log_stays_off_the_screen(monkeypatch, ui, users,
                                                                    expect):
    """TF writes its C++ log (a failing callback's traceback) straight to fd 2: under the UI,
    over the screen. There it stays at level 2 unless the user chose one; the console and
    trace log as without us."""
    import contextlib
    import types

    from pyfunc_debug import framework_options
    adapter = types.SimpleNamespace(instrument=contextlib.nullcontext)
    monkeypatch.setattr(framework_options, "import_quietly", lambda name: adapter)
    if users is None:
        monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    else:
        monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", users)
    with framework_options.instrumented({"--tf": True}, ui=ui):
        assert os.environ.get("TF_CPP_MIN_LOG_LEVEL") == expect
