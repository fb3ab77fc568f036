"""TF catalogue, sections 0 (seed examples) and A (building the op, API surface).

Ported: TF#1, TF#2 (forward values; gradients are in test_tf_catalogue_gradients),
TF#3, TF#4, TF#5, TF#6, TF#7, TF#8, TF#9, TF#10, TF#11, TF#12.

Not ported, and why:
- TF#4 op attributes (``Tin``, ``Tout``, ``token``, ``is_async`` via ``get_attr``)
  and the process-wide ``pyfunc_N`` counter: SPEC §2 exposes no attribute API.
- TF#3 static output shape of the *concrete function*: SPEC only promises
  ``get_concrete_function(...).graph``; the op-level unknown shape is tested (TF#25).
- TF#10 Variables in ``inp``: Variables are out of scope (no ``pfd.Variable``).
- TF#11 the exact ``OperatorNotAllowedInGraphError`` text; only "it is a TypeError".
"""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as tf


# --------------------------------------------------------------------- helpers

def _unknown_rank(shape) -> bool:
    """True when a static shape has unknown rank (TF prints ``<unknown>``)."""
    if shape is None:
        return True
    for attr in ("rank", "ndims"):
        if hasattr(shape, attr):
            return getattr(shape, attr) is None
    return str(shape) == "<unknown>"


def _session(g):
    return tf.compat.v1.Session(graph=g)


# ------------------------------------------------------------- 0. seed examples

def test_tf1_seed_a_py_func_sinh_returns_numpy_float32_scalar():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.compat.v1.py_func(np.sinh, [x], tf.float32)
    assert y.op.type == "PyFunc"
    assert y.name == "PyFunc:0"
    assert _unknown_rank(y.shape)
    with _session(g) as sess:
        out = sess.run(y, feed_dict={x: 1.0})
    assert type(out) is np.float32
    assert out == pytest.approx(1.1752012, rel=1e-6)


def _log_huber(x, m):
    if tf.abs(x) <= m:
        return x ** 2
    else:
        return m ** 2 * (1 - 2 * tf.math.log(m) + tf.math.log(x ** 2))


@pytest.mark.parametrize("xv, expected", [(1.0, 1.0), (3.0, 7.243721)])
def test_tf2_seed_b_log_huber_forward_both_branches(xv, expected):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        m = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(func=_log_huber, inp=[x, m], Tout=tf.float32)
    assert y.op.type == "EagerPyFunc"
    assert _unknown_rank(y.shape)
    with _session(g) as sess:
        out = sess.run(y, feed_dict={x: xv, m: 2.0})
    assert out == pytest.approx(expected, rel=1e-5)
    assert np.asarray(out).dtype == np.float32


def _my_numpy_func(x):
    return np.sinh(x)


def _seed_c():
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def tf_function(inp):
        y = tf.numpy_function(_my_numpy_func, [inp], tf.float32)
        return y * y
    return tf_function


def test_tf3_seed_c_numpy_function_in_tf_function_scalar():
    f = _seed_c()
    out = f(tf.constant(1.0))
    assert hasattr(out, "numpy")
    assert out.dtype == tf.float32
    assert out.numpy() == pytest.approx(1.3810978, rel=1e-6)
    assert np.asarray(out).shape == ()


def test_tf3_seed_c_repr_is_tf_like():
    out = _seed_c()(tf.constant(1.0))
    assert "Tensor: shape=(), dtype=float32, numpy=1.38" in repr(out)


def test_tf3_seed_c_python_float_argument():
    out = _seed_c()(1.0)
    assert out.numpy() == pytest.approx(1.3810978, rel=1e-6)


def test_tf3_seed_c_vector_argument():
    out = _seed_c()(tf.constant([0.0, 1.0]))
    np.testing.assert_allclose(out.numpy(), [0.0, 1.3810978], rtol=1e-6)
    assert out.numpy().dtype == np.float32


def test_tf3_seed_c_int32_argument_fails_binding_with_type_error():
    f = _seed_c()
    with pytest.raises(TypeError):
        f(tf.constant(1, dtype=tf.int32))


# ------------------------------------------------------------ A. op types (TF#4)

