"""SPEC §2a dtypes: complex64/complex128 (TF#24, TF#45), declared dtype equals
runtime dtype, ops refused for dtypes TF does not register them for, and
``convert_to_tensor`` packing lists that mix tensors and numbers.

TF's complex gradient convention: for a holomorphic f the gradient reported
for z is ``conj(df/dz) * upstream`` (so d(z**2)/dz at 3+3j reads 6-6j, TF#45).
"""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as tf

COMPLEX = [tf.complex64, tf.complex128]


# ----------------------------------------------------- complex values

@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_round_trips_through_each_wrapper(dtype):
    np_t = dtype.as_numpy_dtype
    value = np.array([1 + 2j, -3j], dtype=np_t)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype, (2,))
        a = tf.compat.v1.py_func(lambda v: v * np_t(2), [x], dtype)
        b = tf.numpy_function(lambda v: np.conj(v), [x], dtype)
        c = tf.py_function(lambda v: v * v, [x], dtype)
    with tf.compat.v1.Session(graph=g) as sess:
        ra, rb, rc = sess.run([a, b, c], {x: value})
    for got, want in ((ra, value * 2), (rb, np.conj(value)), (rc, value * value)):
        assert got.dtype == np_t
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_python_complex_constant_is_complex128():
    c = tf.constant(1 + 2j)
    assert c.dtype is tf.complex128
    assert tf.constant([1j], dtype=tf.complex64).dtype is tf.complex64
    with pytest.raises(TypeError):
        tf.constant(1 + 2j, dtype=tf.float32)


def test_complex_math_where_numpy_has_it():
    z = tf.constant(np.array([1 + 1j, 2 - 1j], np.complex64))
    for fn, ref in ((tf.exp, np.exp), (tf.sqrt, np.sqrt), (tf.math.log, np.log),
                    (tf.tanh, np.tanh), (tf.sinh, np.sinh), (tf.square, np.square),
                    (tf.negative, np.negative), (tf.math.conj, np.conj)):
        out = fn(z)
        assert out.dtype is tf.complex64, fn
        np.testing.assert_allclose(out.numpy(), ref(z.numpy()), rtol=1e-5)
    mag = tf.abs(z)
    assert mag.dtype is tf.float32
    np.testing.assert_allclose(mag.numpy(), np.abs(z.numpy()), rtol=1e-6)
    assert tf.reduce_sum(z).dtype is tf.complex64


def test_complex_is_not_ordered():
    z = tf.constant(1j)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Less"):
        tf.less(z, z)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Maximum"):
        tf.maximum(z, z)


# ----------------------------------------------------- complex gradients (TF#45)

def test_tape_gradient_through_py_function_is_the_conjugate():
    x = tf.constant(3 + 3j)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: a ** 2, [x], tf.complex128)
    assert complex(tape.gradient(y, x).numpy()) == pytest.approx(6 - 6j)


def test_graph_gradient_through_py_function_is_the_conjugate():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.complex64, ())
        y = tf.py_function(lambda a: a * a, [x], tf.complex64)
        (dx,) = tf.gradients(y, x)
    with tf.compat.v1.Session(graph=g) as sess:
        assert complex(sess.run(dx, {x: 1 + 2j})) == pytest.approx(2 - 4j)


