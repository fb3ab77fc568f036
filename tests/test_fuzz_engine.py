"""Property-based checks of the engine (SPEC §2a): random dtypes, shapes, Tout,
returns, feeds and arithmetic graphs against numpy, and mutated graph definitions.

The property everywhere: a run either gives values of exactly the declared
dtype, or fails with a pfd.errors class, TypeError or ValueError whose message
names the op or tensor — never numpy's or Python's internal KeyError,
AttributeError, IndexError or OverflowError — and the session stays usable.
Example counts come from the Hypothesis profile (``PFD_HYPOTHESIS_PROFILE``:
"ci" by default, "long" for a thorough run; see tests/conftest.py).
"""
from __future__ import annotations

import copy
import json
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pyfunc_debug as tf
from fuzz_strategies import dtypes, feed_values, json_values, numeric_dtypes, shapes, values

pytestmark = pytest.mark.filterwarnings("ignore")

_INTERNAL = (KeyError, AttributeError, IndexError, OverflowError)


def assert_clean_error(err, names):
    """``err`` is an allowed kind and its message names one of ``names``."""
    assert isinstance(err, (tf.errors.OpError, TypeError, ValueError)), repr(err)
    assert not isinstance(err, _INTERNAL), repr(err)
    msg = str(err)
    assert any(n in msg for n in names), (names, msg[:500])


def assert_usable(sess):
    with sess.graph.as_default():
        ok = tf.constant(np.float32(1)) + np.float32(1)
    assert sess.run(ok) == 2.0


def dtype_of(value):
    """The dtype a fetched value has (a rank-0 string comes back as ``bytes``)."""
    return np.dtype(object) if isinstance(value, bytes) else np.asarray(value).dtype


def same_values(got, want, dtype):
    if dtype.is_string:  # a rank-0 string is fetched as ``bytes``
        assert isinstance(got, (bytes, np.ndarray)), type(got)
        got, want = np.asarray(got, dtype=object), np.asarray(want, dtype=object)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if dtype.is_string:
        assert got.tolist() == want.tolist()
    elif dtype.is_floating or dtype.is_complex:
        tol = 2e-2 if dtype.np_dtype.itemsize <= 4 and not dtype.is_complex or \
            dtype.name == "complex64" else 1e-9
        if dtype.name == "float64":
            tol = 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------- round trips

WRAPPERS = {
    "py_func": lambda f, i, t: tf.compat.v1.py_func(f, i, t, name="wrapped"),
    "numpy_function": lambda f, i, t: tf.numpy_function(f, i, t, name="wrapped"),
    "py_function": lambda f, i, t: tf.py_function(f, i, t, name="wrapped"),
}


@given(data=st.data(), dtype=dtypes, shape=shapes, known=st.booleans(),
       wrapper=st.sampled_from(sorted(WRAPPERS)))
def test_identity_round_trip_keeps_values_and_dtypes(data, dtype, shape, known, wrapper):
    value = data.draw(values(dtype, shape))
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype, shape if known else None, name="x")
        y = WRAPPERS[wrapper](lambda v: v, [x], dtype)
    with tf.compat.v1.Session(graph=g) as sess:
        out = sess.run(y, {x: value})
    want = np.asarray(value, dtype=dtype.np_dtype)
    same_values(out, want, dtype)


# ----------------------------------------------------- random Tout and returns

returns = st.one_of(
    dtypes.flatmap(lambda d: shapes.flatmap(lambda s: values(d, s))),
    st.none(), st.integers(-2**40, 2**40), st.floats(), st.text(max_size=3),
    st.binary(max_size=3), st.lists(st.floats(width=32), max_size=3), json_values,
    st.tuples(st.floats(width=32), st.integers(0, 3)), st.builds(object),
)


@given(tout=st.one_of(dtypes, st.lists(dtypes, max_size=3)), ret=returns,
       wrapper=st.sampled_from(sorted(WRAPPERS)))
def test_random_returns_are_converted_or_refused_cleanly(tout, ret, wrapper):
    g = tf.Graph()
    with g.as_default():
        y = WRAPPERS[wrapper](lambda: ret, [], tout)
    with tf.compat.v1.Session(graph=g) as sess:
        try:
            out = sess.run(y)
        except Exception as e:  # noqa: BLE001 - the property is about the kind
            assert_clean_error(e, ["wrapped"])
        else:
            touts = tout if isinstance(tout, list) else [tout]
            outs = out if isinstance(tout, list) else [out]
            if out is None:
                outs = []
            assert len(outs) == len(touts)
            for o, t in zip(outs, touts):
                assert dtype_of(o) == (object if t.is_string else t.np_dtype)
        assert_usable(sess)