def test_tf4_op_types_and_stateful_flags():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        a = tf.compat.v1.py_func(np.sinh, [x], tf.float32)
        b = tf.compat.v1.py_func(np.sinh, [x], tf.float32, stateful=False)
        c = tf.numpy_function(np.sinh, [x], tf.float32)
        d = tf.numpy_function(np.sinh, [x], tf.float32, stateful=False)
        e = tf.py_function(lambda t: t, [x], tf.float32)
    assert (a.op.type, a.op.stateful) == ("PyFunc", True)
    assert (b.op.type, b.op.stateful) == ("PyFuncStateless", False)
    assert (c.op.type, c.op.stateful) == ("PyFunc", True)
    assert (d.op.type, d.op.stateful) == ("PyFuncStateless", False)
    assert (e.op.type, e.op.stateful) == ("EagerPyFunc", True)


def test_tf4_aliases_build_the_same_op_types():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        a = tf.compat.v1.numpy_function(np.sinh, [x], tf.float32)
        b = tf.compat.v1.py_function(lambda t: t, [x], tf.float32)
        c = tf.contrib.eager.py_func(lambda t: t, [x], tf.float32)
    assert a.op.type == "PyFunc"
    assert b.op.type == "EagerPyFunc"
    assert c.op.type == "EagerPyFunc"


def test_tf4_default_names_are_uniquified_per_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        p0 = tf.compat.v1.py_func(np.sinh, [x], tf.float32)
        p1 = tf.compat.v1.py_func(np.sinh, [x], tf.float32)
        p2 = tf.numpy_function(np.sinh, [x], tf.float32)
        e0 = tf.py_function(lambda t: t, [x], tf.float32)
        s0 = tf.compat.v1.py_func(np.sinh, [x], tf.float32, stateful=False)
    assert [t.op.name for t in (p0, p1, p2, e0, s0)] == [
        "PyFunc", "PyFunc_1", "PyFunc_2", "EagerPyFunc", "PyFuncStateless"]
    # A second graph starts counting again: names are per graph.
    g2 = tf.Graph()
    with g2.as_default():
        x2 = tf.compat.v1.placeholder(tf.float32)
        q = tf.compat.v1.py_func(np.sinh, [x2], tf.float32)
    assert q.op.name == "PyFunc"


def test_tf4_explicit_names_and_output_names():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.compat.v1.py_func(np.sinh, [x], tf.float32, name="my_pf")
        two = tf.numpy_function(lambda a: (a, a), [x], [tf.float32, tf.float32], name="two")
        again = tf.compat.v1.py_func(np.sinh, [x], tf.float32, name="my_pf")
    assert y.name == "my_pf:0"
    assert [t.name for t in two] == ["two:0", "two:1"]
    assert again.op.name == "my_pf_1"


def test_tf4_op_graph_links_and_lookup():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = tf.compat.v1.py_func(np.sinh, [x], tf.float32, name="my_pf")
    op = y.op
    assert op.graph is g and y.graph is g
    assert len(op.inputs) == 1 and op.inputs[0] is x
    assert len(op.outputs) == 1 and op.outputs[0] is y
    assert g.get_operation_by_name("my_pf") is op
    assert g.get_tensor_by_name("my_pf:0").op is op
    assert op in g.get_operations()
    assert y.dtype == tf.float32


def test_tf4_name_scope_prefixes_py_func_names():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        with tf.name_scope("outer"):
            y = tf.compat.v1.py_func(np.sinh, [x], tf.float32, name="f")
            z = tf.py_function(lambda t: t, [x], tf.float32)
    assert y.op.name == "outer/f"
    assert z.op.name == "outer/EagerPyFunc"


def test_top_level_placeholder_alias_builds_in_default_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape=[2], name="xin")
        y = tf.compat.v1.py_func(lambda a: a + np.float32(1), [x], tf.float32)
    assert x.graph is g and x.op.type == "Placeholder" and x.name == "xin:0"
    with _session(g) as sess:
        np.testing.assert_array_equal(sess.run(y, feed_dict={x: [1.0, 2.0]}), [2.0, 3.0])


