"""SPEC §2a: a Session is a graph context; eager mode switches; default sessions;
the Tensor class hierarchy; argument order; concurrency where TF has it (TF#16);
feed checks.

Where we differ from TF on purpose (README): ``Session(inter_op_threads=1)``
runs strictly in the calling thread, so a blocking put/get pair would wait
there for ever (TF completes it even with one inter-op thread).
"""
from __future__ import annotations

import queue
import threading

import numpy as np
import pytest

import pyfunc_debug as tf


@pytest.fixture
def graph_mode():
    tf.compat.v1.disable_eager_execution()
    yield
    tf.compat.v1.enable_eager_execution()


# ----------------------------------------------------- a session is a graph context

def test_ops_built_inside_a_session_block_become_nodes_of_its_graph():
    with tf.compat.v1.Session() as sess:
        assert not tf.executing_eagerly()
        c = tf.constant(2.0)
        y = c * 3.0
        assert isinstance(y, tf.Tensor) and not isinstance(y, tf.EagerTensor)
        assert y.graph is sess.graph
        assert sess.run(y) == pytest.approx(6.0)
    assert tf.executing_eagerly()


def test_py_func_without_inputs_inside_a_session_is_a_node_the_session_runs():
    with tf.compat.v1.Session() as sess:
        y = tf.compat.v1.py_func(lambda: np.float32(7), [], tf.float32)
        assert y.op.type == "PyFunc"
        assert sess.run(y) == pytest.approx(7.0)


def test_as_default_makes_the_session_and_its_graph_default_without_closing_it():
    g = tf.Graph()
    sess = tf.compat.v1.Session(graph=g)
    with sess.as_default():
        assert tf.compat.v1.get_default_session() is sess
        assert tf.compat.v1.get_default_graph() is g
        y = tf.constant([1, 2]) + 1
    assert tf.compat.v1.get_default_session() is None
    assert list(sess.run(y)) == [2, 3]  # still open


