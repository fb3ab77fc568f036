"""Replaying a call recorded from a script with no ``if __name__ == "__main__":`` guard:
its top level is the program, and must not run again — only what the function needs."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The whole program is top-level code, as in TensorFlow's own examples.
SCRIPT = """
    import numpy as np
    import pyfunc_debug as tf

    OFFSET = np.float32(10)            # a global the function reads: kept
    TABLE = {0: "a"}
    try:
        import json as codec           # an import inside try: kept
    except ImportError:
        codec = None

    def shift(x):
        return np.log(x - OFFSET).astype(np.float32) + len(TABLE) - 1

    print("PROGRAM STARTED")
    open("side_effect.txt", "a").write("ran\\n")
    x = tf.compat.v1.placeholder(tf.float32, name="x")
    a = tf.numpy_function(shift, [x], tf.float32, name="shift")
    with tf.compat.v1.Session() as s:
        for step in range(2):
            s.run(a, {x: np.arange(8, dtype=np.float32)})
"""


def _cli(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "pyfunc_debug", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_guardless_scripts_program_does_not_run_again_on_replay(tmp_path):
    (tmp_path / "prog.py").write_text(textwrap.dedent(SCRIPT))
    r = _cli(["trace", "-o", "t.jsonl", "--capture", "fault", "prog.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "side_effect.txt").read_text() == "ran\n"

    r = _cli(["replay", "t.jsonl"], tmp_path)
    assert "replaying op 'shift'" in r.stdout, r.stdout + r.stderr
    assert "still faulty" in r.stdout          # the globals it reads were defined
    assert "PROGRAM STARTED" not in r.stdout
    assert (tmp_path / "side_effect.txt").read_text() == "ran\n"   # not appended again
    lines = textwrap.dedent(SCRIPT).splitlines()
    note = ("replay: loaded the definitions shift needs from prog.py; its other top-level "
            "code did not run (lines ")
    assert note in r.stderr
    said = r.stderr.split(note)[1].split(")")[0].split(", ")
    for text in ('print("PROGRAM STARTED")', "with tf.compat.v1.Session() as s:"):
        assert str(1 + lines.index(text)) in said
    assert str(1 + lines.index('OFFSET = np.float32(10)            # a global the function '
                               'reads: kept')) not in said
    assert "Traceback" not in r.stderr
