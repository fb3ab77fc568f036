"""Gradients of every differentiable op against central finite differences (numpy oracle).

Each case is checked twice: symbolically with ``tf.gradients`` in a v1 graph
Session, and eagerly with ``tf.GradientTape``. The loss is
``reduce_sum(y * w)`` with a fixed random ``w``, so every element of the
jacobian contributes. The finite differences use an independent numpy
implementation of the forward function, in float64.

The seed ops: ``py_function`` is once-differentiable (TF#45-47);
``py_func``/``numpy_function`` give ``None`` and warn naming the op (TF#44, SPEC §2).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyfunc_debug as tf

RNG = np.random.default_rng(1234)


def _rand(*shape, low=-1.5, high=1.5):
    return RNG.uniform(low, high, size=shape)


def _away_from_zero(*shape):
    """Values with |v| in [0.5, 1.5] and random signs (no kinks for abs/max/min)."""
    return RNG.uniform(0.5, 1.5, size=shape) * RNG.choice([-1.0, 1.0], size=shape)


def _positive(*shape):
    return RNG.uniform(0.5, 2.0, size=shape)


def _weights(shape):
    return np.random.default_rng(99).uniform(0.5, 1.5, size=shape)


def numeric_grads(np_fn, arrays, w, eps=1e-6):
    """Central finite differences of sum(np_fn(*arrays) * w) w.r.t. each array."""
    grads = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            f_plus = np.sum(np.asarray(np_fn(*plus)) * w)
            f_minus = np.sum(np.asarray(np_fn(*minus)) * w)
            g[idx] = (f_plus - f_minus) / (2 * eps)
        grads.append(g)
    return grads


# A fixed condition for the 3-argument where (shape (3, 4)).
COND = np.array([[True, False, True, False],
                 [False, False, True, True],
                 [True, True, False, True]])

# (id, pfd function, numpy oracle, input arrays, rtol)
CASES = [
    ("add", lambda x, y: tf.add(x, y), np.add, [_rand(3, 4), _rand(3, 4)]),
    ("add_operator", lambda x, y: x + y, np.add, [_rand(2, 3), _rand(2, 3)]),
    ("subtract", lambda x, y: tf.subtract(x, y), np.subtract, [_rand(3, 4), _rand(3, 4)]),
    ("subtract_operator", lambda x, y: x - y, np.subtract, [_rand(3), _rand(3)]),
    ("multiply", lambda x, y: tf.multiply(x, y), np.multiply, [_rand(3, 4), _rand(3, 4)]),
    ("multiply_operator", lambda x, y: x * y, np.multiply, [_rand(5), _rand(5)]),
    ("divide", lambda x, y: tf.divide(x, y), np.divide, [_rand(3, 4), _away_from_zero(3, 4)]),
    ("divide_operator", lambda x, y: x / y, np.divide, [_rand(4), _away_from_zero(4)]),
    ("pow_both_args", lambda x, y: tf.pow(x, y), np.power, [_positive(3, 4), _rand(3, 4)]),
    ("pow_operator", lambda x, y: x ** y, np.power, [_positive(5), _rand(5)]),
    ("pow_const_exponent", lambda x: tf.pow(x, 3.0), lambda x: x ** 3.0, [_rand(2, 3)]),
    ("negative", lambda x: tf.negative(x), np.negative, [_rand(3, 4)]),
    ("negative_operator", lambda x: -x, np.negative, [_rand(3, 4)]),
    ("abs", lambda x: tf.abs(x), np.abs, [_away_from_zero(3, 4)]),
    ("abs_builtin", lambda x: abs(x), np.abs, [_away_from_zero(6)]),
    ("square", lambda x: tf.square(x), np.square, [_rand(3, 4)]),
    ("sqrt", lambda x: tf.sqrt(x), np.sqrt, [_positive(3, 4)]),
    ("exp", lambda x: tf.exp(x), np.exp, [_rand(3, 4)]),
    ("log", lambda x: tf.math.log(x), np.log, [_positive(3, 4)]),
    ("sinh", lambda x: tf.sinh(x), np.sinh, [_rand(3, 4)]),
    ("tanh", lambda x: tf.tanh(x), np.tanh, [_rand(3, 4)]),
    ("maximum", lambda x, y: tf.maximum(x, y), np.maximum,
     [_rand(3, 4), _rand(3, 4)]),
    ("minimum", lambda x, y: tf.minimum(x, y), np.minimum,
     [_rand(3, 4), _rand(3, 4)]),
    ("matmul", lambda a, b: tf.matmul(a, b), np.matmul, [_rand(2, 3), _rand(3, 4)]),
    ("matmul_operator", lambda a, b: a @ b, np.matmul, [_rand(3, 3), _rand(3, 2)]),
    ("matmul_transpose_a", lambda a, b: tf.matmul(a, b, transpose_a=True),
     lambda a, b: a.T @ b, [_rand(3, 2), _rand(3, 4)]),
    ("matmul_transpose_b", lambda a, b: tf.matmul(a, b, transpose_b=True),
     lambda a, b: a @ b.T, [_rand(2, 3), _rand(4, 3)]),
    ("matmul_transpose_both", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
     lambda a, b: a.T @ b.T, [_rand(3, 2), _rand(4, 3)]),
    ("reduce_sum_all", lambda x: tf.reduce_sum(x), np.sum, [_rand(3, 4)]),
    ("reduce_sum_axis0", lambda x: tf.reduce_sum(x, axis=0),
     lambda x: np.sum(x, axis=0), [_rand(3, 4)]),
    ("reduce_sum_axis1", lambda x: tf.reduce_sum(x, axis=1),
     lambda x: np.sum(x, axis=1), [_rand(3, 4)]),
    ("reduce_sum_axis_neg1_keepdims", lambda x: tf.reduce_sum(x, axis=-1, keepdims=True),
     lambda x: np.sum(x, axis=-1, keepdims=True), [_rand(2, 3, 4)]),
    ("reduce_sum_none_keepdims", lambda x: tf.reduce_sum(x, keepdims=True),
     lambda x: np.sum(x, keepdims=True), [_rand(3, 4)]),
    ("reduce_sum_axis_list", lambda x: tf.reduce_sum(x, axis=[0, 2]),
     lambda x: np.sum(x, axis=(0, 2)), [_rand(2, 3, 4)]),
    ("reduce_mean_all", lambda x: tf.reduce_mean(x), np.mean, [_rand(3, 4)]),
    ("reduce_mean_axis0", lambda x: tf.reduce_mean(x, axis=0),
     lambda x: np.mean(x, axis=0), [_rand(3, 4)]),
    ("reduce_mean_axis1_keepdims", lambda x: tf.reduce_mean(x, axis=1, keepdims=True),
     lambda x: np.mean(x, axis=1, keepdims=True), [_rand(3, 4)]),
    ("reduce_mean_none_keepdims", lambda x: tf.reduce_mean(x, keepdims=True),
     lambda x: np.mean(x, keepdims=True), [_rand(2, 3, 4)]),
    ("reshape", lambda x: tf.reshape(x, [4, 3]), lambda x: np.reshape(x, (4, 3)),
     [_rand(3, 4)]),
    ("reshape_minus_one", lambda x: tf.reshape(x, [-1]) * tf.reshape(x, [-1]),
     lambda x: np.reshape(x, -1) ** 2, [_rand(2, 3)]),
    ("cast_f64_f32_f64", lambda x: tf.cast(tf.square(tf.cast(x, tf.float32)), tf.float64),
     np.square, [_rand(3, 4)]),
    ("where", lambda x, y: tf.where(COND, x, y), lambda x, y: np.where(COND, x, y),
     [_rand(3, 4), _rand(3, 4)]),
    ("where_computed_condition", lambda x, y: tf.where(x > y, x * y, x - y),
     lambda x, y: np.where(x > y, x * y, x - y), [_rand(3, 4), _rand(3, 4)]),
    ("where_broadcast", lambda x, y: tf.where(COND, x, y),
     lambda x, y: np.where(COND, x, y), [_rand(3, 1), _rand()]),
    ("transpose", lambda x: tf.transpose(x), np.transpose, [_rand(3, 4)]),
    ("transpose_perm", lambda x: tf.transpose(x, perm=[1, 2, 0]),
     lambda x: np.transpose(x, (1, 2, 0)), [_rand(2, 3, 4)]),
    ("identity", lambda x: tf.identity(x), lambda x: x, [_rand(3, 4)]),
    ("broadcast_add_3x1_1x4", lambda x, y: x + y, np.add, [_rand(3, 1), _rand(1, 4)]),
    ("broadcast_sub_3x1_1x4", lambda x, y: x - y, np.subtract, [_rand(3, 1), _rand(1, 4)]),
    ("broadcast_mul_3x1_1x4", lambda x, y: x * y, np.multiply, [_rand(3, 1), _rand(1, 4)]),
    ("broadcast_div_3x1_1x4", lambda x, y: x / y, np.divide,
     [_rand(3, 1), _away_from_zero(1, 4)]),
    ("broadcast_pow_3x1_1x4", lambda x, y: tf.pow(x, y), np.power,
     [_positive(3, 1), _rand(1, 4)]),
    ("broadcast_maximum_3x1_1x4", lambda x, y: tf.maximum(x, y), np.maximum,
     [_rand(3, 1), _rand(1, 4)]),
    ("broadcast_minimum_3x1_1x4", lambda x, y: tf.minimum(x, y), np.minimum,
     [_rand(3, 1), _rand(1, 4)]),
    ("broadcast_add_scalar_vector", lambda x, y: x + y, np.add, [_rand(), _rand(4)]),
    ("broadcast_mul_scalar_vector", lambda x, y: x * y, np.multiply, [_rand(), _rand(4)]),
    ("broadcast_mul_vector_scalar", lambda x, y: x * y, np.multiply, [_rand(4), _rand()]),
    ("broadcast_div_scalar_vector", lambda x, y: x / y, np.divide,
     [_rand(), _away_from_zero(4)]),
    ("broadcast_sub_vector_matrix", lambda x, y: x - y, np.subtract, [_rand(4), _rand(3, 4)]),
    ("scalar_python_constants", lambda x: 2.0 * x - 1.5 / x + x ** 2,
     lambda x: 2.0 * x - 1.5 / x + x ** 2, [_away_from_zero(5)]),
    ("composite_mlp", lambda x, w1: tf.reduce_mean(tf.tanh(tf.matmul(x, w1)) ** 2, axis=0),
     lambda x, w1: np.mean(np.tanh(x @ w1) ** 2, axis=0), [_rand(4, 3), _rand(3, 2)]),
    ("input_used_twice", lambda x: x * tf.exp(x) + tf.sqrt(x * x + 1.0),
     lambda x: x * np.exp(x) + np.sqrt(x * x + 1.0), [_rand(3, 2)]),
]
CASES = [c if len(c) == 5 else c + (1e-6,) for c in CASES]
IDS = [c[0] for c in CASES]


def _check(actual, expected, rtol, what):
    assert actual is not None, f"{what}: gradient is None"
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-7, err_msg=what)


@pytest.mark.parametrize("name, fn, np_fn, arrays, rtol", CASES, ids=IDS)
def test_graph_gradients_match_finite_differences(name, fn, np_fn, arrays, rtol):
    expected_y = np.asarray(np_fn(*arrays))
    w = _weights(expected_y.shape)
    g = tf.Graph()
    with g.as_default():
        xs = [tf.compat.v1.placeholder(tf.float64, shape=a.shape) for a in arrays]
        y = fn(*xs)
        dxs = tf.gradients(tf.reduce_sum(y * w), xs)
    assert len(dxs) == len(xs)
    with tf.compat.v1.Session(graph=g) as sess:
        y_val, grads = sess.run([y, dxs], feed_dict=dict(zip(xs, arrays)))
    np.testing.assert_allclose(np.asarray(y_val), expected_y, rtol=1e-6, err_msg="forward")
    for i, (got, want) in enumerate(zip(grads, numeric_grads(np_fn, arrays, w))):
        _check(got, want, rtol, f"{name}: d/dx{i} (graph)")
        assert np.asarray(got).dtype == np.float64


@pytest.mark.parametrize("name, fn, np_fn, arrays, rtol", CASES, ids=IDS)
def test_tape_gradients_match_finite_differences(name, fn, np_fn, arrays, rtol):
    expected_y = np.asarray(np_fn(*arrays))
    w = _weights(expected_y.shape)
    xs = [tf.constant(a, dtype=tf.float64) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
        loss = tf.reduce_sum(y * w)
    grads = tape.gradient(loss, xs)
    np.testing.assert_allclose(np.asarray(y), expected_y, rtol=1e-6, err_msg="forward")
    assert len(grads) == len(xs)
    for i, (got, want) in enumerate(zip(grads, numeric_grads(np_fn, arrays, w))):
        _check(got, want, rtol, f"{name}: d/dx{i} (tape)")
        assert got.dtype is tf.float64


# -- second order: gradient ops are ordinary ops, so they differentiate too ---------

_A = _rand(3, 2)
_C = _rand(1, 4)

# (id, pfd function, numpy d/dx sum(f(x) * w), input array); w has the shape of f(x).
SECOND_ORDER = [
    ("tanh", tf.tanh, lambda x, w: w * (1 - np.tanh(x) ** 2), _rand(3, 2)),
    ("exp", tf.exp, lambda x, w: w * np.exp(x), _rand(3, 2)),
    ("sinh", tf.sinh, lambda x, w: w * np.cosh(x), _rand(3, 2)),
    ("sqrt", tf.sqrt, lambda x, w: w * 0.5 / np.sqrt(x), _positive(3, 2)),
    ("log", tf.math.log, lambda x, w: w / x, _positive(3, 2)),
    ("reciprocal", lambda x: 1.0 / x, lambda x, w: -w / x ** 2, _away_from_zero(3, 2)),
    ("cube", lambda x: x ** 3.0, lambda x, w: 3 * w * x ** 2, _rand(3, 2)),
    ("x_pow_x", lambda x: tf.pow(x, x), lambda x, w: w * x ** x * (np.log(x) + 1),
     _positive(3, 2)),
    ("tanh_matmul", lambda x: tf.tanh(tf.matmul(x, _A)),
     lambda x, w: (w * (1 - np.tanh(x @ _A) ** 2)) @ _A.T, _rand(4, 3)),
    ("reduce_sum_squared", lambda x: tf.reduce_sum(x) ** 2,
     lambda x, w: 2 * w * np.sum(x) * np.ones_like(x), _rand(3, 2)),
    ("reduce_mean_axis0_squared", lambda x: tf.reduce_mean(x, axis=0) ** 2,
     lambda x, w: np.broadcast_to(2 * w * np.mean(x, axis=0) / x.shape[0], x.shape), _rand(3, 2)),
    ("broadcast_add_squared", lambda x: (x + _C) ** 2,
     lambda x, w: np.sum(2 * w * (x + _C), axis=1, keepdims=True), _rand(3, 1)),
]
SECOND_IDS = [c[0] for c in SECOND_ORDER]


def _second_order_expected(np_grad, x, w, w2):
    return numeric_grads(lambda v: np_grad(v, w), [x], w2)[0]


@pytest.mark.parametrize("name, fn, np_grad, x_val", SECOND_ORDER, ids=SECOND_IDS)
def test_second_order_graph(name, fn, np_grad, x_val):
    w = _weights(np.shape(np.asarray(fn(tf.constant(x_val)))))
    w2 = np.random.default_rng(5).uniform(0.5, 1.5, size=x_val.shape)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=x_val.shape)
        (dx,) = tf.gradients(tf.reduce_sum(fn(x) * w), x)
        (ddx,) = tf.gradients(tf.reduce_sum(dx * w2), x)
    assert ddx is not None, f"{name}: second-order gradient is None"
    with tf.compat.v1.Session(graph=g) as sess:
        got_dx, got = sess.run([dx, ddx], {x: x_val})
    np.testing.assert_allclose(got_dx, np_grad(x_val, w), rtol=1e-9)
    _check(got, _second_order_expected(np_grad, x_val, w, w2), 1e-5, f"{name} (graph)")


@pytest.mark.parametrize("name, fn, np_grad, x_val", SECOND_ORDER, ids=SECOND_IDS)
def test_second_order_nested_tapes(name, fn, np_grad, x_val):
    w = _weights(np.shape(np.asarray(fn(tf.constant(x_val)))))
    w2 = np.random.default_rng(5).uniform(0.5, 1.5, size=x_val.shape)
    x = tf.constant(x_val)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            loss = tf.reduce_sum(fn(x) * w)
        dx = inner.gradient(loss, x)
        loss2 = tf.reduce_sum(dx * w2)
    ddx = outer.gradient(loss2, x)
    np.testing.assert_allclose(dx.numpy(), np_grad(x_val, w), rtol=1e-9)
    _check(ddx, _second_order_expected(np_grad, x_val, w, w2), 1e-5, f"{name} (tape)")


# -- shapes unknown at build time: broadcasting gradients are reduced at run time ------

def test_broadcast_gradients_with_unknown_shapes():
    a_val, b_val = _rand(3, 1), _rand(3, 4)
    w = _weights((3, 4))
    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.placeholder(tf.float64, shape=None)
        b = tf.compat.v1.placeholder(tf.float64, shape=[None, 4])
        y = a * b + tf.maximum(a, b) - b / (a * a + 1.0)
        da, db = tf.gradients(tf.reduce_sum(y * w), [a, b])
        m = tf.reduce_mean(a * b, axis=0, keepdims=True)
        (dm,) = tf.gradients(tf.reduce_sum(m * w[:1]), a)
    with tf.compat.v1.Session(graph=g) as sess:
        got_a, got_b, got_m = sess.run([da, db, dm], {a: a_val, b: b_val})

    def np_fn(x, z):
        return x * z + np.maximum(x, z) - z / (x * x + 1.0)
    want_a, want_b = numeric_grads(np_fn, [a_val, b_val], w)
    _check(got_a, want_a, 1e-6, "d/da")
    _check(got_b, want_b, 1e-6, "d/db")
    (want_m,) = numeric_grads(lambda x: np.mean(x * b_val, axis=0, keepdims=True), [a_val], w[:1])
    _check(got_m, want_m, 1e-6, "d mean/da")


# -- points where TF picks a convention -----------------------------------------------

def test_gradient_conventions_at_ties_and_zero():
    """Ties in maximum/minimum go to x; abs'(0) = 0; pow at x <= 0 has d/dy = 0 (as TF)."""
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    y = tf.constant([1.0, 2.0], dtype=tf.float64)
    for op in (tf.maximum, tf.minimum):
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            z = op(x, y)
        dx, dy = tape.gradient(z, [x, y])
        np.testing.assert_array_equal(dx.numpy(), [1.0, 1.0])
        np.testing.assert_array_equal(dy.numpy(), [0.0, 0.0])
    x = tf.constant([0.0, -1.0, 2.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = tf.abs(x)
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [0.0, -1.0, 1.0])
    base = tf.constant([0.0, -2.0], dtype=tf.float64)
    expo = tf.constant([2.0, 3.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([base, expo])
        z = tf.pow(base, expo)
    d_base, d_expo = tape.gradient(z, [base, expo])
    np.testing.assert_array_equal(d_base.numpy(), [0.0, 12.0])
    np.testing.assert_array_equal(d_expo.numpy(), [0.0, 0.0])


# -- cast: gradient keeps the source dtype; integer casts stop it ------------------

@pytest.mark.parametrize("src, dst", [(tf.float64, tf.float32), (tf.float32, tf.float64)])
def test_cast_gradient_has_source_dtype_graph(src, dst):
    x_val = _rand(3, 4).astype(src.as_numpy_dtype)
    w = _weights((3, 4)).astype(dst.as_numpy_dtype)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(src, shape=(3, 4))
        y = tf.cast(x, dst)
        assert y.dtype is dst
        (dx,) = tf.gradients(tf.reduce_sum(y * w), x)
        assert dx.dtype is src
    with tf.compat.v1.Session(graph=g) as sess:
        got = sess.run(dx, feed_dict={x: x_val})
    assert got.dtype == src.as_numpy_dtype
    np.testing.assert_allclose(got, w, rtol=1e-6)


@pytest.mark.parametrize("src, dst", [(tf.float64, tf.float32), (tf.float32, tf.float64)])
def test_cast_gradient_has_source_dtype_tape(src, dst):
    w = _weights((3, 4)).astype(dst.as_numpy_dtype)
    x = tf.constant(_rand(3, 4), dtype=src)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.cast(x, dst) * w)
    dx = tape.gradient(loss, x)
    assert dx.dtype is src
    np.testing.assert_allclose(dx.numpy(), w, rtol=1e-6)


def test_cast_to_integer_blocks_gradient():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=(3,))
        y = tf.cast(tf.cast(x, tf.int32), tf.float64)
        assert tf.gradients(tf.reduce_sum(y), x) == [None]
    x = tf.constant([1.5, 2.5])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cast(tf.cast(x, tf.int32), tf.float32)
    assert tape.gradient(y, x) is None


# -- gradients() API details ---------------------------------------------------------

def test_unconnected_xs_give_none_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=(3,))
        z = tf.compat.v1.placeholder(tf.float64, shape=(3,))
        y = tf.reduce_sum(x * x)
        dx, dz = tf.gradients(y, [x, z])
    assert dz is None
    with tf.compat.v1.Session(graph=g) as sess:
        np.testing.assert_allclose(sess.run(dx, {x: [1.0, 2.0, 3.0]}), [2.0, 4.0, 6.0])


