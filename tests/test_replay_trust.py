"""Replay tells the truth about what it replays (issue 6 of the team's list; found by trying
it as a user): a quit in pdb is a quit, side files of another recording are refused, a
call that cannot be made again says why in one line, a scalar string arrives as the
recorded call got it, a write into an input is checked again."""
from __future__ import annotations

import os
import shutil
import textwrap

import pytest
from test_replay import _cli, recorded  # noqa: F401 - the fixture: a fault trace of prog.py

OURS = "pyfunc_debug" + os.sep


def test_quitting_pdb_says_so_and_checks_nothing(recorded):  # noqa: F811
    r = _cli(["replay", "t.jsonl", "--op", "lookup", "--pdb"], recorded, input="q\n")
    assert "replay: quit in pdb" in r.stdout, r.stdout + r.stderr
    assert "output check" not in r.stdout and "still faulty" not in r.stdout   # was made up
    assert r.returncode == 1 and "Traceback" not in r.stderr


def test_a_later_recording_without_fault_capture_is_not_replayed_from_stale_files(
        recorded, tmp_path):  # noqa: F811
    d = tmp_path / "again"
    shutil.copytree(recorded, d, symlinks=True)
    assert _cli(["trace", "-o", "t.jsonl", "prog.py"], d).returncode == 1   # summary, same path
    r = _cli(["replay", "t.jsonl"], d)
    assert r.returncode == 2
    assert "holds no captured inputs (recorded with capture='summary') (the faults file " \
           "beside it is from an earlier recording)" in r.stderr


def test_a_trace_moved_without_its_faults_file_says_it_may_be_missing(recorded, tmp_path):  # noqa: F811
    d = tmp_path / "moved"
    d.mkdir()
    shutil.copy(recorded / "t.jsonl", d / "t.jsonl")
    r = _cli(["replay", "t.jsonl"], d)
    assert r.returncode == 2, r.stdout
    assert "no wrapped call was faulty, so none was captured (fault capture keeps only calls " \
           "that raised or made a diagnostic); if it had some, t.jsonl.faults.jsonl was not " \
           "moved or copied with it" in r.stderr
    r = _cli(["replay", "t.jsonl", "--list"], d)
    assert r.returncode == 0 and "(if it had some, t.jsonl.faults.jsonl was not moved" in r.stdout


BOOM = """
    import numpy as np
    import pyfunc_debug as tf
    def boom(x):
        raise ValueError("boom")
    x = tf.compat.v1.placeholder(tf.float32, name="x")
    y = tf.numpy_function(boom, [x], tf.float32, name="boom")
    with tf.Session() as s:
        s.run(y, {x: np.float32(1)})
"""


def _record_boom(folder):
    """``folder`` holding prog.py, whose one op raises, and its fault trace t.jsonl."""
    folder.mkdir()
    (folder / "prog.py").write_text(textwrap.dedent(BOOM))
    assert _cli(["trace", "-o", "t.jsonl", "--capture", "fault", "prog.py"],
                folder).returncode == 1
    return folder


def test_the_faults_file_of_another_recording_is_refused(recorded, tmp_path):  # noqa: F811
    other = _record_boom(tmp_path / "other")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(recorded / "t.jsonl", mixed / "t.jsonl")
    shutil.copy(other / "t.jsonl.faults.jsonl", mixed / "t.jsonl.faults.jsonl")
    shutil.copytree(other / "t.jsonl.values", mixed / "t.jsonl.values")
    r = _cli(["replay", "t.jsonl"], mixed)
    assert r.returncode == 2, r.stdout
    assert "t.jsonl.faults.jsonl does not belong to t.jsonl: its call of op 'boom'" in r.stderr


PROGRAM = """
    import numpy as np
    import pyfunc_debug as tf

    class Tok:
        def __init__(self, vocab):
            self.vocab = vocab

        def encode(self, s):
            return np.array([self.vocab[w] for w in s.decode().split()], dtype=np.int32)

    def strlen(s):
        return np.int32(len(s) // (len(s) - 3))

    def inplace(x):
        x += 1
        return x

    s = tf.compat.v1.placeholder(tf.string, [], name="s")
    x = tf.compat.v1.placeholder(tf.float32, [3], name="x")
    ops = [tf.numpy_function(Tok({"a": 1}).encode, [s], tf.int32, name="encode"),
           tf.numpy_function(strlen, [s], tf.int32, name="strlen"),
           tf.numpy_function(inplace, [x], tf.float32, name="inplace")]
    with tf.Session() as sess:
        for op in ops:
            try:
                sess.run(op, {s: b"a c", x: np.zeros(3, np.float32)})
            except tf.errors.OpError:
                pass
"""


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    d = tmp_path_factory.mktemp("calls")
    (d / "calls.py").write_text(textwrap.dedent(PROGRAM))
    r = _cli(["trace", "-o", "c.jsonl", "--capture", "fault", "calls.py"], d)
    assert r.returncode == 0, r.stderr
    return d


