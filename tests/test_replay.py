"""pyfunc-debug replay (SPEC §11): a recorded faulty call, re-run from its captured inputs
in another process than the recorded program."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HELPERS = """
    import numpy as np

    def shift(x):
        return np.log(x - np.float32(10)).astype(np.float32)
"""

PROGRAM = """
    import numpy as np
    import pyfunc_debug as tf
    from helpers import shift

    def lookup(x):
        table = {0: "a"}
        return np.float32(len(table[int(x[-1])]))

    def main():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        a = tf.numpy_function(shift, [x], tf.float32, name="shift")
        b = tf.numpy_function(lookup, [x], tf.float32, name="lookup")
        with tf.Session() as s:
            s.run(a, {x: np.arange(8, dtype=np.float32)})
            s.run(b, {x: np.arange(3, dtype=np.float32)})

    print("TOP LEVEL RAN")
    if __name__ == "__main__":
        print("MAIN BLOCK RAN")
        main()
"""


def _cli(args, cwd, **kw):
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "pyfunc_debug", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, **kw)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    d = tmp_path_factory.mktemp("replay")
    (d / "helpers.py").write_text(textwrap.dedent(HELPERS))
    (d / "prog.py").write_text(textwrap.dedent(PROGRAM))
    r = _cli(["trace", "-o", "t.jsonl", "--capture", "fault", "prog.py"], d)
    assert r.returncode == 1 and "KeyError: 2" in r.stderr, r.stderr
    # the trace's last words say what was captured and how to replay it
    assert ("captured the inputs of 2 faulty calls; re-run the first: pyfunc-debug replay "
            "t.jsonl (all: pyfunc-debug replay t.jsonl --list)") in r.stderr
    return d


def test_a_fault_trace_of_a_clean_program_says_there_is_nothing_to_replay(tmp_path):
    (tmp_path / "ok.py").write_text("import numpy as np, pyfunc_debug as tf\n"
                                    "y = tf.numpy_function(np.sinh, [np.float32(1)], tf.float32)\n")
    r = _cli(["trace", "-o", "ok.jsonl", "--capture", "fault", "ok.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "no faulty call" in r.stderr and "nothing to replay" in r.stderr


def test_replaying_a_recorded_error_reraises_it_at_the_same_line(recorded):
    r = _cli(["replay", "t.jsonl", "--op", "lookup"], recorded)
    assert r.returncode == 1, r.stdout + r.stderr
    line = 1 + PROGRAM.splitlines().index('        return np.float32(len(table[int(x[-1])]))')
    assert f'File "{recorded / "prog.py"}", line {line}, in lookup' in r.stdout  # shown
    assert f"reproduced: KeyError at prog.py:{line}, as recorded" in r.stdout
    assert "input 0: float32[3] min=0 max=2" in r.stdout
    # a script recorded as __main__: only its definitions are loaded, and replay says so
    assert "TOP LEVEL RAN" not in r.stdout and "MAIN BLOCK RAN" not in r.stdout
    assert "its other top-level code did not run" in r.stderr
    assert "Traceback" not in r.stderr


def test_default_is_the_first_faulty_call_and_list_names_them(recorded):
    r = _cli(["replay", "t.jsonl", "--list"], recorded)
    assert r.returncode == 0
    assert [ln.split()[4] for ln in r.stdout.splitlines()] == ["'shift'", "'lookup'"]
    assert "helpers:shift" in r.stdout and "KeyError: 2" in r.stdout
    r = _cli(["replay", "t.jsonl"], recorded)
    assert "replaying op 'shift' (PyFunc) of run 1: helpers:shift" in r.stdout
    assert "still faulty: 8 NaN, was 8" in r.stdout and r.returncode == 1


def fixed_copy(recorded, to):
    """The recording beside a fixed helpers.py (the trace's paths rewritten to ``to``)."""
    to.mkdir()
    for name in ("prog.py", "t.jsonl"):
        (to / name).write_bytes((recorded / name).read_bytes())
    os.symlink(recorded / "t.jsonl.values", to / "t.jsonl.values")
    (to / "t.jsonl.faults.jsonl").write_text(
        (recorded / "t.jsonl.faults.jsonl").read_text().replace(str(recorded), str(to)))
    (to / "helpers.py").write_text(textwrap.dedent(HELPERS).replace(
        "np.log(x - np.float32(10))", "np.log(x + np.float32(1))"))
    return to


def test_replay_after_the_fix_shows_new_beside_recorded(recorded, tmp_path):
    fixed = fixed_copy(recorded, tmp_path / "fixed")
    r = _cli(["replay", "t.jsonl", "--op", "shift"], fixed)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "fixed: 0 NaN, was 8" in r.stdout
    assert "* nan     8" in r.stdout   # the side-by-side rows mark what differs
    assert "the source of helpers:shift changed since the recording" in r.stderr


def test_what_cannot_be_replayed_says_so_in_one_line(recorded, tmp_path):
    r = _cli(["trace", "-o", "s.jsonl", "prog.py"], recorded)
    r = _cli(["replay", "s.jsonl"], recorded)
    assert r.returncode == 2 and "record with --capture fault" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = _cli(["replay", "t.jsonl", "--op", "nope"], recorded)
    assert r.returncode == 2 and "op 'nope' has no captured call" in r.stderr
    assert "captured: lookup, shift" in r.stderr
    r = _cli(["replay", "t.jsonl", "--run", "7"], recorded)
    assert r.returncode == 2 and "runs with one: 1, 2" in r.stderr
    gone = tmp_path / "gone"
    gone.mkdir()
    for name in ("prog.py", "t.jsonl", "t.jsonl.faults.jsonl"):
        (gone / name).write_bytes((recorded / name).read_bytes())
    os.symlink(recorded / "t.jsonl.values", gone / "t.jsonl.values")
    (gone / "helpers.py").write_text("import numpy as np\n")   # shift renamed away
    r = _cli(["replay", "t.jsonl", "--op", "shift"], gone)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "op 'shift': function helpers:shift not found" in r.stderr
    os.unlink(gone / "t.jsonl.values")
    r = _cli(["replay", "t.jsonl", "--op", "lookup"], gone)
    assert r.returncode == 2 and "record again with --capture fault" in r.stderr


def test_run_records_faulty_calls_for_replay_too(recorded, tmp_path):
    r = _cli(["run", "--console", "-o", str(tmp_path / "r.jsonl"), "--capture", "fault",
              "prog.py"], recorded, input="c\n" * 10)
    assert r.returncode == 1, r.stdout + r.stderr
    r = _cli(["replay", str(tmp_path / "r.jsonl"), "--list"], recorded)
    assert [ln.split()[4] for ln in r.stdout.splitlines()] == ["'shift'", "'lookup'"]
    r = _cli(["run", "--capture", "fault", "prog.py"], recorded)
    assert r.returncode == 2 and "--capture fault needs -o OUT.jsonl" in r.stderr


def test_a_wrong_dtype_call_replays_in_process_as_still_faulty(tmp_path, capsys):
    import numpy as np

    import pyfunc_debug as tf
    from pyfunc_debug.replay import replay
    from test_fault_capture import _graph, wrong_dtype
    g, x, done, v = _graph(wrong_dtype, "wrong_dtype", np.arange(3, dtype=np.float32))
    with tf.trace(tmp_path / "d.jsonl", capture="fault"), tf.compat.v1.Session(graph=g) as s:
        with pytest.raises(tf.errors.OpError):
            s.run(done, {x: v})
    assert replay(tmp_path / "d.jsonl") == 1
    out = capsys.readouterr().out
    assert re.search(r"replaying op 'wrong_dtype' \(PyFunc\) of run \d+: "
                     r"test_fault_capture:wrong_dtype", out)   # run ids count per process
    assert "still faulty: the result fails the op's output check (0-th value returned by " \
           "wrong_dtype is float64, but expects float32)" in out


def test_the_comparison_fits_the_width_it_is_given(recorded):
    """The view's ``r`` shows replay's table in its event log: replay fits the width in
    ``COLUMNS`` (as a terminal's), a cut cell ending in "…", never a number cut silently."""
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore", COLUMNS="52")
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "replay", "t.jsonl", "--op",
                        "shift"], cwd=recorded, env=env, capture_output=True, text=True,
                       timeout=120)
    table = r.stdout[r.stdout.index("output:"):].splitlines()[1:9]
    assert [ln.split()[0] for ln in table[1:]] == ["shape", "dtype", "min", "max", "mean",
                                                   "nan", "inf"]
    assert all(len(ln) <= 52 for ln in table), table
    mean = table[5].split()
    assert len(mean) == 3 and all(not v.endswith("…") for v in mean[1:]), mean
