"""TF catalogue, sections C, D and E: how return values are converted.

C (TF#17-TF#25): ``py_func``/``numpy_function`` in a graph -- count then dtype,
never cast.  D (TF#26-TF#28, TF#30 outer tensors): ``py_function`` -- converted
to ``Tout`` like ``convert_to_tensor``.  E (TF#32): eager ``numpy_function`` and
``py_func`` -- ``Tout`` not checked.

Not ported, and why:
- TF#20/TF#24 ``bfloat16``, ``uint16/32/64``, ``complex64/128``: not dtypes of
  this engine (SPEC §2 lists float16/32/64, int8/16/32/64, uint8, bool, string).
- TF#20 TF's dtype spellings (``double``/``float``): SPEC uses ours
  (``float64``/``float32``).
- TF#23 the oldest TF revision's ``UnimplementedError``: newer TF (and SPEC) use
  ``InternalError``.
- TF#25 ``set_shape``: not in SPEC §2.
- TF#29, TF#30 (variable bullets): Variables are out of scope.
- TF#31 composite/ragged tensors: out of scope.
- TF#50 "fetched value does not share memory with the returned array": SPEC
  allows outputs to share memory (no defensive copies).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import pyfunc_debug as tf


NUMPY_WRAPPERS = [
    pytest.param(lambda f, i, t, **k: tf.compat.v1.py_func(f, i, t, **k),
                 id="compat.v1.py_func"),
    pytest.param(lambda f, i, t, **k: tf.numpy_function(f, i, t, **k), id="numpy_function"),
    pytest.param(lambda f, i, t, **k: tf.compat.v1.py_func(f, i, t, stateful=False, **k),
                 id="py_func_stateless"),
]


def _session(g):
    return tf.compat.v1.Session(graph=g)


def _run_graph(wrapper, func, tout, name="probe", inp=()):
    """Build ``wrapper(func, inp, tout)`` in a fresh graph and run it once."""
    g = tf.Graph()
    with g.as_default():
        y = wrapper(func, list(inp), tout, name=name)
    with _session(g) as sess:
        return sess.run(y)


def _run_py_function(func, tout, mode, name="probe"):
    """``py_function`` with no inputs, in a Session ("graph") or eagerly."""
    if mode == "graph":
        g = tf.Graph()
        with g.as_default():
            y = tf.py_function(func, [], tout, name=name)
        with _session(g) as sess:
            return sess.run(y)
    out = tf.py_function(func, [], tout, name=name)
    if isinstance(out, list):
        return [o.numpy() for o in out]
    return out if out is None else out.numpy()


def _assert_names_op(err, name="probe"):
    assert name in str(err), f"op name {name!r} missing from: {err}"


# ================================================================ C (TF#17-25)

@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf17_list_or_tuple_gives_one_output_per_element(wrapper):
    out = _run_graph(wrapper, lambda: (np.float32(1), np.array([2, 3], np.int64)),
                     [tf.float32, tf.int64])
    assert out[0] == 1.0
    np.testing.assert_array_equal(out[1], [2, 3])
    out = _run_graph(wrapper, lambda: [np.float32(1), np.float32(2)], [tf.float32, tf.float32])
    assert [float(v) for v in out] == [1.0, 2.0]


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf17_bytes_is_one_scalar_string_output(wrapper):
    out = _run_graph(wrapper, lambda: b"abc", tf.string)
    assert out == b"abc" and type(out) is bytes


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
@pytest.mark.parametrize("ret, n_out, n_ret", [
    (lambda: (np.float32(1), np.float32(2)), 3, 2),
    (lambda: [np.float32(1)] * 3, 2, 3),
], ids=["tuple2_for_3", "list3_for_2"])
def test_tf18_wrong_count_raises_invalid_argument(wrapper, ret, n_out, n_ret):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        _run_graph(wrapper, ret, [tf.float32] * n_out)
    assert re.search(rf"returns {n_ret} values, but expects to see {n_out} values", str(ei.value))
    _assert_names_op(ei.value)
    assert ei.value.op is not None and ei.value.op.name == "probe"


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf19_python_list_with_single_tout_is_split(wrapper):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"returns 2 values, but expects to see 1 values"):
        _run_graph(wrapper, lambda: [1.0, 2.0], tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"returns 2 values, but expects to see 1 values"):
        _run_graph(wrapper, lambda: ["ab", "c"], tf.string)
    out = _run_graph(wrapper, lambda: [[1.0, 2.0]], tf.float64)
    np.testing.assert_array_equal(out, np.array([1.0, 2.0]))
    assert out.dtype == np.float64


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
@pytest.mark.parametrize("ret, tout, got, want", [
    (lambda: np.array([1.0, 2.0]), tf.float32, "float64", "float32"),
    (lambda: 1.5, tf.float32, "float64", "float32"),
    (lambda: 1, tf.int32, "int64", "int32"),
    (lambda: "abc", tf.float32, "string", "float32"),
    (lambda: np.float32(1), tf.string, "float32", "string"),
    (lambda: np.float32(1), tf.float64, "float32", "float64"),
], ids=["f64_arr_for_f32", "pyfloat_for_f32", "pyint_for_i32", "str_for_f32",
        "f32_for_string", "f32_for_f64"])
def test_tf20_wrong_dtype_is_never_cast(wrapper, ret, tout, got, want):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        _run_graph(wrapper, ret, tout)
    assert re.search(rf"0-th value returned by .* is {got}, but expects {want}",
                     str(ei.value)), str(ei.value)
    _assert_names_op(ei.value)
    # SPEC §2: "plus a hint on how to fix it"
    assert re.search(r"hint|Tout", str(ei.value), re.IGNORECASE)


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf20_dtype_error_names_the_output_index(wrapper):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        _run_graph(wrapper, lambda: (np.float32(1), np.float64(2)), [tf.float32, tf.float32])
    assert re.search(r"1-th value returned by .* is float64, but expects float32", str(ei.value))


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
@pytest.mark.parametrize("ret, tout, np_type", [
    (lambda: np.int32(1), tf.int32, np.int32),
    (lambda: 1.5, tf.float64, np.float64),
    (lambda: 7, tf.int64, np.int64),
    (lambda: True, tf.bool, np.bool_),
], ids=["np_int32", "pyfloat_f64", "pyint_i64", "pybool"])
def test_tf20_matching_values_are_accepted(wrapper, ret, tout, np_type):
    out = _run_graph(wrapper, ret, tout)
    assert type(out) is np_type
    assert out == ret()


def test_tf20_error_is_raised_per_run_and_names_op_in_tf_function():
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        return tf.numpy_function(lambda a: a.astype(np.float64), [inp], tf.float32,
                                 name="widen")

    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        fx(tf.constant(1.0))
    assert re.search(r"0-th value returned by .* is float64, but expects float32", str(ei.value))
    assert "widen" in str(ei.value)


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS[:2])
@pytest.mark.parametrize("ret", [lambda: None, lambda: np.array(None), lambda: []],
                         ids=["None", "np.array(None)", "empty_list"])
def test_tf21_nothing_returned_with_empty_tout_is_fine(wrapper, ret):
    g = tf.Graph()
    with g.as_default():
        op = wrapper(ret, [], [])
    with _session(g) as sess:
        assert sess.run(op) is None


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
@pytest.mark.parametrize("tout", [tf.float32, [tf.float32]], ids=["single", "list"])
def test_tf21_none_with_one_tout_is_a_count_error(wrapper, tout):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"returns 0 values, but expects to see 1 values"):
        _run_graph(wrapper, lambda: None, tout)


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS[:2])
def test_tf21_value_with_empty_tout_is_a_count_error(wrapper):
    g = tf.Graph()
    with g.as_default():
        op = wrapper(lambda: np.float32(1), [], [], name="probe")
    with _session(g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"returns 1 values, but expects to see 0 values"):
            sess.run(op)


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf21_list_of_none_is_internal_error(wrapper):
    with pytest.raises(tf.errors.InternalError, match=r"Unsupported object type NoneType"):
        _run_graph(wrapper, lambda: [None], [tf.float32])


def test_tf21_stateful_no_return_side_effect_happens():
    state = np.array([1])

    def bump():
        state[0] += 2

    g = tf.Graph()
    with g.as_default():
        op = tf.compat.v1.py_func(bump, [], [])
    with _session(g) as sess:
        assert sess.run(op) is None
    assert state.tolist() == [3]


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf22_unicode_str_becomes_utf8_bytes(wrapper):
    out = _run_graph(wrapper, lambda: "你好 世界", tf.string)
    assert type(out) is bytes
    assert out == b"\xe4\xbd\xa0\xe5\xa5\xbd \xe4\xb8\x96\xe7\x95\x8c"


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
@pytest.mark.parametrize("ret, want", [
    (lambda: np.array(["ab", "c"]), [b"ab", b"c"]),
    (lambda: np.array([b"a", b"bcd"]), [b"a", b"bcd"]),
    (lambda: np.array(["this\0", "is\0\0", "a\0", "test\0\0"], dtype=np.str_),
     [b"this", b"is", b"a", b"test"]),
    (lambda: np.array([b"a", "b"], dtype=object), [b"a", b"b"]),
], ids=["U_array", "S_array_not_padded", "nul_terminated", "mixed_object"])
def test_tf22_string_arrays_become_object_arrays_of_bytes(wrapper, ret, want):
    out = _run_graph(wrapper, ret, tf.string)
    assert isinstance(out, np.ndarray) and out.dtype == object
    assert out.tolist() == want
    assert all(type(v) is bytes for v in out)


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
@pytest.mark.parametrize("ret, pattern", [
    (lambda: {"a": 1}, r"Unsupported object type dict"),
    (lambda: (i for i in range(2)), r"Unsupported object type generator"),
    (lambda: np.array([1, 2], dtype=object), r"Unsupported object type int"),
], ids=["dict", "generator", "object_ints"])
def test_tf23_unsupported_return_types_are_internal_errors(wrapper, ret, pattern):
    with pytest.raises(tf.errors.InternalError, match=pattern) as ei:
        _run_graph(wrapper, ret, tf.float32)
    _assert_names_op(ei.value)


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf23_structured_dtype_is_internal_error(wrapper):
    def ret():
        return np.zeros(2, dtype=[("a", np.int32), ("b", np.float32)])

    with pytest.raises(tf.errors.InternalError, match=r"Unsupported numpy data type"):
        _run_graph(wrapper, ret, tf.float32)


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16",
                                   "int32", "int64", "uint8", "bool"])
def test_tf24_numeric_dtypes_round_trip(wrapper, dtype):
    tdt = getattr(tf, dtype)
    value = np.array([1, 0, 1], dtype=dtype)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tdt)
        y = wrapper(lambda a: a[::-1].copy(), [x], tdt, name="probe")
    with _session(g) as sess:
        out = sess.run(y, feed_dict={x: value})
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, value[::-1])
    assert y.dtype == tdt and tdt.as_numpy_dtype == np.dtype(dtype).type


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf24_fortran_and_non_contiguous_layouts_keep_values(wrapper):
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    fortran = np.asfortranarray(base)
    strided = base[:, ::2]
    out = _run_graph(wrapper, lambda: (fortran, strided), [tf.float32, tf.float32])
    np.testing.assert_array_equal(out[0], base)
    np.testing.assert_array_equal(out[1], base[:, ::2])


def test_tf24_returning_an_eager_tensor_from_graph_numpy_function_works():
    out = _run_graph(lambda f, i, t, **k: tf.numpy_function(f, i, t, **k),
                     lambda: tf.constant([1.0, 2.0]), tf.float32)
    np.testing.assert_array_equal(out, np.array([1.0, 2.0], np.float32))


@pytest.mark.parametrize("wrapper", NUMPY_WRAPPERS)
def test_tf24_fetches_are_numpy_scalars_for_rank0_and_arrays_otherwise(wrapper):
    out = _run_graph(wrapper, lambda: (np.float32(1), np.zeros((2, 2), np.float32)),
                     [tf.float32, tf.float32])
    assert type(out[0]) is np.float32
    assert type(out[1]) is np.ndarray and out[1].shape == (2, 2)


def _unknown_rank(shape) -> bool:
    if shape is None:
        return True
    for attr in ("rank", "ndims"):
        if hasattr(shape, attr):
            return getattr(shape, attr) is None
    return str(shape) == "<unknown>"


def test_tf25_static_output_shape_is_unknown_even_for_known_inputs():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[2])
        a = tf.compat.v1.py_func(lambda v: v, [x], tf.float32)
        b = tf.numpy_function(lambda v: v, [x], tf.float32)
        c = tf.py_function(lambda v: v, [x], tf.float32)
    assert not _unknown_rank(x.shape)
    assert all(_unknown_rank(t.shape) for t in (a, b, c))
    with _session(g) as sess:
        out = sess.run(a, feed_dict={x: [1.0, 2.0]})
    assert out.shape == (2,)


# ================================================================ D (TF#26-30)

MODES = ["graph", "eager"]


@pytest.mark.parametrize("mode", MODES)
def test_tf26_py_function_casts_numpy_and_python_values_to_tout(mode):
    out = _run_py_function(lambda: np.array([1.0, 2.0]), tf.float32, mode)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1.0, 2.0])
    out = _run_py_function(lambda: 1, tf.int32, mode)
    assert out == 1 and np.asarray(out).dtype == np.int32
    out = _run_py_function(lambda: 1, tf.float32, mode)
    assert out == 1.0 and np.asarray(out).dtype == np.float32


@pytest.mark.parametrize("mode", MODES)
def test_tf26_py_function_refuses_to_cast_an_eager_tensor(mode):
    def f():
        return tf.constant(1.0, dtype=tf.float64)

    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        _run_py_function(f, tf.float32, mode)
    msg = str(ei.value)
    assert "ValueError" in msg and "float32" in msg and "float64" in msg
    assert isinstance(ei.value.__cause__, ValueError)


@pytest.mark.parametrize("mode", MODES)
def test_tf26_py_function_refuses_lossy_float_to_int(mode):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        _run_py_function(lambda: 1.5, tf.int32, mode)
    msg = str(ei.value)
    assert "TypeError" in msg and "1.5" in msg and "int32" in msg


@pytest.mark.parametrize("mode", MODES)
def test_tf27_py_function_drops_extra_values(mode):
    out = _run_py_function(lambda: (1.0, 2.0, 3.0), [tf.float32, tf.float32], mode)
    assert [float(v) for v in out] == [1.0, 2.0]
    out = _run_py_function(lambda: [1.0, 2.0], tf.float32, mode)
    assert np.asarray(out).shape == () and float(out) == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_tf27_py_function_too_few_values_is_a_count_error(mode):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"returns 1 values, but expects to see 2 values"):
        _run_py_function(lambda: (1.0,), [tf.float32, tf.float32], mode)


def test_tf28_py_function_none_with_empty_tout_is_fine():
    g = tf.Graph()
    with g.as_default():
        op = tf.py_function(lambda: None, [], [])
    with _session(g) as sess:
        assert sess.run(op) is None
    assert tf.py_function(lambda: None, [], []) == []


@pytest.mark.parametrize("mode", MODES)
def test_tf28_py_function_value_with_empty_tout_is_unknown_error(mode):
    if mode == "graph":
        g = tf.Graph()
        with g.as_default():
            op = tf.py_function(lambda: 1.0, [], [])
        with _session(g) as sess:
            with pytest.raises(tf.errors.UnknownError):
                sess.run(op)
    else:
        with pytest.raises(tf.errors.UnknownError):
            tf.py_function(lambda: 1.0, [], [])


@pytest.mark.parametrize("mode", MODES)
def test_tf28_py_function_none_with_one_tout_is_a_count_error(mode):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"returns 0 values, but expects to see 1 values"):
        _run_py_function(lambda: None, tf.float32, mode)


@pytest.mark.parametrize("mode", MODES)
def test_tf28_py_function_list_of_none_is_invalid_argument(mode):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        _run_py_function(lambda: [None], [tf.float32], mode)
    assert "None" in str(ei.value)


def test_tf30_outer_graph_tensor_inside_py_function_is_rejected():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(lambda a: a + c, [x], tf.float32)
    with _session(g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(y, feed_dict={x: 1.0})


# ====================================================================== E (TF#32)

EAGER_NUMPY_WRAPPERS = [
    pytest.param(lambda f, i, t: tf.numpy_function(f, i, t), id="numpy_function"),
    pytest.param(lambda f, i, t: tf.compat.v1.py_func(f, i, t), id="compat.v1.py_func"),
]


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
def test_tf32_eager_does_not_cast_to_tout(wrapper):
    out = wrapper(lambda a: a.astype(np.float64), [tf.constant(1.0)], tf.float32)
    assert out.dtype == tf.float64
    assert out.numpy() == 1.0


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
def test_tf32_eager_python_int_result_is_int32(wrapper):
    out = wrapper(lambda: 1, [], tf.int32)
    assert out.dtype == tf.int32 and out.numpy() == 1


def test_tf32_eager_decorator_on_python_ints_gives_int64():
    @tf.numpy_function(Tout=tf.int32)
    def plus(a, b):
        return a + b

    out = plus(1, 2)
    assert out.dtype == tf.int64 and out.numpy() == 3


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
def test_tf32_eager_count_not_checked(wrapper):
    out = wrapper(lambda: (1.0, 2.0, 3.0), [], [tf.float32, tf.float32])
    assert isinstance(out, list) and [o.numpy() for o in out] == [1.0, 2.0, 3.0]
    single = wrapper(lambda: np.float32(4.0), [], [])
    assert single.numpy() == 4.0


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
def test_tf32_eager_nested_structures_are_flattened(wrapper):
    out = wrapper(lambda: {"a": 1}, [], tf.int32)
    assert out.dtype == tf.int32 and out.numpy() == 1
    out = wrapper(lambda: (1, (2, 3)), [], [tf.int32])
    assert [o.numpy() for o in out] == [1, 2, 3]
    assert wrapper(lambda: None, [], tf.int32) is None


@pytest.mark.parametrize("wrapper", EAGER_NUMPY_WRAPPERS)
@pytest.mark.parametrize("exc", [ValueError("blah"), StopIteration()],
                         ids=["ValueError", "StopIteration"])
def test_tf32_eager_exceptions_propagate_unchanged(wrapper, exc):
    def f():
        raise exc

    with pytest.raises(type(exc)) as ei:
        wrapper(f, [], tf.float32)
    assert ei.value is exc
    assert not isinstance(ei.value, tf.errors.OpError)