def test_session_built_after_the_graph_keeps_working_as_before():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, ())
        y = tf.compat.v1.py_func(np.sinh, [x], tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        assert sess.run(y, {x: 1.0}) == pytest.approx(np.sinh(1.0))


def test_py_function_body_runs_eagerly_inside_a_session_block():
    seen = []

    def body(a):
        seen.append(tf.executing_eagerly())
        return tf.square(a)  # an eager op: EagerTensor in, EagerTensor out

    with tf.compat.v1.Session() as sess:
        y = tf.py_function(body, [tf.constant(3.0)], tf.float32)
        assert sess.run(y) == pytest.approx(9.0)
    assert seen == [True]


def test_numpy_function_body_may_use_eager_ops_inside_a_session_block():
    def body(a):
        return tf.constant(a * 2).numpy()

    with tf.compat.v1.Session() as sess:
        y = tf.numpy_function(body, [tf.constant(np.float32(4))], tf.float32)
        assert sess.run(y) == pytest.approx(8.0)


# ----------------------------------------------------- eager switches and defaults

def test_disable_eager_execution_makes_building_the_default(graph_mode):
    assert not tf.executing_eagerly()
    c = tf.constant(1.0)
    assert c.graph is tf.compat.v1.get_default_graph()
    with tf.compat.v1.Session() as sess:
        assert sess.run(c + 1) == pytest.approx(2.0)


def test_py_function_bodies_run_eagerly_even_with_eager_execution_disabled(graph_mode):
    y = tf.py_function(lambda a: a + tf.constant(1.0), [tf.constant(1.0)], tf.float32)
    with tf.compat.v1.Session() as sess:
        assert sess.run(y) == pytest.approx(2.0)


def test_get_default_session_is_none_without_one():
    assert tf.compat.v1.get_default_session() is None
    with tf.compat.v1.Session() as sess:
        assert tf.compat.v1.get_default_session() is sess
    assert tf.compat.v1.get_default_session() is None


def test_interactive_session_installs_itself_until_closed():
    sess = tf.compat.v1.InteractiveSession()
    try:
        assert tf.compat.v1.get_default_session() is sess
        assert (tf.constant(2) * 2).eval() == 4
    finally:
        sess.close()
    assert tf.compat.v1.get_default_session() is None


# ----------------------------------------------------- class hierarchy, eval and run

def test_eager_tensor_is_a_tensor():
    t = tf.constant(1.0)
    assert isinstance(t, tf.Tensor)
    assert isinstance(t, tf.EagerTensor)


def test_tensor_eval_and_operation_run_use_the_default_session():
    log = []
    with tf.compat.v1.Session():
        x = tf.compat.v1.placeholder(tf.int32, ())
        y = x * 2
        op = tf.compat.v1.py_func(lambda: log.append(1), [], [])
        assert y.eval(feed_dict={x: 5}) == 10
        op.run()
    assert log == [1]


def test_eval_with_an_explicit_session_and_without_any():
    g = tf.Graph()
    with g.as_default():
        y = tf.constant(3) + 1
    sess = tf.compat.v1.Session(graph=g)
    assert y.eval(session=sess) == 4
    with pytest.raises(ValueError, match="default session"):
        y.eval()


# ----------------------------------------------------- argument order (TF#9)

@pytest.mark.parametrize("api", [tf.py_function, tf.numpy_function])
def test_bare_decorator_reports_missing_tout_first(api):
    with pytest.raises(TypeError, match="Missing required argument: 'Tout'"):
        @api
        def f(x):
            return x


@pytest.mark.parametrize("api", [tf.py_function, tf.numpy_function])
def test_missing_inp_is_still_reported_when_tout_is_given(api):
    with pytest.raises(TypeError, match="Missing argument `inp`"):
        api(lambda x: x, Tout=tf.float32)


# ----------------------------------------------------- concurrency (TF#16)

def _put_get_graph(q):
    g = tf.Graph()
    with g.as_default():
        # made first: a strictly sequential executor would wait here for ever
        got = tf.compat.v1.py_func(lambda: np.int32(q.get(timeout=60)), [], tf.int32, name="get")
        put = tf.compat.v1.py_func(lambda: q.put(42), [], [], name="put")
    return g, got, put


def test_blocking_put_get_pair_completes_on_a_default_session():
    q = queue.Queue()
    g, got, put = _put_get_graph(q)
    with tf.compat.v1.Session(graph=g) as sess:
        value, _ = sess.run([got, put])
    assert value == 42


def test_blocking_put_get_pair_completes_under_a_trace_and_a_debugger():
    q = queue.Queue()
    g, got, put = _put_get_graph(q)
    dbg = tf.debug.Debugger(on_pause=lambda pause: "continue")
    dbg.break_on(op="no-such-op")
    with tf.compat.v1.Session(graph=g) as sess, tf.trace() as tr, dbg:
        value, _ = sess.run([got, put])
    assert value == 42
    ends = {e.op: e.thread for e in tr.events if type(e).__name__ == "OpEnd"}
    assert set(ends) >= {"get", "put"}
    assert all(isinstance(t, int) for t in ends.values())


def test_a_chain_of_wrapped_functions_runs_in_the_calling_thread():
    threads = []

    def f(x):
        threads.append(threading.get_ident())
        return x + np.float32(1)

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, ())
        y = x
        for _ in range(5):
            y = tf.compat.v1.py_func(f, [y], tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        assert sess.run(y, {x: 0.0}) == pytest.approx(5.0)
        plan = next(iter(sess._plans.values()))
    assert not plan.concurrent
    assert set(threads) == {threading.get_ident()}


def test_independent_wrapped_functions_make_a_concurrent_plan_with_identical_results():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (3,))
        a = tf.compat.v1.py_func(np.sort, [x], tf.float32)
        b = tf.compat.v1.py_func(np.cumsum, [x], tf.float32)
        y = a + b
    data = np.array([3, 1, 2], np.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        got = sess.run(y, {x: data})
        assert next(iter(sess._plans.values())).concurrent
    with tf.compat.v1.Session(graph=g, inter_op_threads=1) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: data}), got)
    np.testing.assert_array_equal(got, np.sort(data) + np.cumsum(data))


def test_errors_from_a_concurrent_plan_name_the_op_and_leave_the_session_usable():
    def boom():
        raise ValueError("boom")

    g = tf.Graph()
    with g.as_default():
        bad = tf.compat.v1.py_func(boom, [], tf.float32, name="bad")
        good = tf.compat.v1.py_func(lambda: np.float32(1), [], tf.float32, name="good")
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad"):
            sess.run([bad, good])
        assert sess.run(good) == pytest.approx(1.0)


# ----------------------------------------------------- feeds

def _placeholder_graph(dtype, shape=()):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype, shape, name="x")
        y = tf.identity(x)
    return g, x, y


def test_feed_that_does_not_fit_the_dtype_names_the_tensor():
    g, x, y = _placeholder_graph(tf.int8)
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises((TypeError, ValueError), match="x:0") as info:
            sess.run(y, {x: 1000})
        assert not isinstance(info.value, OverflowError)
        assert sess.run(y, {x: 100}) == 100