@pytest.mark.parametrize("fn, deriv", [
    (tf.exp, np.exp), (tf.sinh, np.cosh), (tf.math.log, lambda z: 1 / z),
    (tf.sqrt, lambda z: 0.5 / np.sqrt(z)), (tf.tanh, lambda z: 1 - np.tanh(z) ** 2),
    (lambda z: z * z * z, lambda z: 3 * z * z), (lambda z: 1 / z, lambda z: -1 / z ** 2),
])
def test_holomorphic_gradients_are_conj_of_the_derivative(fn, deriv):
    z0 = np.complex128(0.7 + 0.4j)
    x = tf.constant(z0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    got = complex(tape.gradient(y, x).numpy())
    assert got == pytest.approx(np.conj(deriv(z0)), rel=1e-9)


def test_gradient_of_abs_of_complex_is_z_over_abs():
    x = tf.constant(3 + 4j)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.abs(x)
    assert complex(tape.gradient(y, x).numpy()) == pytest.approx((3 + 4j) / 5)


# ----------------------------------------------------- declared dtype == runtime dtype

INT_TYPES = [tf.int8, tf.int16, tf.int32, tf.uint8, tf.uint16, tf.int64]


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_reductions_keep_the_integer_dtype_in_graphs_and_eagerly(dtype):
    np_t = dtype.as_numpy_dtype
    data = np.arange(6, dtype=np_t).reshape(2, 3)
    for reduce in (tf.reduce_sum, tf.reduce_mean, tf.reduce_max):
        assert reduce(tf.constant(data)).numpy().dtype == np_t
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype, (2, 3))
        s = tf.reduce_sum(x, axis=1)
        strict = tf.compat.v1.py_func(lambda v: v, [s], dtype)  # checks the dtype exactly
    with tf.compat.v1.Session(graph=g) as sess:
        out = sess.run(strict, {x: data})
    assert out.dtype == np_t
    np.testing.assert_array_equal(out, data.sum(axis=1).astype(np_t))


# ----------------------------------------------------- refused at build time

REFUSED = [("Sqrt", tf.sqrt), ("Exp", tf.exp), ("Tanh", tf.tanh), ("Sinh", tf.sinh),
           ("Log", tf.math.log)]


@pytest.mark.parametrize("op_type, fn", REFUSED)
def test_float_only_ops_refuse_integers_when_building(op_type, fn):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.int32, ())
        with pytest.raises(TypeError, match=f"'{op_type}'.*int32 not in list of allowed"):
            fn(x)
    assert [op.type for op in g.get_operations()] == ["Placeholder"]


@pytest.mark.parametrize("op_type, fn", REFUSED)
def test_float_only_ops_refuse_integers_eagerly_like_tf(op_type, fn):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=f"attr 'T' of int32 is not in the list.*Op:{op_type}"):
        fn(tf.constant(4))


def test_other_refusals_follow_tf_registrations():
    b = tf.constant(True)
    s = tf.constant("a")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Neg"):
        tf.negative(b)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Sum"):
        tf.reduce_sum(b)
    with pytest.raises(tf.errors.InvalidArgumentError, match="IsNan"):
        tf.math.is_nan(tf.constant(1))
    with pytest.raises(TypeError, match="Cast"):
        tf.cast(s, tf.float32)
    assert (s + s).numpy() == b"aa"  # string concatenation is registered
    assert bool(tf.equal(s, s).numpy())


# ----------------------------------------------------- convert_to_tensor packs

def test_convert_to_tensor_packs_eager_tensors_and_numbers():
    t = tf.convert_to_tensor([tf.constant(1.0), 2.0, [3.0][0]])
    assert t.dtype is tf.float32
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])


def test_convert_to_tensor_packs_nested_lists_with_graph_tensors_as_pack_ops():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, ())
        m = tf.convert_to_tensor([[x, 1.0], [2.0, x]])
        assert m.op.type == "Pack" and m.shape == (2, 2)
        (dx,) = tf.gradients(tf.reduce_sum(m * m), x)
        y = tf.py_function(lambda v: v * 2, [[x, 5.0]], tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        mv, dv, yv = sess.run([m, dx, y], {x: 3.0})
    np.testing.assert_array_equal(mv, [[3, 1], [2, 3]])
    assert dv == pytest.approx(12.0)
    np.testing.assert_array_equal(yv, [6, 10])


def test_packing_tensors_of_different_dtypes_is_refused():
    with pytest.raises(TypeError, match="dtype"):
        tf.convert_to_tensor([tf.constant(1.0), tf.constant(1)])


def test_tape_sees_through_a_pack():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.convert_to_tensor([x, x * x, 1.0]))
    assert float(tape.gradient(y, x)) == pytest.approx(5.0)