def test_unconnected_sources_give_none_tape():
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    z = tf.constant([3.0, 4.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([x, z])
        y = tf.reduce_sum(x * x)
    dx, dz = tape.gradient(y, [x, z])
    assert dz is None
    np.testing.assert_allclose(dx.numpy(), [2.0, 4.0])


def test_grad_ys_scales_the_seed():
    x_val = _rand(2, 3)
    seed = _weights((2, 3))
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=(2, 3))
        y = tf.exp(x)
        (dx,) = tf.gradients(y, x, grad_ys=tf.constant(seed))
    with tf.compat.v1.Session(graph=g) as sess:
        got = sess.run(dx, {x: x_val})
    np.testing.assert_allclose(got, seed * np.exp(x_val), rtol=1e-12)


def test_gradients_of_several_ys_are_summed():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=())
        (dx,) = tf.gradients([x * x, 3.0 * x], x)
    with tf.compat.v1.Session(graph=g) as sess:
        assert sess.run(dx, {x: 2.0}) == pytest.approx(7.0)


# -- py_function: once-differentiable (TF#45-47) -----------------------------------

def _two_out(a, b):
    """Two inputs, two outputs, built from pfd ops (run eagerly inside the body)."""
    return [a * b + a / b, tf.exp(a) - tf.square(b)]