def test_fetch_by_tensor_name():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        tf.compat.v1.py_func(lambda a: a * np.float32(2), [x], tf.float32, name="dbl")
    with _session(g) as sess:
        assert sess.run("dbl:0", feed_dict={x: 2.0}) == pytest.approx(4.0)


# ------------------------------------------------------ TF#5 when func runs

def test_tf5_func_never_runs_while_building_and_runs_on_every_session_run():
    calls = []

    def f(a):
        calls.append("np")
        return a

    def ef(a):
        calls.append("eager")
        return a

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y1 = tf.compat.v1.py_func(f, [x], tf.float32)
        y2 = tf.numpy_function(f, [x], tf.float32)
        y3 = tf.py_function(ef, [x], tf.float32)
    assert calls == []
    with _session(g) as sess:
        for i in range(3):
            sess.run([y1, y2, y3], feed_dict={x: float(i)})
    assert calls.count("np") == 6
    assert calls.count("eager") == 3


def test_tf5_tf_function_traces_once_and_runs_func_every_call():
    log = []

    def np_func(a):
        log.append("run")
        return a

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        log.append("trace")
        return tf.numpy_function(np_func, [inp], tf.float32)

    for v in (1.0, 2.0, 3.0):
        out = fx(tf.constant(v))
        assert out.numpy() == pytest.approx(v)
    assert log == ["trace", "run", "run", "run"]


def test_tf5_py_function_in_tf_function_not_called_while_tracing():
    log = []

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        log.append("trace")
        return tf.py_function(lambda a: log.append("run") or a, [inp], tf.float32)

    for v in (1.0, 2.0, 3.0):
        fx(tf.constant(v))
    assert log == ["trace", "run", "run", "run"]


def test_tf5_get_concrete_function_exposes_graph_without_running_func():
    calls = []

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        return tf.numpy_function(lambda a: calls.append(1) or a, [inp], tf.float32)

    cf = fx.get_concrete_function()
    types = [op.type for op in cf.graph.get_operations()]
    assert "PyFunc" in types
    assert calls == []


# ------------------------------------------------- TF#6 non-callable func

@pytest.mark.parametrize("wrapper", [
    pytest.param(lambda f, i, t: tf.compat.v1.py_func(f, i, t), id="py_func"),
    pytest.param(lambda f, i, t: tf.numpy_function(f, i, t), id="numpy_function"),
    pytest.param(lambda f, i, t: tf.py_function(f, i, t), id="py_function"),
])
def test_tf6_non_callable_func_in_graph_raises_value_error(wrapper):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        with pytest.raises(ValueError, match=r"Expected func to be callable"):
            wrapper(3, [x], tf.float32)


def test_tf6_non_callable_func_eager_py_function_raises_value_error():
    with pytest.raises(ValueError, match=r"Expected func to be callable.*3"):
        tf.py_function(3, [tf.constant(1.0)], tf.float32)


# ------------------------------------------------------- TF#7 forms of Tout

def test_tf7_single_dtype_gives_tensor_list_and_tuple_give_list():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        single = tf.numpy_function(lambda a: a, [x], tf.float32)
        as_list = tf.numpy_function(lambda a: a, [x], [tf.float32])
        as_tuple = tf.numpy_function(lambda a: (a, a), [x], (tf.float32, tf.float32))
        eager_tuple = tf.py_function(lambda a: a, [x], (tf.float32,))
    assert not isinstance(single, (list, tuple))
    assert single.dtype == tf.float32
    assert type(as_list) is list and len(as_list) == 1
    assert type(as_tuple) is list and len(as_tuple) == 2
    assert type(eager_tuple) is list and len(eager_tuple) == 1
    with _session(g) as sess:
        s, l, t = sess.run([single, as_list, as_tuple], feed_dict={x: 2.0})
    assert s == pytest.approx(2.0)
    assert isinstance(l, list) and l[0] == pytest.approx(2.0)
    assert len(t) == 2


@pytest.mark.parametrize("tout", ["float64", np.float64, np.dtype("float64")],
                         ids=["str", "np.float64", "np.dtype"])