# ----------------------------------------------------- returns inside pfd.function, as TF

_E = tf.errors
# (returned, Tout, what TensorFlow 2.21 gives: the fetched values, or (error class, text)),
# observed with compat.v1.numpy_function inside tf.function, Tout a list, a string input
TF_RETURNS = {
    "bytes keeps its NUL": (b"a\0", [tf.string], [b"a\x00"]),
    "np.bytes_ keeps its NUL": (np.bytes_(b"a\0"), [tf.string], [b"a\x00"]),
    "list of bytes keeps NULs": ([[b"a\0", b"b"]], [tf.string], [[b"a\x00", b"b"]]),
    "str is UTF-8": ("\xe9", [tf.string], [b"\xc3\xa9"]),
    "str loses a trailing NUL": ("a\0", [tf.string], [b"a"]),
    "a U array copy is UTF-8": (np.array(["\xe9", "cd"])[::-1], [tf.string],
                                [[b"cd", b"\xc3\xa9"]]),
    "a U array as it is: ASCII only": (np.array(["\xe9"]), [tf.string],
                                       (_E.InvalidArgumentError, "UnicodeEncodeError")),
    "a 0-d U array: ASCII only": ([np.array("\xe9")], [tf.string],
                                  (_E.InvalidArgumentError, "UnicodeEncodeError")),
    "an ASCII U array": (np.array(["ab", "c"]), [tf.string], [[b"ab", b"c"]]),
    "bytes for a float": (b"x", [tf.float32], (_E.InvalidArgumentError, "is string")),
    "longdouble": (np.longdouble(1.5), [tf.float64],
                   (_E.InternalError, "Unsupported numpy type: NPY_LONGDOUBLE")),
    "clongdouble": (np.array([1j], dtype=np.clongdouble), [tf.complex128],
                    (_E.InternalError, "Unsupported numpy type: NPY_CLONGDOUBLE")),
    "datetime": (np.datetime64("2020-01-01"), [tf.int64],
                 (_E.InternalError, "Unsupported numpy type: NPY_DATETIME")),
    "ragged": ([[[1.0], [2.0, 3.0]]], [tf.float64], (_E.InvalidArgumentError, "ValueError")),
    "object array of ints": (np.array([1, 2], dtype=object), [tf.int64],
                             (_E.InternalError, "Unsupported object type int")),
    "a symbolic tensor": (None, [tf.string], (_E.InternalError, "SymbolicTensor")),
    # TF reads these bytes unswapped (a wrong value): the value itself, here
    "big-endian float32": (np.array([1.5], dtype=">f4"), [tf.float32], [[1.5]]),
}


@pytest.mark.parametrize("case", sorted(TF_RETURNS))
def test_returns_inside_a_function_are_converted_as_tf_does(case):
    ret, tout, want = TF_RETURNS[case]

    @tf.function
    def f(x):
        value = x if ret is None else ret   # None: the traced input itself, out of scope
        return tf.compat.v1.numpy_function(lambda a: value, [x], tout, name="wrapped")

    if isinstance(want, tuple):
        with pytest.raises(want[0], match=re.escape(want[1])):
            f(tf.constant(["s"]))
        return
    got = f(tf.constant(["s"]))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w, dtype=object if tout[0].is_string else tout[0].np_dtype)
        assert g.dtype is tout[0]
        assert np.asarray(g.numpy(), dtype=w.dtype).tolist() == w.tolist()


# ----------------------------------------------------- random feeds

@given(dtype=dtypes, shape=st.none() | shapes, value=feed_values)
def test_random_feeds_fit_or_are_refused_naming_the_tensor(dtype, shape, value):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype, shape, name="x")
        y = tf.identity(x)
    with tf.compat.v1.Session(graph=g) as sess:
        try:
            out = sess.run(y, {x: value})
        except Exception as e:  # noqa: BLE001
            assert_clean_error(e, ["x:0", "'x'"])
        else:
            assert dtype_of(out) == (object if dtype.is_string else dtype.np_dtype)
            if shape is not None:
                assert tf.TensorShape(shape).is_compatible_with(np.shape(out))
        assert_usable(sess)


@given(key=st.one_of(st.text(max_size=8), st.integers(), st.none(), st.builds(object),
                     st.floats()))