def _two_out_np(a, b):
    return [a * b + a / b, np.exp(a) - np.square(b)]


def _two_out_fd(a_val, b_val, w1, w2):
    def loss(a, b):
        o1, o2 = _two_out_np(a, b)
        return np.sum(o1 * w1) + np.sum(o2 * w2)
    return numeric_grads(lambda a, b: loss(a, b), [a_val, b_val], 1.0)


A_VAL, B_VAL = _rand(3), _away_from_zero(3)
W1, W2 = _weights((3,)), np.random.default_rng(7).uniform(0.5, 1.5, size=(3,))


def test_py_function_gradient_two_inputs_two_outputs_graph():
    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.placeholder(tf.float64, shape=(3,))
        b = tf.compat.v1.placeholder(tf.float64, shape=(3,))
        o1, o2 = tf.py_function(_two_out, [a, b], [tf.float64, tf.float64])
        loss = tf.reduce_sum(o1 * W1) + tf.reduce_sum(o2 * W2)
        da, db = tf.gradients(loss, [a, b])
    assert da.op.type == "EagerPyFunc"
    with tf.compat.v1.Session(graph=g) as sess:
        for scale in (1.0, 0.5):  # repeated runs with other feeds give fresh gradients
            got_a, got_b = sess.run([da, db], {a: A_VAL * scale, b: B_VAL})
            want_a, want_b = _two_out_fd(A_VAL * scale, B_VAL, W1, W2)
            _check(got_a, want_a, 1e-6, "d/da (graph py_function)")
            _check(got_b, want_b, 1e-6, "d/db (graph py_function)")


