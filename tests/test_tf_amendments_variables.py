"""SPEC §2a variables: eager values watched by GradientTape, graph variables with
initializers and per-session values, and variables passed to wrapped functions
(TF#10, TF#30, TF#47)."""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as tf


def test_eager_variable_assign_family_and_reads():
    v = tf.Variable([1.0, 2.0], name="v")
    assert v.dtype is tf.float32 and v.shape == (2,)
    v.assign([3.0, 4.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub([0.5, 0.5])
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    r = v.read_value()
    assert isinstance(r, tf.EagerTensor)
    v.assign([0.0, 0.0])
    np.testing.assert_array_equal(r.numpy(), [3.5, 4.5])  # a read is a snapshot
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0])


def test_an_eager_variable_has_no_initializer_to_run_as_in_tf():
    """TF's ``test_variable_arguments[eager]`` runs ``self.evaluate(v1.initializer)``:
    eagerly a variable is initialised already and its ``initializer`` is ``None``;
    graph-only attributes raise what TF raises."""
    v = tf.Variable(1.0)
    assert v.initializer is None
    assert tf.compat.v1.global_variables_initializer() is None
    with pytest.raises(RuntimeError, match="not supported when eager execution is enabled"):
        v.initial_value
    with pytest.raises(AttributeError, match="undefined when eager execution is enabled"):
        v.op
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        v.nothing
    with tf.Graph().as_default():
        g = tf.Variable(1.0)
    assert g.initializer.type == "Assign" and g.op.type != "Assign"


def test_trainable_variables_are_watched_automatically():
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = v * v
    assert float(tape.gradient(y, v)) == pytest.approx(6.0)


def test_untrainable_or_unwatched_variables_give_none():
    v = tf.Variable(3.0, trainable=False)
    w = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = v * v
    assert tape.gradient(y, v) is None
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = w * w
    assert tape.gradient(y, w) is None


def test_variable_passed_to_py_function_hands_over_its_value_and_gradient():
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = tf.py_function(lambda a: a * a, [v], tf.float32)
    assert float(y) == pytest.approx(9.0)
    assert float(tape.gradient(y, v)) == pytest.approx(6.0)  # TF#47: passed in inp


def test_variable_captured_in_py_function_can_be_assigned():
    v = tf.Variable(1.0)
    out = tf.py_function(lambda: v.assign_add(1.0).read_value(), [], tf.float32)
    assert float(out) == pytest.approx(2.0)
    assert v.numpy() == pytest.approx(2.0)


def test_variable_in_numpy_function_arrives_as_numpy():
    v = tf.Variable(np.arange(3, dtype=np.float64))
    seen = []
    tf.numpy_function(lambda a: seen.append(type(a)) or a, [v], tf.float64)
    assert seen == [np.ndarray]


def test_graph_variable_needs_its_initializer():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.float32(1.0), name="counter")
        inc = v.assign_add(1.0)
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="counter"):
            sess.run(v)
        sess.run(init)
        assert [float(sess.run(inc)) for _ in range(3)] == [2.0, 3.0, 4.0]
        assert float(v.eval()) == 4.0
    with tf.compat.v1.Session(graph=g) as other:  # values belong to a session
        with pytest.raises(tf.errors.FailedPreconditionError):
            other.run(v)
        other.run(v.initializer)
        assert float(other.run(v)) == 1.0


def test_graph_variable_gradients_and_py_function_input():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable([1.0, 2.0])
        loss = tf.reduce_sum(w * w)
        (dw,) = tf.gradients(loss, w)
        doubled = tf.py_function(lambda a: a * 2, [w], tf.float32)
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(dw), [2.0, 4.0])
        np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])


def test_variable_in_a_session_block_is_a_graph_variable():
    with tf.compat.v1.Session() as sess:
        v = tf.Variable(5)
        sess.run(tf.compat.v1.global_variables_initializer())
        assert sess.run(v + 1) == 6


def test_eager_variable_updated_by_a_function_on_every_call():
    v = tf.Variable(0.0)

    @tf.function
    def step(x):
        v.assign_add(x)
        return v.read_value()

    assert float(step(tf.constant(1.0))) == 1.0
    assert float(step(tf.constant(2.0))) == 3.0
    assert v.numpy() == 3.0


def test_returning_a_variable_from_py_function_is_refused_like_tf():
    with pytest.raises(tf.errors.UnknownError, match="Attempting to return a variable"):
        tf.py_function(lambda: tf.Variable(0.0), [], tf.float32)
    g = tf.Graph()
    with g.as_default():
        y = tf.py_function(lambda: tf.Variable(0.0), [], tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(tf.errors.UnknownError, match="read_value"):
            sess.run(y)
