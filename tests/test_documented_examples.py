"""TensorFlow's documented examples for the seed ops, verbatim but for the import (TF#1–3)."""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as tf


def test_py_func_sinh_in_v1_session():
    def my_func(x):
        # x will be a numpy array with the contents of the placeholder below
        return np.sinh(x)
    input = tf.compat.v1.placeholder(tf.float32)
    y = tf.compat.v1.py_func(my_func, [input], tf.float32)
    with tf.compat.v1.Session() as sess:
        result = sess.run(y, feed_dict={input: 1.0})
    assert type(result) is np.float32
    assert result == np.float32(1.1752012)
    assert y.op.type == "PyFunc" and y.name == "PyFunc:0"
    assert str(y.shape) == "<unknown>"


def log_huber(x, m):
    if tf.abs(x) <= m:
        return x**2
    else:
        return m**2 * (1 - 2 * tf.math.log(m) + tf.math.log(x**2))


@pytest.mark.parametrize("x_value, y_expected, dy_expected",
                         [(1.0, 1.0, 2.0), (3.0, 7.243721, 2.6666667)])
def test_log_huber_py_function_with_graph_gradients(x_value, y_expected, dy_expected):
    x = tf.compat.v1.placeholder(tf.float32)
    m = tf.compat.v1.placeholder(tf.float32)
    y = tf.py_function(func=log_huber, inp=[x, m], Tout=tf.float32)
    dy_dx = tf.gradients(y, x)[0]
    with tf.compat.v1.Session() as sess:
        y_val, dy_val = sess.run([y, dy_dx], feed_dict={x: x_value, m: 2.0})
        dy_alone = sess.run(dy_dx, feed_dict={x: x_value, m: 2.0})
    assert y_val == pytest.approx(y_expected, rel=1e-6)
    assert dy_val == pytest.approx(dy_expected, rel=1e-6)
    assert dy_alone == pytest.approx(dy_expected, rel=1e-6)  # forward runs via control dep
    assert y.op.type == "EagerPyFunc" and dy_dx.op.type == "EagerPyFunc"


def test_log_huber_eager_gradient_tape():
    x = tf.constant(1.0)
    m = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([x, m])
        y = tf.py_function(func=log_huber, inp=[x, m], Tout=tf.float32)
    dy_dx = t.gradient(y, x)
    assert dy_dx.numpy() == 2.0
    assert y.numpy() == 1.0


def test_numpy_function_inside_function():
    def my_numpy_func(x):
        # x will be a numpy array with the contents of the input to the
        # tf.function
        return np.sinh(x)

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def tf_function(input):
        y = tf.numpy_function(my_numpy_func, [input], tf.float32)
        return y * y
    result = tf_function(tf.constant(1.))
    assert isinstance(result, tf.EagerTensor)
    assert result.dtype is tf.float32 and result.shape == ()
    assert result.numpy() == np.float32(1.3810978)
    assert repr(result) == "<pfd.Tensor: shape=(), dtype=float32, numpy=1.3810978>"
    assert tf_function(1.0).numpy() == np.float32(1.3810978)
    np.testing.assert_allclose(tf_function([0., 1.]).numpy(), [0., 1.3810978], rtol=1e-6)
    with pytest.raises(TypeError, match="Can not cast TensorSpec"):
        tf_function(tf.constant(1))