def test_tf7_tout_accepts_dtype_like_values(tout):
    g = tf.Graph()
    with g.as_default():
        y = tf.compat.v1.py_func(lambda: np.float64(1.5), [], tout)
    assert y.dtype == tf.float64
    with _session(g) as sess:
        assert sess.run(y) == pytest.approx(1.5)


@pytest.mark.parametrize("tout", [{}, None], ids=["dict", "None"])
def test_tf7_invalid_tout_raises_type_error(tout):
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(TypeError):
            tf.compat.v1.py_func(lambda: 1.0, [], tout)
        with pytest.raises(TypeError):
            tf.py_function(lambda: 1.0, [], tout)


def test_tf7_as_dtype_accepts_numpy_and_own_dtypes():
    assert tf.as_dtype(np.float32) == tf.float32
    assert tf.as_dtype(tf.int64) == tf.int64
    assert tf.float64.name == "float64"
    assert tf.float32.as_numpy_dtype == np.float32


# --------------------------------------------------------------- TF#8 Tout=[]

@pytest.mark.parametrize("wrapper", [
    pytest.param(lambda f, i: tf.compat.v1.py_func(f, i, []), id="py_func"),
    pytest.param(lambda f, i: tf.numpy_function(f, i, []), id="numpy_function"),
    pytest.param(lambda f, i: tf.py_function(f, i, []), id="py_function"),
])
def test_tf8_empty_tout_returns_operation_and_run_gives_none(wrapper):
    seen = []

    def side_effect(a):
        seen.append(float(np.asarray(a)))

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        op = wrapper(side_effect, [x])
    assert type(op).__name__ == "Operation"
    assert op.type in ("PyFunc", "EagerPyFunc")
    assert list(op.outputs) == []
    with _session(g) as sess:
        assert sess.run(op, feed_dict={x: 5.0}) is None
    assert seen == [5.0]


def test_tf8_stateless_py_func_with_empty_tout_returns_empty_list():
    g = tf.Graph()
    with g.as_default():
        f = tf.compat.v1.py_func(lambda a: None, [tf.constant(3, dtype=tf.int64)], [],
                                 stateful=False)
    assert f == []
    with _session(g) as sess:
        assert sess.run(f) == []


def test_tf8_tf_function_returning_the_operation_raises_type_error():
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        return tf.numpy_function(lambda a: None, [inp], [])

    with pytest.raises(TypeError, match=r"found return value of type Operation"):
        fx(tf.constant(1.0))


def test_tf8_eager_py_function_with_empty_tout_returns_empty_list():
    seen = []
    out = tf.py_function(lambda a: seen.append(1), [tf.constant(1.0)], [])
    assert out == []
    assert seen == [1]


# ---------------------------------------------- TF#9 missing / misplaced args

def test_tf9_missing_tout_numpy_function():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        with pytest.raises(TypeError, match=r"Missing required argument: 'Tout'"):
            tf.numpy_function(lambda a: a, [x])


def test_tf9_missing_tout_py_function():
    with pytest.raises(TypeError, match=r"Missing required argument: 'Tout'"):
        tf.py_function(lambda a: a, [tf.constant(1.0)])


def test_tf9_missing_inp():
    with pytest.raises(TypeError, match=r"Missing argument `inp`"):
        tf.numpy_function(lambda a: a, Tout=tf.float32)
    with pytest.raises(TypeError, match=r"Missing argument `inp`"):
        tf.py_function(lambda a: a, Tout=tf.float32)


def test_tf9_decorator_with_inp_is_rejected():
    with pytest.raises(TypeError, match=r"Don't set the `inp` argument"):
        tf.numpy_function(inp=[tf.constant(1.0)], Tout=tf.float32)
    with pytest.raises(TypeError, match=r"Don't set the `inp` argument"):
        tf.py_function(inp=[tf.constant(1.0)], Tout=tf.float32)


def test_tf9_positional_tout_in_decorator_form_is_rejected():
    with pytest.raises(TypeError, match=r"Missing required argument: 'Tout'"):
        tf.py_function(tf.int32)
    with pytest.raises(TypeError, match=r"Missing required argument: 'Tout'"):
        tf.numpy_function(tf.int32)


