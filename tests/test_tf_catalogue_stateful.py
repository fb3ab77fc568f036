"""TF catalogue, section G: stateful vs stateless, CSE, constant folding, pruning,
control dependencies (TF#38-TF#43).

SPEC §2 differs from TF#40 on purpose: identical *stateless* calls (same
function object, same inputs) are de-duplicated per run; these tests follow SPEC.

Not ported, and why:
- TF#41 "inner tf.function called twice shares one token": nested
  ``tf.function`` token sharing is a TF tracing artefact; the observable
  behaviour (stateless dedup within one function body) is tested directly.
"""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as tf


def _session(g):
    return tf.compat.v1.Session(graph=g)


def _counter():
    calls = []

    def func(*args):
        calls.append(args)
        return np.float32(len(calls) - 1)

    return calls, func


STATELESS_BUILDERS = [
    pytest.param(lambda f, i: tf.compat.v1.py_func(f, i, tf.float32, stateful=False),
                 id="py_func"),
    pytest.param(lambda f, i: tf.numpy_function(f, i, tf.float32, stateful=False),
                 id="numpy_function"),
]
STATEFUL_BUILDERS = [
    pytest.param(lambda f, i: tf.compat.v1.py_func(f, i, tf.float32), id="py_func"),
    pytest.param(lambda f, i: tf.numpy_function(f, i, tf.float32), id="numpy_function"),
    pytest.param(lambda f, i: tf.py_function(f, i, tf.float32), id="py_function"),
]


# ------------------------------------------------------------------- TF#38

@pytest.mark.parametrize("build", STATEFUL_BUILDERS)
def test_tf38_stateful_without_inputs_runs_every_time(build):
    calls, f = _counter()
    g = tf.Graph()
    with g.as_default():
        y = build(f, [])
    with _session(g) as sess:
        assert [float(sess.run(y)) for _ in range(3)] == [0.0, 1.0, 2.0]
    assert len(calls) == 3


