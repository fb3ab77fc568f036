"""Session.run: fetch structures, feeds, pruning, plan cache, parallel branches, graph basics."""
from __future__ import annotations

import collections
import os
import threading
import time

import numpy as np
import pytest

import pyfunc_debug as tf


def test_nested_fetches_keep_their_structure():
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32, name="x")
        a, b = p + 1, p * 2
        op = tf.no_op()
    Pair = collections.namedtuple("Pair", "first second")
    with tf.Session(graph=g) as sess:
        out = sess.run({"a": a, "nested": [b, (a, "x:0")], "pair": Pair(a, b), "op": op},
                       feed_dict={p: 3.0})
    assert out == {"a": 4.0, "nested": [6.0, (4.0, 3.0)], "pair": Pair(4.0, 6.0), "op": None}
    assert type(out["nested"][1]) is tuple and type(out["pair"]) is Pair


def test_rank0_results_are_numpy_scalars_and_arrays_stay_arrays():
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        s = tf.reduce_sum(p)
    with tf.Session(graph=g) as sess:
        total, same = sess.run([s, p], {p: [1.0, 2.0]})
    assert type(total) is np.float32 and total == 3.0
    assert isinstance(same, np.ndarray) and same.dtype == np.float32


def test_feeds_are_converted_to_the_placeholder_dtype():
    seen = []
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32, shape=[None, 2])
        y = tf.numpy_function(lambda x: seen.append(x) or x, [p], tf.float32)
    with tf.Session(graph=g) as sess:
        sess.run(y, {p: [[1, 2], [3, 4]]})
    assert seen[0].dtype == np.float32 and seen[0].shape == (2, 2)


def test_feed_shape_is_checked():
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32, shape=[2], name="pair")
    with tf.Session(graph=g) as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor 'pair:0'"):
            sess.run(p + 1, {p: [1.0, 2.0, 3.0]})
        assert list(sess.run(p + 1, {p: [1.0, 2.0]})) == [2.0, 3.0]


def test_feeding_an_intermediate_tensor_skips_its_producer():
    calls = []
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        mid = tf.numpy_function(lambda x: calls.append(1) or x, [p], tf.float32)
        out = mid * 10
    with tf.Session(graph=g) as sess:
        assert sess.run(out, {mid: np.float32(2.0)}) == 20.0
    assert calls == []


def test_plan_is_compiled_once_per_signature():
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        y = p + 1
    with tf.Session(graph=g) as sess:
        sess.run(y, {p: 1.0})
        sess.run(y, {p: 2.0})
        assert len(sess._plans) == 1
        sess.run([y], {p: 2.0})
        sess.run([y], {p: 3.0})
        assert len(sess._plans) == 2


def test_control_dependencies_order_execution():
    order = []
    g = tf.Graph()
    with g.as_default():
        a = tf.numpy_function(lambda: order.append("a") or np.float32(1), [], tf.float32)
        with tf.control_dependencies([a]):
            b = tf.numpy_function(lambda: order.append("b") or np.float32(2), [], tf.float32)
    with tf.Session(graph=g) as sess:
        assert sess.run(b) == 2.0
    assert order == ["a", "b"]


def test_a_control_input_of_another_graph_is_refused_by_name():
    """As TF: an op of another graph among the control inputs is an error, not an op
    that the graph's sessions would run (or a wrong op at its index)."""
    g1, g2 = tf.Graph(), tf.Graph()
    with g2.as_default():
        other = tf.constant(2.0, name="theirs")
    with g1.as_default():
        a = tf.constant(1.0, name="mine")
        with pytest.raises(ValueError, match="'theirs' is not an element of this graph"):
            with tf.control_dependencies([a.op, other.op]):
                tf.identity(a)
        with pytest.raises(ValueError, match="'theirs' is not an element of this graph"):
            with g1.control_dependencies([other]):
                tf.identity(a)
        with tf.control_dependencies([a.op]):   # the graph is left as it was
            b = tf.identity(a, name="b")
    assert b.op.control_inputs == (a.op,)
    assert tf.Session(graph=g1).run(b) == 1.0