def test_tf9_numpy_function_decorator_graph_and_eager():
    calls = []

    @tf.numpy_function(Tout=tf.float32)
    def add_one(a):
        calls.append(type(a))
        return a + np.float32(1)

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = add_one(x)
    assert y.op.type == "PyFunc"
    assert calls == []
    with _session(g) as sess:
        assert sess.run(y, feed_dict={x: 1.0}) == pytest.approx(2.0)
    eager = add_one(tf.constant(2.0))
    assert eager.numpy() == pytest.approx(3.0)


def test_tf9_py_function_decorator_graph_and_eager():
    @tf.py_function(Tout=tf.float32)
    def square(a):
        return a * a

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = square(x)
    assert y.op.type == "EagerPyFunc"
    with _session(g) as sess:
        assert sess.run(y, feed_dict={x: 3.0}) == pytest.approx(9.0)
    assert square(tf.constant(4.0)).numpy() == pytest.approx(16.0)


# -------------------------------------------------- TF#10 conversion of inp

def test_tf10_python_values_in_inp_are_converted_like_convert_to_tensor():
    received = []

    def record(*args):
        received.extend(args)
        return np.int32(0)

    g = tf.Graph()
    with g.as_default():
        y = tf.numpy_function(record, [1, 2.0, True, "s", np.float64(1.5)], tf.int32)
    dtypes = [t.dtype for t in y.op.inputs]
    assert dtypes == [tf.int32, tf.float32, tf.bool, tf.string, tf.float64]
    with _session(g) as sess:
        sess.run(y)
    assert [type(v) for v in received] == [np.int32, np.float32, np.bool_, bytes, np.float64]
    assert received[3] == b"s"


@pytest.mark.parametrize("inp", [[1, 2], (1, 2)], ids=["list", "tuple"])
def test_tf10_numpy_function_plus_on_python_ints_is_int32(inp):
    g = tf.Graph()
    with g.as_default():
        y = tf.numpy_function(lambda a, b: a + b, inp, tf.int32)
    with _session(g) as sess:
        out = sess.run(y)
    assert out == 3
    assert np.asarray(out).dtype == np.int32


@pytest.mark.parametrize("bad", [object(), [[1], [2, 3]]], ids=["object", "ragged"])
def test_tf10_unconvertible_inp_raises_type_error(bad):
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(TypeError):
            tf.numpy_function(lambda a: a, [bad], tf.int32)


def test_tf10_py_function_nested_list_is_one_input():
    shapes = []

    def f(a):
        shapes.append(tuple(a.shape))
        return a

    g = tf.Graph()
    with g.as_default():
        y = tf.py_function(f, [[1.0, 2.0]], tf.float32)
    assert len(y.op.inputs) == 1
    with _session(g) as sess:
        np.testing.assert_allclose(sess.run(y), [1.0, 2.0])
    assert shapes == [(2,)]


# ------------------------------------------------------ TF#11 bare Tensor inp

def test_tf11_bare_symbolic_tensor_as_inp_raises_type_error():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[2])
        with pytest.raises(TypeError):
            tf.numpy_function(lambda a: a, x, tf.float32)


def test_tf11_bare_eager_tensor_is_iterated_by_py_function():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"takes 1 positional argument but 2 were given"):
        tf.py_function(lambda a: a, tf.constant([1.0, 2.0]), tf.float32)


# ---------------------------------------------------- TF#12 arity mismatch

@pytest.mark.parametrize("wrapper", [
    pytest.param(lambda f, i, t: tf.compat.v1.py_func(f, i, t), id="py_func"),
    pytest.param(lambda f, i, t: tf.numpy_function(f, i, t), id="numpy_function"),
    pytest.param(lambda f, i, t: tf.py_function(f, i, t), id="py_function"),
])
def test_tf12_arity_mismatch_detected_at_run_time(wrapper):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = wrapper(lambda a: a, [x, x], tf.float32)  # building must not fail
    with _session(g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as ei:
            sess.run(y, feed_dict={x: 1.0})
    assert "TypeError: " in str(ei.value)
    assert "takes 1 positional argument but 2 were given" in str(ei.value)
    assert isinstance(ei.value.__cause__, TypeError)
