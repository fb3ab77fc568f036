"""SPEC §2a: re-entering ``Session.run`` from wrapped functions (folded or not),
event subscribers and pause frontends never deadlocks; nested errors stay small
(linear in the depth); endless recursion ends in an error naming RecursionError."""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as tf


def _recursive_graph(stateful=True):
    """y(n) = n == 0 ? raise : y(n - 1), through Session.run inside the wrapped function."""
    box = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.int32, ())

        def f(n):
            if n == 0:
                raise ValueError("bottom reached")
            return box["sess"].run(box["y"], {x: n - 1})

        y = tf.compat.v1.py_func(f, [x], tf.int32, stateful=stateful)
    box["sess"] = tf.compat.v1.Session(graph=g)
    box["y"] = y
    return box["sess"], x, y


def _message_size(depth):
    sess, x, y = _recursive_graph()
    with pytest.raises(tf.errors.OpError) as info:
        sess.run(y, {x: depth})
    assert "bottom reached" in str(info.value)
    return len(str(info.value))


def test_nested_errors_grow_linearly_not_geometrically():
    s5, s10, s20 = _message_size(5), _message_size(10), _message_size(20)
    step_a, step_b = (s10 - s5) / 5, (s20 - s10) / 10
    assert step_b < 1.5 * step_a   # per-level growth does not itself grow
    assert s20 < 100_000


def test_session_is_usable_after_a_nested_failure():
    sess, x, y = _recursive_graph()
    with pytest.raises(tf.errors.OpError):
        sess.run(y, {x: 3})
    g = sess.graph
    with g.as_default():
        z = tf.constant(5) + 1
    assert sess.run(z) == 6


def test_endless_recursion_through_session_run_names_recursion_error():
    box = {}
    g = tf.Graph()
    with g.as_default():
        y = tf.compat.v1.py_func(lambda: box["s"].run(box["y"]), [], tf.int32)
    box["s"], box["y"] = tf.compat.v1.Session(graph=g), y
    with pytest.raises((tf.errors.OpError, RecursionError)) as info:
        box["s"].run(y)
    assert "RecursionError" in (type(info.value).__name__ + str(info.value))
    assert len(str(info.value)) < 5_000_000


def test_folded_stateless_op_may_run_another_fetch_of_its_own_session():
    box = {}
    g = tf.Graph()
    with g.as_default():
        other = tf.constant(np.int32(20)) + 1

        def f(a):
            return np.int32(a + box["sess"].run(other))

        folded = tf.compat.v1.py_func(f, [tf.constant(np.int32(1))], tf.int32, stateful=False)
    box["sess"] = tf.compat.v1.Session(graph=g)
    assert box["sess"].run(folded) == 22
    assert box["sess"].run(folded) == 22


def test_folded_stateless_op_reentering_its_own_plan_ends_not_deadlocks():
    box = {}
    g = tf.Graph()
    with g.as_default():
        folded = tf.compat.v1.py_func(lambda a: box["sess"].run(box["y"]),
                                      [tf.constant(np.int32(1))], tf.int32, stateful=False)
    box["sess"], box["y"] = tf.compat.v1.Session(graph=g), folded
    with pytest.raises((tf.errors.OpError, RecursionError)) as info:
        box["sess"].run(folded)
    assert "RecursionError" in (type(info.value).__name__ + str(info.value))


def test_subscriber_may_run_the_session():
    g = tf.Graph()
    with g.as_default():
        y = tf.compat.v1.py_func(lambda: np.float32(1), [], tf.float32, name="one")
        z = tf.constant(2.0) * 3.0
    sess = tf.compat.v1.Session(graph=g)
    seen = []

    def subscriber(event):
        if type(event).__name__ == "OpEnd" and event.op == "one" and not seen:
            seen.append(sess.run(z))

    handle = tf.events.subscribe(subscriber)
    try:
        assert sess.run(y) == pytest.approx(1.0)
    finally:
        handle.close()
    assert seen == [pytest.approx(6.0)]


def test_pause_frontend_may_run_the_session_and_pause_again():
    g = tf.Graph()
    with g.as_default():
        y = tf.compat.v1.py_func(lambda: np.float32(1), [], tf.float32, name="target")
    sess = tf.compat.v1.Session(graph=g)
    pauses = []

    def frontend(pause):
        pauses.append(pause.op_name)
        if len(pauses) == 1:
            pauses.append(float(sess.run(y)))  # pauses at "target" again, inside
        return "continue"

    dbg = tf.debug.Debugger(on_pause=frontend)
    dbg.break_on(op="target")
    with dbg:
        assert sess.run(y) == pytest.approx(1.0)
    assert pauses == ["target", "target", 1.0]


def test_wrapped_function_may_run_a_concurrent_plan_of_the_same_session():
    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.py_func(lambda: np.float32(1), [], tf.float32)
        b = tf.compat.v1.py_func(lambda: np.float32(2), [], tf.float32)
        pair = a + b  # two independent wrapped functions: a concurrent plan
        outer = tf.compat.v1.py_func(lambda: np.float32(sess.run(pair) * 10), [], tf.float32)
    sess = tf.compat.v1.Session(graph=g)
    assert sess.run(outer) == pytest.approx(30.0)
