"""The UI's default ``on_error`` breakpoint, made cheap (issue 28), still pauses truthfully.

Its Python ops copy only small array inputs before each call (big ones are
sampled) and keep no frame while they run: a big input written into before a
failure is flagged, and post-mortem after a wrong return value opens at the frame
of the function called again (only when that call returns the same value).
"""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug.debug import Debugger
from pyfunc_debug.debug.kept import SMALL, given_inputs, written

from test_debugger_core import Script, scripted_pdb


@pytest.fixture(autouse=True)
def no_user_pdbrc(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))


def _one_op(func, name="f", op=pfd.numpy_function):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        first = pfd.identity(x, name="first")
        y = op(func, [first], pfd.float32, name=name)
    return g, x, y


def _fail_at(func, feed, actions=("continue",), pdb_script="c\n", op=pfd.numpy_function):
    g, x, y = _one_op(func, op=op)
    runner, out = scripted_pdb(pdb_script)
    front = Script(list(actions))
    dbg = Debugger(on_pause=front, pdb_runner=runner)
    dbg.break_on(on_error=True)
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.OpError):
            sess.run(y, {x: feed})
    return front.pauses, dbg.warnings, out.getvalue()


def test_small_arrays_are_copied_and_big_ones_sampled_not_copied():
    small, big = np.ones(16, np.float32), np.ones(SMALL // 4 + 1, np.float32)
    given, marks = given_inputs((small, big, 3.0))
    assert given[0] is not small and np.array_equal(given[0], small)
    assert given[1] is big and given[2] == 3.0 and list(marks) == [1]
    assert written((small, big, 3.0), marks) == []
    big[::7] = 5
    assert written((small, big, 3.0), marks) == [1]


def test_a_small_input_written_into_before_a_failure_shows_as_given():
    def clip_then_fail(v):
        v[v > 1] = 1
        raise ValueError("after writing into its input")
    pauses, warnings, _ = _fail_at(clip_then_fail, np.array([0.5, 3.0], np.float32))
    (pause,) = pauses
    np.testing.assert_array_equal(pause["inputs"][0], [0.5, 3.0])
    assert not [w for w in warnings if w.kind == "input_modified"]


def test_a_big_input_written_into_before_a_failure_is_flagged():
    def scale_then_fail(v):
        v *= 2
        raise ValueError("after writing into its input")
    pauses, warnings, _ = _fail_at(scale_then_fail, np.ones(100_000, np.float32))
    assert len(pauses) == 1
    (w,) = [w for w in warnings if w.kind == "input_modified"]
    assert "input 0 in place before it failed" in w.message and "'f'" in w.message


def widen(v):
    scaled = v * 2
    return scaled.astype(np.float64)     # the fault: Tout says float32


def test_post_mortem_after_a_wrong_return_opens_at_the_frame_of_a_second_call():
    _, _, text = _fail_at(widen, np.array([1.0, 2.0], np.float32), ["post_mortem"],
                          "p scaled\nc\n")
    assert "calling widen() again on the inputs it was given" in text, text
    assert "array([2., 4.], dtype=float32)" in text


def test_post_mortem_says_when_a_second_call_returns_something_else():
    calls = []

    def drifting(v):
        calls.append(1)
        return (v * len(calls)).astype(np.float64)   # a different value each call
    _, _, text = _fail_at(drifting, np.array([1.0], np.float32), ["post_mortem"], "c\n")
    assert len(calls) == 2
    assert "returned something else" in text and "no frame to show" in text, text


def test_post_mortem_after_a_py_function_returned_something_unusable_opens_at_its_frame():
    def label(v):
        doubled = v * 2
        return "not a number"        # the fault: Tout says float32
    _, _, text = _fail_at(label, np.array([1.0, 2.0], np.float32), ["post_mortem"],
                          "p doubled\nc\n", op=pfd.py_function)
    assert "calling label() again" in text and "what it returned is __return__" in text, text
    assert "[2., 4.]" in text                             # p doubled: a local of label