def test_random_feed_keys_are_refused_naming_the_key(key):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (), name="x")
        y = tf.identity(x)
    with tf.compat.v1.Session(graph=g) as sess:
        try:
            sess.run(y, {x: 1.0, key: 1.0})
        except Exception as e:  # noqa: BLE001
            assert_clean_error(e, [repr(key), str(key)])
        assert_usable(sess)


# ----------------------------------------------------- arithmetic graphs vs numpy

INEXACT = {"float16", "float32", "float64", "complex64", "complex128"}
REAL = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64"}

# name: (pfd builder, numpy reference, dtypes TF accepts (None: every numeric), result dtype)
UNARY = {
    "negative": (tf.negative, np.negative, None),
    "abs": (tf.abs, np.abs, None),
    "square": (tf.square, np.square, None),
    "sqrt": (tf.sqrt, np.sqrt, INEXACT),
    "exp": (tf.exp, np.exp, INEXACT),
    "tanh": (tf.tanh, np.tanh, INEXACT),
    "sinh": (tf.sinh, np.sinh, INEXACT),
    "reduce_sum": (tf.reduce_sum, np.sum, None),
    "reduce_sum0": (lambda t: tf.reduce_sum(t, axis=0), lambda a: np.sum(a, axis=0), None),
}
BINARY = {
    "add": (tf.add, np.add, None),
    "subtract": (tf.subtract, np.subtract, None),
    "multiply": (tf.multiply, np.multiply, None),
    "maximum": (tf.maximum, np.maximum, REAL),
    "minimum": (tf.minimum, np.minimum, REAL),
}


def _reference(np_fn, dtype_out, *args):
    with np.errstate(all="ignore"):
        r = np_fn(*[np.asarray(a) for a in args])
    return np.asarray(r).astype(dtype_out)


def _result_dtype(name, dtype):
    return dtype.real_dtype if name == "abs" else dtype


program = st.lists(st.tuples(st.sampled_from(sorted(UNARY) + sorted(BINARY)),
                             st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=6)


@given(data=st.data(), dtype=numeric_dtypes, shape=shapes, ops=program)
def test_random_arithmetic_graphs_match_numpy_in_value_and_dtype(data, dtype, shape, ops):
    a = data.draw(values(dtype, shape, finite=True))
    b = data.draw(values(dtype, shape, finite=True))
    g = tf.Graph()
    with g.as_default():
        xa = tf.compat.v1.placeholder(dtype, shape, name="a")
        xb = tf.compat.v1.placeholder(dtype, shape, name="b")
    nodes = [(xa, tf.constant(a, dtype), a), (xb, tf.constant(b, dtype), b)]
    for name, i, j in ops:
        sym_x, eag_x, ref_x = nodes[i % len(nodes)]
        sym_y, eag_y, ref_y = nodes[j % len(nodes)]
        binary = name in BINARY
        build, np_fn, accepted = (BINARY if binary else UNARY)[name]
        if sym_x.dtype is not dtype or (binary and (sym_y.dtype is not dtype or
                                                    sym_x.shape != sym_y.shape)):
            continue  # abs of complex is real; reductions change shapes
        if name == "reduce_sum0" and sym_x.shape.rank == 0:
            with g.as_default(), pytest.raises(ValueError, match="reduction dimension"):
                build(sym_x)
            continue
        args_s, args_e, args_r = ((sym_x, sym_y), (eag_x, eag_y), (ref_x, ref_y)) if binary \
            else ((sym_x,), (eag_x,), (ref_x,))
        if accepted is not None and dtype.name not in accepted:
            with g.as_default(), pytest.raises(TypeError, match="allowed"):
                build(*args_s)
            with pytest.raises(tf.errors.InvalidArgumentError, match="allowed"):
                build(*args_e)
            continue
        out_dtype = _result_dtype(name, dtype)
        with g.as_default():
            s = build(*args_s)
        e = build(*args_e)
        assert s.dtype is out_dtype and e.dtype is out_dtype, name
        ref = _reference(np_fn, out_dtype.np_dtype, *args_r)
        same_values(e.numpy(), ref, out_dtype)
        nodes.append((s, e, ref))
    with tf.compat.v1.Session(graph=g) as sess:
        fetched = sess.run([n[0] for n in nodes[2:]], {xa: a, xb: b})
    for got, (sym, _, ref) in zip(fetched, nodes[2:]):
        assert dtype_of(got) == sym.dtype.np_dtype
        same_values(got, ref, sym.dtype)


# ----------------------------------------------------- mutated graph definitions

def fuzz_identity(a):
    return a


def _base_graph_def():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (2,), name="x")
        c = tf.constant(np.float32([1, 2]), name="c")
        m = tf.multiply(x, c, name="m")
        p = tf.compat.v1.py_func(fuzz_identity, [m], tf.float32, name="p")
        q = tf.py_function(lambda v: v * 2, [p], tf.float32, name="q")
        s = tf.reduce_sum(q, name="s")
        tf.cast(s, tf.int32, name="k")
        with tf.control_dependencies([s]):
            tf.identity(c, name="after")
        (dx,) = tf.gradients(q, p)  # a py_function gradient (is_grad, forward attrs)
        tf.identity(dx, name="dx")
    return g, json.loads(json.dumps(g.as_graph_def()))


