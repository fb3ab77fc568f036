"""stateful vs stateless py_funcs: de-duplication per run, folding across runs (SPEC §2, TF#38–42)."""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as tf


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return np.float32(self.calls) if not args else args[0] + np.float32(1)


@pytest.mark.parametrize("stateful, calls_per_run", [(False, 1), (True, 2)])
def test_same_function_same_input_twice(stateful, calls_per_run):
    f = Counter()
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        a = tf.compat.v1.py_func(f, [p], tf.float32, stateful=stateful)
        b = tf.compat.v1.py_func(f, [p], tf.float32, stateful=stateful)
        total = a + b
    with tf.Session(graph=g) as sess:
        for run in range(1, 4):
            assert sess.run(total, {p: 1.0}) == 4.0
            assert f.calls == run * calls_per_run


@pytest.mark.parametrize("stateful, total_calls, values", [(False, 1, [1, 1, 1]),
                                                           (True, 3, [1, 2, 3])])
def test_no_inputs_across_three_runs(stateful, total_calls, values):
    f = Counter()
    g = tf.Graph()
    with g.as_default():
        y = tf.compat.v1.py_func(f, [], tf.float32, stateful=stateful)
    with tf.Session(graph=g) as sess:
        got = [sess.run(y) for _ in range(3)]
    assert got == values
    assert f.calls == total_calls


def test_stateless_on_constant_is_folded_and_on_placeholder_is_not():
    f_const, f_feed = Counter(), Counter()
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
        p = tf.compat.v1.placeholder(tf.float32)
        y_const = tf.numpy_function(f_const, [c], tf.float32, stateful=False)
        y_feed = tf.numpy_function(f_feed, [p], tf.float32, stateful=False)
    assert y_const.op.type == "PyFuncStateless"
    with tf.Session(graph=g) as sess:
        for _ in range(3):
            sess.run([y_const, y_feed], {p: 1.0})
    assert (f_const.calls, f_feed.calls) == (1, 3)


def test_same_output_fetched_several_times_runs_once():
    f = Counter()
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        y = tf.compat.v1.py_func(f, [p], tf.float32)
    with tf.Session(graph=g) as sess:
        assert sess.run([y, y, y + 1], {p: 1.0}) == [2.0, 2.0, 3.0]
    assert f.calls == 1


def test_unfetched_ops_do_not_run_in_a_session():
    used, unused = Counter(), Counter()
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        y = tf.compat.v1.py_func(used, [p], tf.float32)
        tf.compat.v1.py_func(unused, [p], tf.float32)
    with tf.Session(graph=g) as sess:
        sess.run(y, {p: 0.0})
    assert (used.calls, unused.calls) == (1, 0)


def test_function_runs_unused_stateful_ops_and_prunes_unused_stateless():
    log = []

    def stateful_side_effect(x):
        log.append("stateful")
        return x

    def stateless_unused(x):
        log.append("stateless")
        return x

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def f(x):
        tf.numpy_function(stateful_side_effect, [x], tf.float32)
        tf.numpy_function(stateless_unused, [x], tf.float32, stateful=False)
        tf.py_function(lambda v: log.append("py_function") or v, [x], tf.float32)
        return x * 2
    assert log == []  # tracing alone never runs wrapped functions (TF#5)
    f.get_concrete_function()
    assert log == []
    for _ in range(2):
        assert f(tf.constant(3.0)).numpy() == 6.0
    assert sorted(log) == ["py_function"] * 2 + ["stateful"] * 2


def test_function_dedups_stateless_inner_calls():
    f = Counter()

    @tf.function
    def inner(x):
        return tf.numpy_function(f, [x], tf.float32, stateful=False)

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def outer(x):
        return inner(x) + inner(x)
    assert outer(tf.constant(1.0)).numpy() == 4.0
    assert f.calls == 1