def test_a_call_replay_cannot_make_again_is_refused_in_one_line(calls):
    r = _cli(["replay", "c.jsonl", "--op", "encode"], calls)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "op 'encode': the recorded inputs cannot be passed to __main__:Tok.encode now: " \
           "TypeError" in r.stderr and "a method or a partial" in r.stderr
    assert OURS not in r.stdout + r.stderr and "call.py" not in r.stdout + r.stderr


def test_a_scalar_string_arrives_as_bytes_as_in_the_recorded_call(calls):
    r = _cli(["replay", "c.jsonl", "--op", "strlen"], calls)
    assert "reproduced: ZeroDivisionError" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 1


def test_a_write_into_an_input_is_checked_again(calls, tmp_path):
    r = _cli(["replay", "c.jsonl", "--op", "inplace"], calls)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "still faulty: it wrote into its input 0 again" in r.stdout
    fixed = tmp_path / "fixed"
    shutil.copytree(calls, fixed, symlinks=True)
    script = fixed / "calls.py"
    fixed_source = script.read_text().replace("x += 1\n    return x", "return x + 1")
    assert fixed_source != script.read_text()
    script.write_text(fixed_source)
    for name in ("c.jsonl", "c.jsonl.faults.jsonl"):
        path = fixed / name
        path.write_text(path.read_text().replace(str(calls), str(fixed)))
    r = _cli(["replay", "c.jsonl", "--op", "inplace"], fixed)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "fixed: it no longer writes into its inputs" in r.stdout


def test_a_nan_fault_whose_result_the_trace_lacks_gives_no_made_up_count():
    import numpy as np

    from pyfunc_debug.replay.call import Outcome
    from pyfunc_debug.replay.compare import verdict
    record = {"fault": "non_finite", "op": "f", "op_type": "PyFunc", "run_id": 1}
    text, faulty = verdict(record, None, Outcome(returned=np.array([np.nan, 1.0])))
    assert (text, faulty) == ("still faulty: 1 NaN (the trace holds no recorded result to "
                              "compare)", True)   # it said "was 0": the recording made NaN


def test_a_moved_project_replays_from_the_script_of_that_name_here(tmp_path):
    """Replay is for "later, elsewhere": the recorded script was looked up only by its
    absolute path, and a copied project could not be replayed."""
    first = _record_boom(tmp_path / "first")
    moved = tmp_path / "moved"
    shutil.copytree(first, moved)
    shutil.rmtree(first)
    r = _cli(["replay", "t.jsonl"], moved)
    assert r.returncode == 1 and "reproduced: ValueError" in r.stdout, r.stdout + r.stderr
    assert f"the recorded script {first / 'prog.py'} is not there; using ./prog.py" in r.stderr
    os.unlink(moved / "prog.py")
    r = _cli(["replay", "t.jsonl"], moved)
    assert r.returncode == 2 and "op 'boom': the recorded script" in r.stderr


def test_a_partial_is_refused_as_such_not_as_renamed():
    """It said "function functools:? not found …: was it renamed or moved? record again",
    which recording again cannot help."""
    from pyfunc_debug.replay.locate import ReplayError, find_function
    with pytest.raises(ReplayError, match="is a functools.partial or a callable object with "
                       "no name, which replay cannot import"):
        find_function("partial", {"module": "functools", "qualname": "?", "op": "partial"})


def test_list_takes_op_and_run_and_numbers_as_call_counts(recorded):  # noqa: F811
    r = _cli(["replay", "t.jsonl", "--list", "--op", "lookup"], recorded)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].split()[:5] == ["1", "run", "2", "op", "'lookup'"]
    r = _cli(["replay", "t.jsonl", "--list", "--op", "lookup", "--run", "1"], recorded)
    assert r.stdout.strip() == "t.jsonl: no captured calls of op 'lookup' in run 1"
