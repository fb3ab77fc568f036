"""TF catalogue, section H: gradients (TF#2 gradient half, TF#44-TF#47).

SPEC §2 adds to TF#44: ``gradients`` through a ``py_func``/``numpy_function``
gives ``None`` *and* issues a ``warnings.warn`` naming the blocking op.

Not ported, and why:
- TF#44/TF#45 ``GradientTape`` inside ``tf.function``: SPEC §2 offers
  ``GradientTape`` in eager mode only (``tf.gradients`` inside it is tested).
- TF#45 complex ``x**2`` gradient: complex dtypes are out of scope.
- TF#45 ``script_ops.tape_cache`` being empty: TF internal; we check repeated
  runs with different feeds stay correct.
- TF#47 variable bullets: Variables are out of scope.
- TF#48 XLA: out of scope.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyfunc_debug as tf


def _session(g):
    return tf.compat.v1.Session(graph=g)


def _quiet_gradients(ys, xs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tf.gradients(ys, xs, **kw)


def _log_huber(x, m):
    if tf.abs(x) <= m:
        return x ** 2
    else:
        return m ** 2 * (1 - 2 * tf.math.log(m) + tf.math.log(x ** 2))


# ------------------------------------------------------------- TF#2 seed b

def _log_huber_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        m = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(func=_log_huber, inp=[x, m], Tout=tf.float32)
        dy_dx = tf.gradients(y, x)[0]
    return g, x, m, y, dy_dx


def test_tf2_log_huber_value_and_gradient_both_branches():
    g, x, m, y, dy_dx = _log_huber_graph()
    with _session(g) as sess:
        yv, gv = sess.run([y, dy_dx], feed_dict={x: 1.0, m: 2.0})
        assert (yv, gv) == (pytest.approx(1.0), pytest.approx(2.0))
        yv, gv = sess.run([y, dy_dx], feed_dict={x: 3.0, m: 2.0})
        assert yv == pytest.approx(7.243721, rel=1e-5)
        assert gv == pytest.approx(2.6666667, rel=1e-5)
        # repeated runs with different feeds stay correct (TF#45)
        assert sess.run(dy_dx, feed_dict={x: 1.0, m: 2.0}) == pytest.approx(2.0)


def test_tf2_fetching_only_the_gradient_runs_the_forward_op():
    calls = []

    def f(x, m):
        calls.append(1)
        return _log_huber(x, m)

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        m = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(func=f, inp=[x, m], Tout=tf.float32)
        dy_dx = tf.gradients(y, x)[0]
    with _session(g) as sess:
        assert sess.run(dy_dx, feed_dict={x: 1.0, m: 2.0}) == pytest.approx(2.0)
    assert len(calls) == 1


def test_tf2_gradient_op_is_an_eager_py_func():
    g, *_ = _log_huber_graph()
    types = [op.type for op in g.get_operations()]
    assert types.count("EagerPyFunc") >= 2


# -------------------------------------------------------------------- TF#44

@pytest.mark.parametrize("wrapper", [
    pytest.param(lambda f, i: tf.compat.v1.py_func(f, i, tf.float32, name="blocker"),
                 id="py_func"),
    pytest.param(lambda f, i: tf.compat.v1.py_func(f, i, tf.float32, stateful=False,
                                                   name="blocker"), id="py_func_stateless"),
    pytest.param(lambda f, i: tf.numpy_function(f, i, tf.float32, name="blocker"),
                 id="numpy_function"),
])
def test_tf44_py_func_gradient_is_none_with_a_warning_naming_the_op(wrapper):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = wrapper(lambda a: a * a, [x])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            grads = tf.gradients(y, x)
    assert grads == [None]
    assert any("blocker" in str(w.message) for w in rec), [str(w.message) for w in rec]


def test_tf44_other_paths_still_differentiate():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.numpy_function(lambda a: a * a, [x], tf.float32) + x
        (dx,) = _quiet_gradients(y, x)
    assert dx is not None
    with _session(g) as sess:
        assert sess.run(dx, feed_dict={x: 3.0}) == pytest.approx(1.0)


def test_tf44_gradient_inside_tf_function_is_none():
    seen = []

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        y = tf.numpy_function(lambda a: a * a, [inp], tf.float32)
        seen.append(_quiet_gradients(y, inp))
        return y

    fx(tf.constant(3.0))
    assert seen == [[None]]


def test_tf44_eager_tape_over_numpy_function_is_none():
    x = tf.constant(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.numpy_function(lambda a: a ** 2, [x], tf.float32)
        assert tape.gradient(y, x) is None


def test_tf44_eager_numpy_function_output_is_treated_as_constant():
    x = tf.constant(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.numpy_function(lambda a: a ** 2, [x], tf.float32) * x
        assert tape.gradient(y, x).numpy() == pytest.approx(9.0)


# -------------------------------------------------------------------- TF#45

def test_tf45_py_function_square_gradient_in_session():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(lambda a: a ** 2, [x], tf.float32)
        (dx,) = tf.gradients(y, x)
    with _session(g) as sess:
        for v in (3.0, -1.5, 10.0):
            assert sess.run(dx, feed_dict={x: v}) == pytest.approx(2 * v)


def test_tf45_py_function_square_gradient_eager_tape():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: a ** 2, [x], tf.float32)
    assert tape.gradient(y, x).numpy() == pytest.approx(6.0)


def test_tf45_py_function_gradient_inside_tf_function():
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        y = tf.py_function(lambda a: a ** 2, [inp], tf.float32)
        return tf.gradients(y, inp)[0]

    assert fx(tf.constant(3.0)).numpy() == pytest.approx(6.0)
    assert fx(tf.constant(-2.0)).numpy() == pytest.approx(-4.0)


def test_tf45_two_outputs_gradient():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(3.0)
        y = tf.constant(2.0)
        fa, fb = tf.py_function(lambda a, b: (a * b, a / b), [x, y], [tf.float32, tf.float32])
        dx, dy = tf.gradients(fa + fb, [x, y])
    with _session(g) as sess:
        vx, vy = sess.run([dx, dy])
    assert vx == pytest.approx(2.5)
    assert vy == pytest.approx(2.25)


@pytest.mark.parametrize("mode", ["graph", "eager"])
def test_tf45_two_inputs_gradient(mode):
    f = lambda a, b: a ** 2 + b ** 2  # noqa: E731
    if mode == "graph":
        g = tf.Graph()
        with g.as_default():
            x = tf.compat.v1.placeholder(tf.float32)
            y = tf.compat.v1.placeholder(tf.float32)
            z = tf.py_function(f, [x, y], tf.float32)
            grads = tf.gradients(z, [x, y])
        with _session(g) as sess:
            vals = sess.run(grads, feed_dict={x: 3.0, y: 4.0})
    else:
        x, y = tf.constant(3.0), tf.constant(4.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            tape.watch(y)
            z = tf.py_function(f, [x, y], tf.float32)
        vals = [t.numpy() for t in tape.gradient(z, [x, y])]
    assert [float(v) for v in vals] == [pytest.approx(6.0), pytest.approx(8.0)]


def test_tf45_gradient_matches_finite_differences_for_vector_input():
    def f(a):
        return tf.reduce_sum(tf.sinh(a) * a)

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=[3])
        y = tf.py_function(f, [x], tf.float64)
        (dx,) = tf.gradients(y, x)
    xv = np.array([0.1, -0.7, 1.3])
    with _session(g) as sess:
        got = sess.run(dx, feed_dict={x: xv})
    eps = 1e-6
    fd = [(np.sum(np.sinh(xv + e) * (xv + e)) - np.sum(np.sinh(xv - e) * (xv - e))) / (2 * eps)
          for e in np.eye(3) * eps]
    np.testing.assert_allclose(got, fd, rtol=1e-6)


def test_tf45_grad_ys_scales_the_gradient():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(lambda a: a ** 2, [x], tf.float32)
        (dx,) = tf.gradients(y, x, grad_ys=tf.constant(0.5))
    with _session(g) as sess:
        assert sess.run(dx, feed_dict={x: 3.0}) == pytest.approx(3.0)


# -------------------------------------------------------------------- TF#46

def test_tf46_second_order_in_graph_is_none():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(lambda a: a ** 3, [x], tf.float32)
        (dx,) = tf.gradients(y, x)
        d2 = _quiet_gradients(dx, x)
    assert d2 == [None]
    with _session(g) as sess:
        assert sess.run(dx, feed_dict={x: 2.0}) == pytest.approx(12.0)


def test_tf46_second_order_nested_tapes_is_none():
    x = tf.constant(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.py_function(lambda a: a ** 2, [x], tf.float32)
            dy = inner.gradient(y, x)
        assert dy.numpy() == pytest.approx(6.0)
        assert outer.gradient(dy, x) is None


# -------------------------------------------------------------------- TF#47

@pytest.mark.parametrize("func", [
    pytest.param(lambda a: tf.constant(1.0), id="independent_output"),
    pytest.param(lambda a: tf.constant(a.numpy() ** 2), id="lost_through_numpy"),
])
def test_tf47_disconnected_inside_func_gives_zero_not_none(func):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(func, [x], tf.float32)
        (dx,) = tf.gradients(y, x)
    assert dx is not None
    with _session(g) as sess:
        assert sess.run(dx, feed_dict={x: 3.0}) == 0.0


def test_tf47_disconnected_inside_func_eager_tape_gives_zero():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: tf.constant(a.numpy() ** 2), [x], tf.float32)
    grad = tape.gradient(y, x)
    assert grad is not None and grad.numpy() == 0.0


def test_tf47_unconnected_output_contributes_zeros():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y0, y1 = tf.py_function(lambda a: (a * 2.0, a * 3.0), [x], [tf.float32, tf.float32])
        (dx,) = tf.gradients(y0, x)  # y1 gets no upstream gradient
    with _session(g) as sess:
        assert sess.run(dx, feed_dict={x: 1.0}) == pytest.approx(2.0)


def test_tf47_integer_inputs_get_none():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        n = tf.compat.v1.placeholder(tf.int32)
        y = tf.py_function(lambda a, k: a * tf.cast(k, tf.float32), [x, n], tf.float32)
        dx, dn = _quiet_gradients(y, [x, n])
    assert dn is None
    with _session(g) as sess:
        assert sess.run(dx, feed_dict={x: 2.0, n: 3}) == pytest.approx(3.0)


def test_unconnected_xs_give_none():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        other = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(lambda a: a * 2.0, [x], tf.float32)
        grads = _quiet_gradients(y, [x, other])
    assert grads[1] is None and grads[0] is not None
