"""``pyfunc-debug run --tf`` / ``trace --tf`` in a real pseudo-terminal, on real TensorFlow
(SPEC §10): a breakpoint in a parallel ``Dataset.map`` pauses, ``s`` opens pdb at the
user's first line with the real arguments, ``c`` goes on, exit 0; ``q`` in pdb aborts
with one line. Also the README's example and a trace with one track per TF thread."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

pexpect = pytest.importorskip("pexpect")
if importlib.util.find_spec("tensorflow") is None:   # found, not imported: the children do
    pytest.skip("needs the tensorflow extra", allow_module_level=True)
# pexpect forks and at once execs: safe even with JAX's threads in this process
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")

from test_tui_e2e import ROOT, Screen  # noqa: E402

SCRIPT = """
    import numpy as np
    import tensorflow as tf

    def scale(x, factor):
        y = x * factor
        return y.astype(np.float32)

    def load(i):
        return tf.numpy_function(scale, [tf.cast(i, tf.float32), np.float32(2.0)],
                                 tf.float32, name="scale_np")

    ds = tf.data.Dataset.range(2).map(load, num_parallel_calls=4)
    print("total", sum(float(v) for v in ds))
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "tf_map.py"
    path.write_text(textwrap.dedent(SCRIPT))
    return path


def _env(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm-256color", PDBPP_COLORS="0",
               PYTHONUNBUFFERED="1", COLUMNS="120", LINES="40", TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("NO_COLOR", None)
    return env


def _spawn(args, tmp_path):
    child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", *args], env=_env(tmp_path),
                          cwd=str(tmp_path), dimensions=(40, 120), encoding="utf-8",
                          timeout=90)
    return child, Screen(child)


def _exit_status(child) -> int:
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    return child.exitstatus


def test_break_step_into_pdb_continue_exit_0(script, tmp_path):
    child, screen = _spawn(["run", "--tf", "--console", "--break", "scale_np", str(script)],
                           tmp_path)
    screen.wait_for(r"\(pfd\) ", timeout=90)
    assert "paused before op 'scale_np' (PyFunc)" in screen.fresh
    screen.send("s\r")
    text = screen.wait_for(r"\(Pdb\+*\) ")
    assert "tf_map.py(6)scale()" in text and "y = x * factor" in text
    screen.send("p x, factor\r")
    assert "(np.float32(" in screen.wait_for(r"np\.float32\(2\.0\)\)")
    screen.send("c\r")
    screen.wait_for(r"\(pfd\) ")              # the other element's call
    screen.send("c\r")
    assert "total 2.0" in screen.wait_for(r"total 2\.0")
    assert _exit_status(child) == 0


def test_q_in_pdb_aborts_with_one_line(script, tmp_path):
    child, screen = _spawn(["run", "--tf", "--console", "--break", "scale_np", str(script)],
                           tmp_path)
    screen.wait_for(r"\(pfd\) ", timeout=90)
    screen.send("s\r")
    screen.wait_for(r"\(Pdb\+*\) ")
    screen.send("q\r")
    text = screen.wait_for(r"run aborted at op 'scale_np'")
    assert _exit_status(child) == 1
    text += screen.fresh
    assert "Traceback" not in text and "(pfd)" not in text


def test_readme_example_and_trace_with_a_track_per_tf_thread(tmp_path):
    example = os.path.join(ROOT, "examples", "tensorflow", "dataset_map.py")
    out = tmp_path / "map.json"
    result = subprocess.run([sys.executable, "-m", "pyfunc_debug", "trace", "--tf", "-o",
                             str(out), example], capture_output=True, text=True,
                            env=_env(tmp_path), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "6 rows, 13 words, 1 row(s) with NaN" in result.stdout
    events = json.loads(out.read_text())["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X" and e.get("cat") == "op"]
    assert {e["name"] for e in slices} == {"features/standardize", "count_words"}
    assert len(slices) == 12
    with open(example) as f:
        line = next(i for i, text in enumerate(f, 1) if "name=\"standardize\"" in text)
    assert {e["args"]["source"] for e in slices if e["name"] == "features/standardize"} == {
        f"{example}:{line}"}
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert {e["tid"] for e in slices} <= set(names)


def test_the_ui_pauses_a_tf_callback_steps_into_pdb_and_quits(script, tmp_path):
    child, screen = _spawn(["run", "--tf", "--break", "scale_np", str(script)], tmp_path)
    assert "before scale_np" in screen.wait_for(r"PAUSED.*before scale_np", timeout=90)
    screen.send("s")
    assert "tf_map.py(6)scale()" in screen.wait_for(r"\(Pdb\+*\) ")
    screen.send("p factor\r")
    screen.wait_for(r"np\.float32\(2\.0\)")
    screen.send("c\r")
    screen.wait_for(r"PAUSED.*before scale_np")      # back in the UI, at the other call
    screen.send("q")
    text = screen.wait_for(r"exit status 1")
    assert "run aborted at op 'scale_np'" in text and "Traceback" not in text
    assert _exit_status(child) == 1


def test_ctrl_c_at_a_pause_on_a_tf_thread_quits_with_130(script, tmp_path):
    child, screen = _spawn(["run", "--tf", "--console", "--break", "scale_np", str(script)],
                           tmp_path)
    screen.wait_for(r"\(pfd\) ", timeout=90)
    screen.send("\x03")
    assert "interrupted (Ctrl+C)" in screen.wait_for(r"interrupted \(Ctrl\+C\)")
    assert _exit_status(child) == 130
    assert "Traceback" not in screen.fresh


NAN_SCRIPT = """
    import numpy as np
    import tensorflow as tf

    def augment(i):
        x = np.full(64, float(i), np.float32)
        if int(i) == 137:
            x = x * np.float32(np.nan)
        return x

    ds = tf.data.Dataset.range(300).map(
        lambda i: tf.py_function(augment, [i], tf.float32, name="augment"),
        num_parallel_calls=tf.data.AUTOTUNE)
    print("loss =", sum(float(tf.reduce_sum(x)) for x in ds))
"""


def test_the_ui_without_flags_shows_the_call_that_made_nan(tmp_path):
    """Issue 23: one sample in 300 makes NaN in a parallel map; with no flags the UI
    shows the non_finite warning naming that sample, and says it again on exit."""
    path = tmp_path / "nan_map.py"
    path.write_text(textwrap.dedent(NAN_SCRIPT))
    child, screen = _spawn(["run", "--tf", str(path)], tmp_path)
    text = screen.wait_for(r"FINISHED.*⚠ 1 warning", timeout=180)
    text += screen.wait_for(r"in 0 = 137 \(int64\)")
    assert "made 64 NaN" in text
    screen.send("q")
    text = screen.wait_for(r"exit status 0")
    text += screen.wait_for(r"in 0 = 137 \(int64\)")
    assert "warning: op 'augment' (EagerPyFunc) made 64 NaN in output 0 from finite inputs" in text
    assert _exit_status(child) == 0