def test_unknown_feed_name_is_a_type_error_naming_it():
    g, x, y = _placeholder_graph(tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(TypeError, match="nope:0"):
            sess.run(y, {"nope:0": 1.0})
        with pytest.raises(TypeError, match="x:7"):
            sess.run(y, {"x:7": 1.0})


@pytest.mark.parametrize("value", [object(), "text", {"a": 1}, None, [1, [2]]])
def test_wrong_feed_type_names_the_tensor(value):
    g, x, y = _placeholder_graph(tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises((TypeError, ValueError), match="x:0"):
            sess.run(y, {x: value})


def test_number_fed_to_a_string_placeholder_names_the_tensor():
    g, x, y = _placeholder_graph(tf.string)
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(TypeError, match="x:0"):
            sess.run(y, {x: 1.5})
        assert sess.run(y, {x: "ok"}) == b"ok"


def test_feed_dict_that_is_not_a_dict_is_a_type_error():
    g, x, y = _placeholder_graph(tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(TypeError, match="feed_dict"):
            sess.run(y, [(x, 1.0)])


def _mixed_graph(q):
    """Cheap ops feeding and reading wrapped functions that wait on each other."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (), name="x")
        got = tf.compat.v1.py_func(lambda: np.float32(q.get(timeout=60)), [], tf.float32,
                                   name="get")
        doubled = x * 2.0
        put = tf.compat.v1.py_func(lambda v: q.put(v), [doubled], [], name="put")
        out = tf.identity(got + 1.0, name="out")
    return g, x, out, put


@pytest.mark.parametrize("observe", ["plain", "trace", "debugger"])
def test_cheap_ops_around_waiting_wrapped_functions(observe):
    q = queue.Queue()
    g, x, out, put = _mixed_graph(q)
    dbg = tf.debug.Debugger(on_pause=lambda pause: "continue")
    dbg.break_on(op="out")
    with tf.compat.v1.Session(graph=g) as sess:
        if observe == "trace":
            with tf.trace():
                value, _ = sess.run([out, put], {x: 3.0})
        elif observe == "debugger":
            with dbg:
                value, _ = sess.run([out, put], {x: 3.0})
            assert [h.op for h in dbg.hits] == ["out"]
        else:
            value, _ = sess.run([out, put], {x: 3.0})
        assert value == pytest.approx(7.0)
        value, _ = sess.run([out, put], {x: 0.5})  # the plan's schedule is reused
        assert value == pytest.approx(2.0)


def test_a_failing_cheap_op_in_a_concurrent_plan_releases_the_helpers():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.int32, (None,), name="x")
        bad = tf.reshape(x, [2, 2], name="bad_reshape")  # fails for 3 elements
        a = tf.compat.v1.py_func(lambda v: v, [bad], tf.int32, name="after_bad")
        b = tf.compat.v1.py_func(lambda: np.int32(1), [], tf.int32, name="other")
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(tf.errors.OpError, match="bad_reshape"):
            sess.run([a, b], {x: [1, 2, 3]})
        got, one = sess.run([a, b], {x: [1, 2, 3, 4]})
    np.testing.assert_array_equal(got, [[1, 2], [3, 4]])
    assert one == 1


def test_session_block_runs_tf_style_cached_session_code():
    """The shape of TF's own py_func tests: ops built inside ``with Session():``,
    evaluated with ``eval``/``op.run`` on the default session."""
    q = queue.Queue(1)

    def hand_over():
        q.put(42)
        q.join()  # until the taker has called task_done
        return np.int64(42)

    def take():
        v = q.get(block=True)
        q.task_done()
        return np.int64(v)

    with tf.compat.v1.Session() as sess:
        a = tf.constant(1 + 1j, dtype=tf.complex64)
        b = tf.constant(2 - 2j, dtype=tf.complex64)
        diff = tf.compat.v1.py_func(lambda x, y: x - y, [a, b], tf.complex64)
        assert diff.eval() == -1 + 3j
        spectrum = tf.compat.v1.py_func(lambda x: np.fft.rfft(x).astype(np.complex64),
                                        [tf.constant([1., 2., 3., 4.])], tf.complex64)
        np.testing.assert_allclose(spectrum.eval(), np.fft.rfft([1., 2., 3., 4.]), rtol=1e-6)
        both = tf.compat.v1.py_func(lambda x, y: x and y,
                                    [tf.constant(True), tf.constant(False)], tf.bool)
        assert not both.eval()
        pair = [tf.compat.v1.py_func(hand_over, [], tf.int64),
                tf.compat.v1.py_func(take, [], tf.int64)]
        assert list(sess.run(pair)) == [42, 42]
        kept = np.array([1.0, 2.0], np.float32)
        (alias,) = tf.compat.v1.py_func(lambda: kept, [], [tf.float32])
        (alias + tf.constant([2.0, 3.0])).op.run()
        np.testing.assert_array_equal(kept, [1.0, 2.0])
