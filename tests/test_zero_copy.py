"""Zero-copy hand-offs must not let a wrapped function's write leak (README: differences).

A graph ``py_function`` reads its inputs without a copy (``np.asarray(x)`` is a
read-only view); ``x.numpy()`` stays a private copy (TF#15); results are not
copied. Constants and fed arrays keep their values across runs.
"""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as tf


def _write_through_asarray(x):
    np.asarray(x)[0] = 99.0
    return x


def test_py_function_cannot_write_into_a_constant_through_asarray():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(np.array([1.0, 2.0], np.float32))
        y = tf.py_function(_write_through_asarray, [c], tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="read-only"):
            sess.run(y)
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])


def test_py_function_cannot_write_into_a_feed_or_an_upstream_result():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        mid = tf.numpy_function(lambda a: a * 2, [x], tf.float32)
        y = tf.py_function(_write_through_asarray, [mid], tf.float32)
        z = tf.py_function(_write_through_asarray, [x], tf.float32)
    fed = np.array([1.0, 2.0], np.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        for fetch in (y, z):
            with pytest.raises(tf.errors.InvalidArgumentError, match="read-only"):
                sess.run(fetch, {x: fed})
        np.testing.assert_array_equal(fed, [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(mid, {x: fed}), [2.0, 4.0])


def test_numpy_inside_a_graph_py_function_is_a_private_copy():
    def bump(x):
        v = x.numpy()
        v += 100
        return v

    g = tf.Graph()
    with g.as_default():
        c = tf.constant(np.array([1.0, 2.0], np.float32))
        y = tf.py_function(bump, [c], tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        first = sess.run(y)
        second = sess.run(y)
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])
    np.testing.assert_array_equal(first, [101.0, 102.0])
    np.testing.assert_array_equal(second, [101.0, 102.0])


def test_a_returned_array_is_not_copied_and_later_runs_see_fresh_values():
    kept = []

    def fresh(x):
        out = np.asarray(x) + 1
        kept.append(out)
        return out

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(fresh, [x], tf.float32)
        z = tf.numpy_function(lambda a: a * 2, [y], tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        got_y, _ = sess.run([y, z], {x: np.ones(3, np.float32)})
        assert np.shares_memory(got_y, kept[-1])   # no copy of the result
        got_y2 = sess.run(y, {x: np.zeros(3, np.float32)})
    np.testing.assert_array_equal(got_y, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(got_y2, [1.0, 1.0, 1.0])


def test_eager_py_function_still_works_on_copies():
    t = tf.constant([1.0, 2.0])

    def bump(x):
        np.asarray(x.numpy())[0] = 50.0
        return x

    np.testing.assert_array_equal(tf.py_function(bump, [t], tf.float32).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