_KEEP, _BASE = _base_graph_def()  # the callbacks stay registered while _KEEP lives
KEYS = ["name", "op", "input", "attr", "device", "source"]



def _mutation(n_nodes):
    node = st.integers(0, n_nodes - 1)
    return st.one_of(
        st.tuples(st.just("drop_key"), node, st.sampled_from(KEYS)),
        st.tuples(st.just("set_key"), node, st.sampled_from(KEYS), json_values),
        st.tuples(st.just("op_type"), node, st.sampled_from(_op_types()) | st.text(max_size=6)),
        st.tuples(st.just("input"), node, st.integers(0, 3),
                  st.sampled_from([n["name"] for n in _BASE["node"]]) | st.text(max_size=5),
                  st.integers(0, 3), st.booleans()),
        st.tuples(st.just("attr"), node, st.text(max_size=6) | st.sampled_from(
            ["T", "Tout", "dtype", "shape", "value", "token", "axis", "DstT", "forward"]),
            json_values),
        st.tuples(st.just("drop_node"), node),
        st.tuples(st.just("dup_node"), node),
        st.tuples(st.just("swap"), node, node),
    )


def _op_types():
    from pyfunc_debug.ops.registry import REGISTRY
    return sorted(REGISTRY)


def _apply(d, mutation):
    nodes = d["node"]
    kind, idx = mutation[0], mutation[1] % max(len(nodes), 1)
    if not nodes:
        return
    node = nodes[idx]
    if kind == "drop_key":
        node.pop(mutation[2], None)
    elif kind == "set_key":
        node[mutation[2]] = mutation[3]
    elif kind == "op_type":
        node["op"] = mutation[2]
    elif kind == "input":
        _, _, pos, target, index, control = mutation
        ref = f"^{target}" if control else f"{target}:{index}"
        inputs = node.get("input")
        if isinstance(inputs, list) and inputs:
            inputs[pos % len(inputs)] = ref
        else:
            node["input"] = [ref]
    elif kind == "attr":
        if isinstance(node.get("attr"), dict):
            node["attr"][mutation[2]] = mutation[3]
    elif kind == "drop_node":
        nodes.pop(idx)
    elif kind == "dup_node":
        nodes.append(copy.deepcopy(node))
    elif kind == "swap":
        j = mutation[2] % len(nodes)
        nodes[idx], nodes[j] = nodes[j], nodes[idx]


@given(mutations=st.lists(_mutation(len(_BASE["node"])), min_size=1, max_size=3))
def test_mutated_graph_definitions_fail_cleanly_or_run(mutations):
    d = copy.deepcopy(_BASE)
    for m in mutations:
        _apply(d, m)
    names = [str(n.get("name")) for n in d["node"] if isinstance(n, dict)] + ["node"]
    g = tf.Graph()
    try:
        with g.as_default():
            tf.import_graph_def(d, name="i")
    except Exception as e:  # noqa: BLE001
        assert_clean_error(e, names)
        assert isinstance(e, ValueError)
        return
    with tf.compat.v1.Session(graph=g) as sess, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        feeds = {}
        for op in g.get_operations():
            if op.type == "Placeholder":
                t = op.outputs[0]
                dims = [d if d is not None else 1 for d in (t.shape.dims or ())]
                feeds[t] = np.zeros(dims, dtype=t.dtype.np_dtype) if not t.dtype.is_string \
                    else np.full(dims, b"", dtype=object)
        for op in g.get_operations():
            fetch = op.outputs[0] if op.outputs else op
            try:
                sess.run(fetch, {k: v for k, v in feeds.items() if k is not fetch})
            except Exception as e:  # noqa: BLE001
                assert_clean_error(e, [op.name] + [f"i/{n}" for n in names])
        assert_usable(sess)
