"""Cheap conditions (issue 28) still pause where the full check does.

A ``when=`` expression over one side is pre-filtered inside the kernel wrapper;
these tests compare its pauses with the same condition given as a callable
(checked in full on every op), over arrays, NaN inputs and scalars of every
numeric dtype — and check that a condition that never holds makes no pause object.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug.debug.conditions import compile_condition

DTYPES = [tf.float16, tf.float32, tf.float64, tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8,
          tf.uint16, tf.uint32, tf.uint64, tf.bool, tf.complex64, tf.complex128]

WHENS = ["inputs[0] > 2", "inputs[0] >= 4", "inputs[0] == 2", "inputs[0] < 3",
         "np.any(inputs[0] > 2)", "np.isnan(inputs[0])", "np.any(np.isnan(inputs[0]))",
         "inputs[0].max() > 2", "np.min(inputs[0]) <= 2", "inputs[0].min() * 2 > 5",
         "2 < inputs[0] < 8", "inputs[0] > 1e30", "inputs[1] > 0",
         "outputs[0] > 4", "np.any(outputs[0] > 4)", "outputs[0].sum() > 4",
         "inputs[0] > 2 and outputs[0] > 4", "inputs[0] >= 1 and np.any(outputs[0] >= 8)",
         "inputs[0] > 2 or outputs[0] > 4", "np.any(outputs[0] > inputs[0] * 3)",
         "np.any(inputs[0] > 2) or np.all(outputs[0] > 8)", "not (inputs[0] < 4 or outputs[0] > 30)",
         "inputs[0].max() > 3 or outputs[0].min() == 4"]


def _chain(dtype, n=5):
    np_type = dtype.as_numpy_dtype

    def step(v):   # doubles, in the value's own dtype (bool stays bool)
        return v if np_type is np.bool_ else (v * np_type(2)).astype(np_type)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype)
        y = x
        for _ in range(n):
            y = tf.numpy_function(step, [y], dtype)
    return g, x, y


def _pauses(g, x, y, feed, when):
    seen = []
    dbg = tf.debug.Debugger(on_pause=lambda p: seen.append((p.op_name, p.when)) or "continue")
    dbg.break_on(when=when)
    with dbg, tf.compat.v1.Session(graph=g) as sess:
        out = sess.run(y, {x: feed})
    return seen, out


def _full(when):
    """The same condition as a callable: no pre-filter, checked in full on every op."""
    cond = compile_condition(when)
    if cond.reads_outputs:
        return lambda p, c=cond: p.outputs is not None and c.check(p)
    return lambda p, c=cond: c.check(p)


def _agree(dtype, feed, when):
    g, x, y = _chain(dtype)
    with np.errstate(all="ignore"):
        fast, out_fast = _pauses(g, x, y, feed, when)
        full, out_full = _pauses(g, x, y, feed, _full(when))
    assert fast == full, (dtype, feed, when)
    np.testing.assert_array_equal(out_fast, out_full)
    return fast


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_a_condition_over_inputs_pauses_where_the_full_check_does_on_scalars(dtype):
    feed = dtype.as_numpy_dtype(1)
    for when in WHENS:
        _agree(dtype, feed, when)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("feed", [np.array([1.0, 0.5], np.float32), np.array(1.0, np.float32),
                                  np.float32(np.nan), np.array([np.nan, 1.0], np.float32),
                                  np.float32(np.inf), np.float32(-np.inf)],
                         ids=["array", "0-d", "nan", "nan-array", "inf", "-inf"])
def test_a_condition_over_inputs_pauses_where_the_full_check_does_on_arrays_and_nan(feed):
    for when in WHENS:
        _agree(tf.float32, feed, when)


def test_a_condition_over_inputs_pauses_before_the_first_op_it_holds_for():
    g, x, y = _chain(tf.float32)
    seen, _ = _pauses(g, x, y, np.float32(1.0), "inputs[0] > 2")
    assert [w for _, w in seen] == ["before"] * 3   # inputs 4, 8, 16 of ops 3..5
    seen, _ = _pauses(g, x, y, np.float32(np.nan), "np.isnan(inputs[0])")
    assert len(seen) == 5


def _counting(bp):
    calls = []
    check = bp.condition.check
    bp.condition = dataclasses.replace(bp.condition, check=lambda p: calls.append(1) or check(p))
    return calls


@pytest.mark.parametrize("when,feed", [
    ("inputs[0] > 1e30", np.float32(1.0)), ("outputs[0] > 1e30", np.float32(1.0)),
    ("inputs[0] > 1e30", np.float64(1.0)), ("np.any(inputs[0] < -1)", np.float32(1.0)),
    ("np.any(inputs[0] < -1)", np.ones(3, np.float32)),
    ("np.any(outputs[0] > 1e30)", np.ones(3, np.float32)),
    ("inputs[0].max() > 1e30", np.ones(3, np.float32)),
    ("inputs[0].max() > 1e30", np.float32(1.0)), ("np.min(outputs[0]) < -1", np.float64(1.0)),
    ("np.isnan(inputs[0]).any()", np.ones(3, np.float32)),
    ("inputs[0] > 0 and outputs[0] > 1e30", np.float32(1.0)),
    ("inputs[0] > 1e30 or outputs[0] > 1e30", np.float32(1.0)),
    ("np.any(inputs[0] > 1e30) or np.any(outputs[0] > 1e30)", np.ones(3, np.float32)),
    ("inputs[0].max() < -1 or outputs[0] > 1e30", np.float64(1.0)),
    ("has_inf_or_nan", np.float32(1.0)), ("nan_producer", np.float64(1.0))])
def test_a_condition_that_never_holds_is_never_checked_in_full(when, feed):
    g, x, y = _chain(tf.float32)
    dbg = tf.debug.Debugger(on_pause=lambda p: "continue")
    bp = dbg.break_on(when=when)
    calls = _counting(bp)
    with dbg, tf.compat.v1.Session(graph=g) as sess:
        sess.run(y, {x: feed})
    assert calls == [] and bp.hits == 0


def test_a_condition_that_raises_is_still_reported_not_swallowed_by_its_prefilter():
    g, x, y = _chain(tf.float32)
    dbg = tf.debug.Debugger(on_pause=lambda p: "continue")
    bp = dbg.break_on(when="inputs[0] > 1")   # an array's truth is ambiguous: raises
    calls = _counting(bp)
    with dbg, tf.compat.v1.Session(graph=g) as sess:
        sess.run(y, {x: np.ones(3, np.float32)})
    assert len(calls) == 5 and bp.hits == 0


def test_a_condition_over_both_sides_reads_the_inputs_as_given_to_an_op_writing_into_them():
    def bump(v):   # writes into its input, as a py_func may
        v += 10
        return v * 1
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.compat.v1.py_func(bump, [x], tf.float32)
    for when, pauses in [("np.any(inputs[0] > 5) or np.any(outputs[0] > 1e30)", 0),
                         ("np.any(inputs[0] < 5) and np.any(outputs[0] > 5)", 1)]:
        seen, _ = _pauses(g, x, y, np.ones(3, np.float32), when)
        assert len(seen) == pauses, when


def test_a_scalar_condition_that_raises_is_still_reported():
    g, x, y = _chain(tf.float32)
    dbg = tf.debug.Debugger(on_pause=lambda p: "continue")
    bp = dbg.break_on(when="inputs[0].no_such_attribute > 1 or outputs[0] > 1e30")
    calls = _counting(bp)
    with dbg, tf.compat.v1.Session(graph=g) as sess:
        sess.run(y, {x: np.float32(1.0)})
    assert len(calls) == 5 and bp.hits == 0