def test_py_function_gradient_two_inputs_two_outputs_tape():
    a, b = tf.constant(A_VAL), tf.constant(B_VAL)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        o1, o2 = tf.py_function(_two_out, [a, b], [tf.float64, tf.float64])
        loss = tf.reduce_sum(o1 * W1) + tf.reduce_sum(o2 * W2)
    da, db = tape.gradient(loss, [a, b])
    want_a, want_b = _two_out_fd(A_VAL, B_VAL, W1, W2)
    _check(da, want_a, 1e-6, "d/da (tape py_function)")
    _check(db, want_b, 1e-6, "d/db (tape py_function)")


@pytest.mark.parametrize("wrapper", [tf.py_function, tf.compat.v1.py_function,
                                     tf.contrib.eager.py_func], ids=["tf", "compat", "contrib"])
def test_py_function_scalar_square_graph(wrapper):
    """TF#45: ``x**2`` at 3 gives 6.0, with every alias."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=())
        y = wrapper(lambda v: v ** 2, [x], tf.float64)
        (dx,) = tf.gradients(y, x)
    with tf.compat.v1.Session(graph=g) as sess:
        assert sess.run(dx, {x: 3.0}) == pytest.approx(6.0)


def test_py_function_unconnected_output_gives_zeros_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=(3,))
        y = tf.py_function(lambda v: tf.constant([1.0, 2.0, 3.0], dtype=tf.float64),
                           [x], tf.float64)
        (dx,) = tf.gradients(tf.reduce_sum(y), x)
    assert dx is not None
    with tf.compat.v1.Session(graph=g) as sess:
        got = sess.run(dx, {x: [1.0, 2.0, 3.0]})
    np.testing.assert_array_equal(got, np.zeros(3))


def test_py_function_gradient_lost_through_numpy_gives_zeros_tape():
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.py_function(lambda v: v.numpy() * 2.0, [x], tf.float64)
    dx = tape.gradient(y, x)
    assert dx is not None
    np.testing.assert_array_equal(dx.numpy(), np.zeros(2))


def test_py_function_one_unconnected_output_of_two_tape():
    """Only one output used downstream: the other output's seed is zero, not None."""
    a, b = tf.constant(A_VAL), tf.constant(B_VAL)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        o1, _ = tf.py_function(_two_out, [a, b], [tf.float64, tf.float64])
        loss = tf.reduce_sum(o1 * W1)
    da, db = tape.gradient(loss, [a, b])
    want_a, want_b = _two_out_fd(A_VAL, B_VAL, W1, np.zeros(3))
    _check(da, want_a, 1e-6, "d/da")
    _check(db, want_b, 1e-6, "d/db")


