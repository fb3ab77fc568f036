"""TF catalogue, sections I and J: memory sharing and copies (TF#49, TF#50),
the function registry and lifetime (TF#51), and GraphDef round trips.

Not ported, and why:
- TF#49 ref/resource variables being changed in place: Variables are out of scope.
- TF#49 "the caller's EagerTensor passed to a tf.function was changed": SPEC
  only says inputs *may* share memory; the fed-placeholder case (the documented
  example, and SPEC's "no defensive copies on the hot path") is tested.
- TF#50 "the fetched value does not share memory with the returned array":
  SPEC §2 allows outputs to share memory.
- TF#51 registry size (a private ``WeakValueDictionary``): we test the
  observable lifetime through a weak reference instead.
"""
from __future__ import annotations

import gc
import json
import weakref

import numpy as np
import pytest

import pyfunc_debug as tf


def _session(g):
    return tf.compat.v1.Session(graph=g)


# ------------------------------------------------------------------- TF#49

def test_tf49_fed_array_is_not_copied_and_in_place_changes_are_visible():
    feed = np.array([1, 2, 3], dtype=np.int64)
    shared = []

    def bump(a):
        shared.append(np.shares_memory(a, feed))
        a += 100
        return a.copy()

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.int64, shape=[3])
        y = tf.numpy_function(bump, [x], tf.int64)
    with _session(g) as sess:
        out = sess.run(y, feed_dict={x: feed})
    np.testing.assert_array_equal(out, [101, 102, 103])
    assert shared == [True]
    np.testing.assert_array_equal(feed, [101, 102, 103])


def test_tf49_downstream_op_ordered_after_the_mutation_sees_it():
    feed = np.array([1, 2, 3], dtype=np.int64)

    def bump(a):
        a += 100

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.int64, shape=[3])
        op = tf.numpy_function(bump, [x], [])
        with tf.control_dependencies([op]):
            z = tf.identity(x)
    with _session(g) as sess:
        out = sess.run(z, feed_dict={x: feed})
    np.testing.assert_array_equal(out, [101, 102, 103])


def test_tf49_constant_is_not_corrupted_across_runs_by_in_place_changes():
    def bump(a):
        a += 100
        return a.copy()

    g = tf.Graph()
    with g.as_default():
        c = tf.constant(np.array([1, 2, 3], dtype=np.int64))
        y = tf.compat.v1.py_func(bump, [c], tf.int64)
    with _session(g) as sess:
        first = sess.run(y)
        second = sess.run(y)
        const_after = sess.run(c)
    np.testing.assert_array_equal(first, [101, 102, 103])
    np.testing.assert_array_equal(second, [101, 102, 103])
    np.testing.assert_array_equal(const_after, [1, 2, 3])


@pytest.mark.parametrize("wrapper", [
    pytest.param(lambda f, i: tf.numpy_function(f, i, tf.float32), id="numpy_function"),
    pytest.param(lambda f, i: tf.py_function(lambda t: f(t.numpy()), i, tf.float32),
                 id="py_function"),
])
def test_tf49_eager_wrappers_work_on_copies(wrapper):
    t = tf.constant([1.0, 2.0, 3.0])

    def bump(a):
        a += 100
        return a

    out = wrapper(bump, [t])
    np.testing.assert_allclose(np.asarray(out), [101.0, 102.0, 103.0])
    np.testing.assert_allclose(t.numpy(), [1.0, 2.0, 3.0])


# ------------------------------------------------------------------- TF#50

def test_tf50_downstream_ops_never_write_into_the_returned_array():
    held = np.array([1.0, 2.0], dtype=np.float32)

    g = tf.Graph()
    with g.as_default():
        y = tf.compat.v1.py_func(lambda: held, [], tf.float32)
        z = tf.maximum(y + tf.constant([10.0, 20.0]), 0.0)
        w = -y * 3.0
    with _session(g) as sess:
        for _ in range(2):
            zv, wv = sess.run([z, w])
    np.testing.assert_array_equal(zv, [11.0, 22.0])
    np.testing.assert_array_equal(wv, [-3.0, -6.0])
    np.testing.assert_array_equal(held, [1.0, 2.0])


def test_tf50_returning_a_view_of_the_input_works():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[2, 3])
        y = tf.numpy_function(lambda a: a[0], [x], tf.float32)
        z = tf.numpy_function(lambda a: a[:, 1], [x], tf.float32)
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    with _session(g) as sess:
        yv, zv = sess.run([y, z], feed_dict={x: value})
    np.testing.assert_array_equal(yv, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(zv, [1.0, 4.0])


# ------------------------------------------------------------------- TF#51

def _build_graph_with_closure(calls):
    def lost_func(a):
        calls.append(1)
        return a * np.float32(2)

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        tf.numpy_function(lost_func, [x], tf.float32, name="lost")
    return g, weakref.ref(lost_func), lost_func.__qualname__


def test_tf51_graph_keeps_the_function_alive_and_releases_it_when_deleted():
    calls = []
    g, ref, _ = _build_graph_with_closure(calls)
    gc.collect()
    assert ref() is not None  # only the graph holds it
    with _session(g) as sess:
        out = sess.run(g.get_tensor_by_name("lost:0"),
                       feed_dict={g.get_tensor_by_name("x:0"): 3.0})
    assert out == pytest.approx(6.0) and calls == [1]
    del sess, g
    gc.collect()
    assert ref() is None, "the function outlived its graph (leak)"


def _import_into_new_graph(graph_def, **kw):
    g2 = tf.Graph()
    with g2.as_default():
        result = tf.import_graph_def(graph_def, **kw)
    if isinstance(result, tf.Graph):
        g2 = result
    ops = {op.type: op for op in g2.get_operations()}
    return g2, ops


def _run_imported(g2, ops):
    pyfunc = ops["PyFunc"]
    x = ops["Placeholder"].outputs[0]
    with _session(g2) as sess:
        return sess.run(pyfunc.outputs[0], feed_dict={x: 3.0})


def test_tf51_graph_def_is_json_and_imports_while_the_function_is_alive():
    calls = []
    g, _, _ = _build_graph_with_closure(calls)
    d = g.as_graph_def()
    d = json.loads(json.dumps(d))  # JSON-able
    g2, ops = _import_into_new_graph(d)
    assert "PyFunc" in ops and "Placeholder" in ops
    assert _run_imported(g2, ops) == pytest.approx(6.0)
    assert calls == [1]


def test_tf51_running_an_import_after_the_function_is_gone_names_op_and_function():
    calls = []
    g, ref, qualname = _build_graph_with_closure(calls)
    d = json.loads(json.dumps(g.as_graph_def()))
    del g
    gc.collect()
    assert ref() is None
    g2, ops = _import_into_new_graph(d)  # importing itself must not fail
    with pytest.raises(tf.errors.OpError) as ei:
        _run_imported(g2, ops)
    msg = str(ei.value)
    assert "lost" in msg
    assert qualname in msg
    assert calls == []


def module_level_triple(a):
    return a * np.float32(3)


def test_spec_import_graph_def_resolve_functions_rebinds_module_level_functions():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        tf.numpy_function(module_level_triple, [x], tf.float32, name="triple")
    d = json.loads(json.dumps(g.as_graph_def()))
    del g
    gc.collect()
    g2, ops = _import_into_new_graph(d, resolve_functions=True)
    assert _run_imported(g2, ops) == pytest.approx(9.0)