@pytest.mark.parametrize("build", STATELESS_BUILDERS)
def test_tf38_stateless_without_inputs_is_folded(build):
    calls, f = _counter()
    g = tf.Graph()
    with g.as_default():
        y = build(f, [])
        assert y.op.type == "PyFuncStateless"
    with _session(g) as sess:
        assert [float(sess.run(y)) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert len(calls) == 1


@pytest.mark.parametrize("build", STATELESS_BUILDERS)
def test_tf38_stateless_with_constant_input_is_folded(build):
    calls, f = _counter()
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(5.0)
        y = build(f, [c])
        z = y + 1.0
    with _session(g) as sess:
        assert [float(sess.run(z)) for _ in range(3)] == [1.0, 1.0, 1.0]
    assert len(calls) == 1


@pytest.mark.parametrize("build", STATELESS_BUILDERS)
def test_tf38_stateless_with_placeholder_input_is_not_cached_across_runs(build):
    calls, f = _counter()
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = build(f, [x])
    with _session(g) as sess:
        # same feed every time: still no caching between runs
        assert [float(sess.run(y, feed_dict={x: 1.0})) for _ in range(3)] == [0.0, 1.0, 2.0]
    assert len(calls) == 3


# ------------------------------------------------------------------- TF#39

@pytest.mark.parametrize("build", STATEFUL_BUILDERS + STATELESS_BUILDERS)
def test_tf39_same_output_fetched_several_times_runs_once_per_run(build):
    calls, f = _counter()
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = build(f, [x])
        y1 = y + 1.0
    with _session(g) as sess:
        a, b, c = sess.run([y, y, y1], feed_dict={x: 1.0})
        assert (float(a), float(b), float(c)) == (0.0, 0.0, 1.0)
        sess.run({"one": y, "two": [y, (y1,)]}, feed_dict={x: 2.0})
    assert len(calls) == 2


# ------------------------------------------------- TF#40 (SPEC: CSE differs)

@pytest.mark.parametrize("build", STATELESS_BUILDERS)
def test_spec_tf40_identical_stateless_calls_are_deduplicated_per_run(build):
    calls, f = _counter()
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        a = build(f, [x])
        b = build(f, [x])
        assert a.op is not b.op  # two ops are built ...
    with _session(g) as sess:
        for i in range(3):
            va, vb = sess.run([a, b], feed_dict={x: float(i)})
            assert va == vb  # ... but run once per run
    assert len(calls) == 3


@pytest.mark.parametrize("build", STATEFUL_BUILDERS)
def test_tf40_identical_stateful_calls_both_run(build):
    calls, f = _counter()
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        a = build(f, [x])
        b = build(f, [x])
    with _session(g) as sess:
        for i in range(3):
            sess.run([a, b], feed_dict={x: float(i)})
    assert len(calls) == 6


@pytest.mark.parametrize("build", STATELESS_BUILDERS)
def test_tf40_stateless_calls_with_different_function_or_inputs_both_run(build):
    calls1, f1 = _counter()
    calls2, f2 = _counter()
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        x2 = tf.compat.v1.placeholder(tf.float32)
        a = build(f1, [x])
        b = build(f2, [x])   # different function, same input
        c = build(f1, [x2])  # same function, different input
    with _session(g) as sess:
        sess.run([a, b, c], feed_dict={x: 1.0, x2: 1.0})
    assert len(calls1) == 2
    assert len(calls2) == 1


# ------------------------------------------------------------------- TF#41

def _sig():
    return [tf.TensorSpec(None, tf.float32)]


def test_tf41_tf_function_dedups_identical_stateless_calls():
    calls, f = _counter()

    @tf.function(input_signature=_sig())
    def fx(inp):
        a = tf.numpy_function(f, [inp], tf.float32, stateful=False)
        b = tf.numpy_function(f, [inp], tf.float32, stateful=False)
        return a + b

    for v in (1.0, 2.0):
        fx(tf.constant(v))
    assert len(calls) == 2  # one per outer call


def test_tf41_tf_function_runs_identical_stateful_calls_twice():
    calls, f = _counter()

    @tf.function(input_signature=_sig())
    def fx(inp):
        a = tf.numpy_function(f, [inp], tf.float32)
        b = tf.numpy_function(f, [inp], tf.float32)
        return a + b

    for v in (1.0, 2.0):
        fx(tf.constant(v))
    assert len(calls) == 4


def test_tf41_tf_function_distinct_stateless_functions_both_run():
    calls1, f1 = _counter()
    calls2, f2 = _counter()

    @tf.function(input_signature=_sig())
    def fx(inp):
        a = tf.numpy_function(f1, [inp], tf.float32, stateful=False)
        b = tf.numpy_function(f2, [inp], tf.float32, stateful=False)
        return a + b

    fx(tf.constant(1.0))
    assert (len(calls1), len(calls2)) == (1, 1)


@pytest.mark.parametrize("stateful", [True, False])
def test_tf41_tf_function_same_output_used_twice_runs_once(stateful):
    calls, f = _counter()

    @tf.function(input_signature=_sig())
    def fx(inp):
        y = tf.numpy_function(f, [inp], tf.float32, stateful=stateful)
        return y + y

    fx(tf.constant(1.0))
    assert len(calls) == 1


def test_tf41_tf_function_stateless_with_constant_input_is_folded():
    calls, f = _counter()

    @tf.function(input_signature=_sig())
    def fx(inp):
        y = tf.numpy_function(f, [tf.constant(2.0)], tf.float32, stateful=False)
        return inp + y

    outs = [float(fx(tf.constant(1.0)).numpy()) for _ in range(3)]
    assert outs == [1.0, 1.0, 1.0]
    assert len(calls) == 1


# ------------------------------------------------------------------- TF#42

@pytest.mark.parametrize("build", STATEFUL_BUILDERS + STATELESS_BUILDERS)
def test_tf42_session_does_not_run_unfetched_py_funcs(build):
    calls, f = _counter()
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        unused = build(f, [x])  # noqa: F841
        z = x * 2.0
    with _session(g) as sess:
        assert sess.run(z, feed_dict={x: 1.0}) == pytest.approx(2.0)
    assert calls == []


@pytest.mark.parametrize("wrapper", [
    pytest.param(lambda f, i: tf.numpy_function(f, i, tf.float32), id="numpy_function"),
    pytest.param(lambda f, i: tf.py_function(f, i, tf.float32), id="py_function"),
])
def test_tf42_tf_function_runs_unused_stateful_ops_every_call(wrapper):
    calls, f = _counter()

    @tf.function(input_signature=_sig())
    def fx(inp):
        wrapper(f, [inp])  # output unused
        return inp * 2.0

    for _ in range(3):
        assert fx(tf.constant(1.0)).numpy() == pytest.approx(2.0)
    assert len(calls) == 3


def test_tf42_tf_function_prunes_unused_stateless_ops():
    calls, f = _counter()

    @tf.function(input_signature=_sig())
    def fx(inp):
        tf.numpy_function(f, [inp], tf.float32, stateful=False)  # output unused
        return inp * 2.0

    for _ in range(3):
        fx(tf.constant(1.0))
    assert calls == []


# ------------------------------------------------------------------- TF#43

@pytest.mark.parametrize("stateful", [True, False])
def test_tf43_control_dependencies_order_execution(stateful):
    order = []

    def make(tag):
        def f(v):
            order.append(tag)
            return v
        return f

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        a = tf.compat.v1.py_func(make("a"), [x], tf.float32, stateful=stateful)
        with tf.control_dependencies([a]):
            b = tf.compat.v1.py_func(make("b"), [x], tf.float32, stateful=stateful)
    with _session(g) as sess:
        sess.run(b, feed_dict={x: 1.0})  # a is not fetched but must run first
    assert order == ["a", "b"]


def test_tf43_control_dependency_on_an_operation_with_empty_tout():
    order = []
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        op = tf.compat.v1.py_func(lambda v: order.append("side"), [x], [])
        with tf.control_dependencies([op]):
            y = tf.py_function(lambda v: order.append("main") or v, [x], tf.float32)
    with _session(g) as sess:
        sess.run(y, feed_dict={x: 1.0})
    assert order == ["side", "main"]