def test_names_are_unique_and_scoped():
    g = tf.Graph()
    with g.as_default():
        ops = [tf.constant(1.0).op for _ in range(3)]
        with tf.name_scope("layer"):
            inner = tf.identity(1.0, name="out")
        with tf.name_scope("layer"):
            inner2 = tf.identity(1.0, name="out")
        named = tf.numpy_function(lambda: (np.float32(1), np.float32(2)), [],
                                  [tf.float32, tf.float32], name="two")
    assert [op.name for op in ops] == ["Const", "Const_1", "Const_2"]
    assert inner.op.name == "layer/out" and inner2.op.name == "layer_1/out"
    assert [t.name for t in named] == ["two:0", "two:1"]
    assert g.get_tensor_by_name("layer/out:0") is inner
    assert g.get_operation_by_name("two") is named[0].op


def test_device_is_recorded():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            y = tf.constant(1.0)
        z = tf.constant(2.0)
    assert y.op.device == "/cpu:0" and z.op.device == ""


def test_an_op_made_by_a_shipped_example_is_created_at_the_examples_line():
    """Installed, the examples are pyfunc_debug/examples/: their frames were skipped as
    ours, and an example's op said it was created in the console script
    (``bin/pyfunc-debug:8``). The demo and the examples are written as users write."""
    from pyfunc_debug.source_text import PACKAGE_DIR
    path = os.path.join(PACKAGE_DIR, "examples", "shipped.py")
    code = compile("import pyfunc_debug as tf\n"
                   "x = tf.compat.v1.placeholder(tf.float32)\n"
                   "y = tf.numpy_function(lambda v: v, [x], tf.float32)\n", path, "exec")
    scope: dict = {}
    with tf.Graph().as_default():
        exec(code, scope)
    assert (scope["y"].op.source.filename, scope["y"].op.source.lineno) == (path, 3)


def test_op_remembers_its_source_line():
    g = tf.Graph()
    with g.as_default():
        y = tf.constant(1.0)  # this line
    assert y.op.source.filename == __file__
    import inspect
    src = inspect.getsource(test_op_remembers_its_source_line).splitlines()
    offset = next(i for i, l in enumerate(src) if "# this line" in l)
    assert y.op.source.lineno == test_op_remembers_its_source_line.__code__.co_firstlineno + offset


def _branching_graph(n_branches, delay):
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        branches = []
        for i in range(n_branches):
            def work(x, i=i):
                time.sleep(delay)
                return (x * (i + 1)).astype(np.float32), np.float32(threading.get_ident() % 1000)
            out, _ = tf.numpy_function(work, [p], [tf.float32, tf.float32], name=f"branch{i}")
            branches.append(out)
        total = branches[0]
        for b in branches[1:]:
            total = total + b
    return g, p, total


def test_inter_op_threads_give_identical_results_and_overlap():
    g, p, total = _branching_graph(4, 0.15)
    feed = {p: np.arange(5, dtype=np.float32)}
    with tf.Session(graph=g) as seq:
        expected = seq.run(total, feed)
    with tf.Session(graph=g, inter_op_threads=4) as par:
        t0 = time.perf_counter()
        got = par.run(total, feed)
        elapsed = time.perf_counter() - t0
    np.testing.assert_array_equal(got, expected)
    # four 0.15 s branches in sequence take 0.6 s; overlapped they cannot take that long
    assert elapsed < 0.55


def test_parallel_error_names_the_op_and_session_stays_usable():
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        ok = tf.numpy_function(lambda x: x, [p], tf.float32, name="ok")
        bad = tf.numpy_function(lambda x: 1 / 0, [p], tf.float32, name="bad")
        both = ok + bad
    with tf.Session(graph=g, inter_op_threads=2) as sess:
        with pytest.raises(tf.errors.UnknownError, match="ZeroDivisionError") as info:
            sess.run(both, {p: 1.0})
        assert info.value.op.name == "bad"
        assert sess.run(ok, {p: 2.0}) == 2.0


def test_graph_def_round_trip_in_process():
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32, shape=[None], name="x")
        y = tf.numpy_function(np.sinh, [p], tf.float32, name="sinh")
        z = tf.reduce_sum(y * tf.constant([1.0, 2.0]), name="z")
    import json
    text = json.dumps(g.as_graph_def())
    g2 = tf.Graph()
    with g2.as_default():
        z2, = tf.import_graph_def(json.loads(text), return_elements=["z:0"], name="copy")
    assert z2.name == "copy/z:0"
    with tf.Session(graph=g2) as sess:
        got = sess.run(z2, {"copy/x:0": [1.0, 1.0]})
    assert got == pytest.approx(3 * np.sinh(1.0), rel=1e-6)
    assert g2.get_operation_by_name("copy/sinh").source.lineno == y.op.source.lineno