def test_py_function_integer_input_gives_none_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=(2,))
        n = tf.compat.v1.placeholder(tf.int32, shape=())
        y = tf.py_function(lambda v, k: v * tf.cast(k, tf.float64), [x, n], tf.float64)
        dx, dn = tf.gradients(tf.reduce_sum(y), [x, n])
    assert dn is None
    with tf.compat.v1.Session(graph=g) as sess:
        np.testing.assert_allclose(sess.run(dx, {x: [1.0, 2.0], n: 3}), [3.0, 3.0])


def test_py_function_integer_input_gives_none_tape():
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    n = tf.constant(3, dtype=tf.int32)
    with tf.GradientTape() as tape:
        tape.watch([x, n])
        y = tf.py_function(lambda v, k: v * tf.cast(k, tf.float64), [x, n], tf.float64)
    dx, dn = tape.gradient(y, [x, n])
    assert dn is None
    np.testing.assert_allclose(dx.numpy(), [3.0, 3.0])


def test_py_function_second_order_is_none_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=())
        y = tf.py_function(lambda v: v ** 3, [x], tf.float64)
        (dy,) = tf.gradients(y, x)
        assert tf.gradients(dy, x) == [None]
    with tf.compat.v1.Session(graph=g) as sess:
        assert sess.run(dy, {x: 2.0}) == pytest.approx(12.0)


