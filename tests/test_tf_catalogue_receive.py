"""TF catalogue, section B: what the wrapped ``func`` receives (TF#13-TF#16).

Not ported, and why:
- TF#13 ``owndata=False``: an implementation detail of TF's buffer aliasing; the
  user-visible part (no copies of fed arrays) is tested in test_tf_catalogue_memory.
- TF#15 ``str(a.dtype) == "<dtype: 'string'>"``: SPEC uses our own dtype names;
  ``tf.executing_eagerly()`` is not in SPEC §2 (we check that ops inside run eagerly).
- TF#16 thread names (``'Dummy-N'``) and "GIL per call": not user-relied.
  Concurrency of independent py_funcs is tested with ``inter_op_threads=2``
  (SPEC: independent branches may run on the inter-op pool).
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import pyfunc_debug as tf


NUMPY_WRAPPERS = [
    pytest.param(lambda f, i, t: tf.compat.v1.py_func(f, i, t), id="compat.v1.py_func"),
    pytest.param(lambda f, i, t: tf.numpy_function(f, i, t), id="numpy_function"),
    pytest.param(lambda f, i, t: tf.compat.v1.numpy_function(f, i, t),
                 id="compat.v1.numpy_function"),
]


def _session(g, **kw):
    return tf.compat.v1.Session(graph=g, **kw)


def _is_eager_tensor(v) -> bool:
    return (hasattr(v, "numpy") and not isinstance(v, np.ndarray)
            and "EagerTensor" in type(v).__name__)


# ------------------------------------------------- TF#13 graph: numpy values

@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf13_rank1_inputs_arrive_as_writeable_ndarrays_of_matching_dtype(wrapper):
    got = []

    def f(a, b):
        got.append((type(a), a.dtype, a.flags.writeable, type(b), b.dtype))
        return a

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        n = tf.compat.v1.placeholder(tf.int32)
        y = wrapper(f, [x, n], tf.float32)
    with _session(g) as sess:
        # TF#13: a Python list fed to a float32 placeholder arrives as float32.
        out = sess.run(y, feed_dict={x: [1.0, 2.0], n: [1, 2]})
    np.testing.assert_allclose(out, [1.0, 2.0])
    assert got == [(np.ndarray, np.dtype(np.float32), True, np.ndarray, np.dtype(np.int32))]


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf13_rank0_inputs_arrive_as_numpy_scalars(wrapper):
    got = []

    def f(a, b, c):
        got.extend([a, b, c])
        return a

    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.placeholder(tf.float32)
        b = tf.compat.v1.placeholder(tf.int64)
        c = tf.compat.v1.placeholder(tf.bool)
        y = wrapper(f, [a, b, c], tf.float32)
    with _session(g) as sess:
        sess.run(y, feed_dict={a: 1.5, b: 7, c: True})
    assert [type(v) for v in got] == [np.float32, np.int64, np.bool_]
    assert not isinstance(got[0], np.ndarray)
    assert got[0] == np.float32(1.5) and got[1] == 7 and bool(got[2]) is True


def test_tf13_strings_arrive_as_bytes_and_object_arrays_of_bytes():
    got = []

    def f(s, v):
        got.extend([s, v])
        return np.int32(0)

    g = tf.Graph()
    with g.as_default():
        s = tf.constant("héllo")
        v = tf.compat.v1.placeholder(tf.string)
        y = tf.numpy_function(f, [s, v], tf.int32)
    assert s.dtype == tf.string
    with _session(g) as sess:
        sess.run(y, feed_dict={v: ["ab", "c"]})
    scalar, vec = got
    assert type(scalar) is bytes
    assert scalar == "héllo".encode("utf-8") == b"h\xc3\xa9llo"
    assert isinstance(vec, np.ndarray) and vec.dtype == object
    assert list(vec) == [b"ab", b"c"]
    assert all(type(e) is bytes for e in vec)


def test_tf13_fed_rank0_string_arrives_as_utf8_bytes():
    got = []
    g = tf.Graph()
    with g.as_default():
        s = tf.compat.v1.placeholder(tf.string)
        y = tf.compat.v1.py_func(lambda v: got.append(v) or v, [s], tf.string)
    with _session(g) as sess:
        out = sess.run(y, feed_dict={s: "héllo"})
    assert got == [b"h\xc3\xa9llo"] and type(got[0]) is bytes
    assert out == b"h\xc3\xa9llo"


def test_tf13_inside_tf_function_numpy_function_receives_numpy():
    got = []

    def f(a):
        got.append(type(a))
        return a

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        return tf.numpy_function(f, [inp], tf.float32)

    fx(tf.constant(1.0))
    fx(tf.constant([1.0, 2.0]))
    assert got == [np.float32, np.ndarray]


# ------------------------------------------- TF#14 eager numpy_function/py_func

EAGER_NUMPY_WRAPPERS = [
    pytest.param(lambda f, i, t: tf.numpy_function(f, i, t), id="numpy_function"),
    pytest.param(lambda f, i, t: tf.compat.v1.py_func(f, i, t), id="compat.v1.py_func"),
]


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
def test_tf14_eager_calls_func_immediately_with_ndarrays(wrapper):
    got = []

    def f(a, b):
        got.append((type(a), a.shape, a.dtype, a.flags.writeable, type(b), b.shape))
        return a

    out = wrapper(f, [tf.constant(2.0), tf.constant([1.0, 2.0])], tf.float32)
    assert len(got) == 1  # ran at once, no session
    assert got[0] == (np.ndarray, (), np.dtype(np.float32), True, np.ndarray, (2,))
    assert out.numpy() == pytest.approx(2.0)


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
def test_tf14_eager_python_values_are_not_converted_to_tensors_first(wrapper):
    got = []

    def f(a, s):
        got.extend([a, s])
        return a

    wrapper(f, [3, "s"], tf.int64)
    a, s = got
    assert isinstance(a, np.ndarray) and a.dtype == np.int64 and a.shape == ()
    assert isinstance(s, np.ndarray) and s.dtype == np.dtype("<U1")


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
def test_tf14_eager_inputs_are_copies(wrapper):
    t = tf.constant([1.0, 2.0, 3.0])

    def f(a):
        a += 100
        return a

    out = wrapper(f, [t], tf.float32)
    np.testing.assert_allclose(out.numpy(), [101.0, 102.0, 103.0])
    np.testing.assert_allclose(t.numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
def test_tf14_eager_numpy_inputs_are_copies_too(wrapper):
    arr = np.array([1.0, 2.0], dtype=np.float32)

    def f(a):
        a += 100
        return a

    wrapper(f, [arr], tf.float32)
    np.testing.assert_array_equal(arr, [1.0, 2.0])


# ----------------------------------------------------------- TF#15 py_function

def test_tf15_py_function_receives_eager_tensors_in_session():
    got = []

    def f(a):
        got.append(a)
        sq = tf.square(a)  # pfd ops inside run eagerly
        got.append(sq)
        return sq

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(f, [x], tf.float32)
    with _session(g) as sess:
        assert sess.run(y, feed_dict={x: 3.0}) == pytest.approx(9.0)
    a, sq = got
    assert _is_eager_tensor(a) and a.dtype == tf.float32
    assert a.numpy() == pytest.approx(3.0)
    assert _is_eager_tensor(sq) and sq.numpy() == pytest.approx(9.0)


def test_tf15_py_function_ops_run_eagerly_even_when_run_inside_as_default():
    got = []

    def f(a):
        r = a + tf.constant(1.0)
        got.append(r)
        return r

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(f, [x], tf.float32)
        n_ops = len(g.get_operations())
        # Running while the graph is still the default must not add nodes.
        with _session(g) as sess:
            assert sess.run(y, feed_dict={x: 1.0}) == pytest.approx(2.0)
        assert len(g.get_operations()) == n_ops
    assert _is_eager_tensor(got[0])


def test_tf15_py_function_in_tf_function_receives_eager_tensors_at_call_time():
    got = []

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        return tf.py_function(lambda a: got.append(a) or a * 2.0, [inp], tf.float32)

    assert got == []
    assert fx(tf.constant(2.0)).numpy() == pytest.approx(4.0)
    assert len(got) == 1 and _is_eager_tensor(got[0])


def test_tf15_py_function_eager_receives_eager_tensors():
    got = []
    out = tf.py_function(lambda a: got.append(a) or a * 2, [tf.constant(2.0)], tf.float32)
    assert _is_eager_tensor(got[0])
    assert _is_eager_tensor(out) and out.numpy() == pytest.approx(4.0)


@pytest.mark.parametrize("mode", ["graph", "eager"])
def test_tf15_py_function_converts_python_inputs(mode):
    got = []

    def f(a, s, d):
        got.extend([a.dtype, s.dtype, d.dtype])
        return a

    inp = [3, "s", np.float64(1.5)]
    if mode == "graph":
        g = tf.Graph()
        with g.as_default():
            y = tf.py_function(f, inp, tf.int32)
        with _session(g) as sess:
            assert sess.run(y) == 3
    else:
        assert tf.py_function(f, inp, tf.int32).numpy() == 3
    assert got == [tf.int32, tf.string, tf.float64]


def test_tf15_py_function_numpy_is_a_copy():
    def f(a):
        v = a.numpy()
        v += 100
        return a

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(f, [x], tf.float32)
    with _session(g) as sess:
        np.testing.assert_allclose(sess.run(y, feed_dict={x: [1.0, 2.0]}), [1.0, 2.0])
    t = tf.constant([1.0, 2.0])
    np.testing.assert_allclose(tf.py_function(f, [t], tf.float32).numpy(), [1.0, 2.0])
    np.testing.assert_allclose(t.numpy(), [1.0, 2.0])


# ---------------------------------------------------------------- TF#16 threads

def test_tf16_two_py_funcs_in_one_run_can_run_at_the_same_time():
    # Both functions must be inside at once to pass the barrier; a sequential
    # executor breaks it after the timeout (an error, not a hang).
    barrier = threading.Barrier(2, timeout=5)

    def meet(a):
        barrier.wait()
        return a

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y1 = tf.numpy_function(meet, [x], tf.float32)
        y2 = tf.numpy_function(meet, [x + 1.0], tf.float32)
    with _session(g, inter_op_threads=2) as sess:
        r1, r2 = sess.run([y1, y2], feed_dict={x: 1.0})
    assert (r1, r2) == (1.0, 2.0)


def test_tf16_thread_pool_gives_identical_results():
    def work(a, k):
        return (a * k).astype(np.float32)

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[4])
        branches = [tf.numpy_function(work, [x, np.float32(k)], tf.float32) for k in range(8)]
        total = branches[0]
        for b in branches[1:]:
            total = total + b
    feed = {x: np.arange(4, dtype=np.float32)}
    with _session(g) as s1:
        serial = s1.run([total] + branches, feed_dict=feed)
    with _session(g, inter_op_threads=4) as s4:
        for _ in range(3):
            par = s4.run([total] + branches, feed_dict=feed)
            for a, b in zip(serial, par):
                np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(serial[0], np.arange(4) * 28.0)