def test_py_function_second_order_is_none_tape():
    x = tf.constant(2.0, dtype=tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.py_function(lambda v: v ** 3, [x], tf.float64)
        dy = inner.gradient(y, x)
    assert float(dy) == pytest.approx(12.0)
    assert outer.gradient(dy, x) is None


# -- py_func / numpy_function: no gradient, and a warning naming the op (TF#44) --------

NON_DIFF = [
    ("py_func", lambda f, inp, tout, name: tf.compat.v1.py_func(f, inp, tout, name=name)),
    ("py_func_stateless",
     lambda f, inp, tout, name: tf.compat.v1.py_func(f, inp, tout, stateful=False, name=name)),
    ("numpy_function", lambda f, inp, tout, name: tf.numpy_function(f, inp, tout, name=name)),
    ("compat_numpy_function",
     lambda f, inp, tout, name: tf.compat.v1.numpy_function(f, inp, tout, name=name)),
]


@pytest.mark.parametrize("kind, build", NON_DIFF, ids=[k for k, _ in NON_DIFF])
def test_numpy_wrappers_give_none_and_warn_naming_the_op(kind, build):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=(3,))
        y = build(lambda v: v * 2.0, [x], tf.float64, f"blocker_{kind}")
        with pytest.warns(UserWarning, match=f"blocker_{kind}"):
            grads = tf.gradients(tf.reduce_sum(y), x)
    assert grads == [None]


@pytest.mark.parametrize("kind, build", NON_DIFF, ids=[k for k, _ in NON_DIFF])
def test_numpy_wrapper_plus_x_has_gradient_one(kind, build):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=())
        y = build(lambda v: v * v, [x], tf.float64, "sq") + x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (dx,) = tf.gradients(y, x)
    assert dx is not None
    with tf.compat.v1.Session(graph=g) as sess:
        assert sess.run(dx, {x: 3.0}) == pytest.approx(1.0)


def test_numpy_function_eager_tape_gives_none():
    x = tf.constant(3.0, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.numpy_function(lambda v: v * v, [x], tf.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tape.gradient(y, x) is None


def test_numpy_function_eager_output_is_a_constant():
    """TF#44: eager ``numpy_function(x**2) * x`` has gradient 9.0 at x=3."""
    x = tf.constant(3.0, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.numpy_function(lambda v: v * v, [x], tf.float64) * x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert float(tape.gradient(y, x)) == pytest.approx(9.0)
