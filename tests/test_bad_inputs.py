"""One test per bad input: the exception class, and a message naming what is at fault.

"What is at fault" is the op (its name and the file:line that created it), the
output index, the tensor name, or the wrapped function's qualified name
(SPEC §2; STYLE habit 8: every message names the op, its type and where it was
made).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyfunc_debug as tf

THIS_FILE = os.path.abspath(__file__)


def _next_line() -> int:
    """The line number after the caller's line (where the op under test is built)."""
    return sys._getframe(1).f_lineno + 1


def _session(g):
    return tf.compat.v1.Session(graph=g)


# The wrappers as (api, extra keyword arguments); tests call ``api(func, inp, Tout,
# name=..., **kw)`` on the line they build the op, so the op's creation site is here.
NUMPY_WRAPPERS = [
    ("py_func", (tf.compat.v1.py_func, {})),
    ("py_func_stateless", (tf.compat.v1.py_func, {"stateful": False})),
    ("numpy_function", (tf.numpy_function, {})),
    ("compat_numpy_function", (tf.compat.v1.numpy_function, {})),
]
ALL_WRAPPERS = NUMPY_WRAPPERS + [
    ("py_function", (tf.py_function, {})),
]
NUMPY_IDS = [k for k, _ in NUMPY_WRAPPERS]
ALL_IDS = [k for k, _ in ALL_WRAPPERS]


def _assert_names_op(err, op, line=None):
    """The error carries the op, and its message names it (and where it was made)."""
    msg = str(err)
    assert err.op is op, f"err.op is {err.op!r}, expected {op!r}"
    assert f"'{op.name}'" in msg, msg
    assert op.type in msg, msg
    if line is not None:
        assert f"{THIS_FILE}:{line}" in msg, msg
    assert err.message == msg


# -- results of the wrong dtype / count / kind -----------------------------------------

@pytest.mark.parametrize("kind, wrap", NUMPY_WRAPPERS, ids=NUMPY_IDS)
def test_wrong_output_dtype(kind, wrap):
    api, kw = wrap
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(2,), name="x")
        line = _next_line()
        y = api(lambda v: v.astype(np.float64), [x], tf.float32, name=f"bad_dtype_{kind}", **kw)
    with _session(g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: [1.0, 2.0]})
    msg = str(info.value)
    assert "0-th value returned by" in msg
    assert "is float64, but expects float32" in msg
    _assert_names_op(info.value, y.op, line)


def test_wrong_output_dtype_names_the_output_index():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        line = _next_line()
        a, b = tf.numpy_function(lambda v: (v, np.int64(1)), [x], [tf.float32, tf.int32])
    with _session(g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(b, {x: 1.0})
    assert "1-th value returned by" in str(info.value)
    assert "is int64, but expects int32" in str(info.value)
    _assert_names_op(info.value, a.op, line)


def test_wrong_output_dtype_python_float_is_not_cast():
    g = tf.Graph()
    with g.as_default():
        y = tf.compat.v1.py_func(lambda: 1.5, [], tf.float32, name="pyfloat")
    with _session(g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y)
    assert "0-th value returned by" in str(info.value)
    assert "is float64, but expects float32" in str(info.value)
    _assert_names_op(info.value, y.op)


@pytest.mark.parametrize("ret, tout, got, want", [
    ((np.float32(1), np.float32(2)), [tf.float32] * 3, 2, 3),
    ([1.0, 2.0], tf.float64, 2, 1),
    (None, tf.float32, 0, 1),
    (np.float32(1), [], 1, 0),
], ids=["tuple2_for_3", "list_for_single", "none_for_one", "value_for_none"])
def test_wrong_output_count(ret, tout, got, want):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        line = _next_line()
        out = tf.compat.v1.py_func(lambda v: ret, [x], tout, name="counted")
    op = out if isinstance(out, tf.Operation) else (out[0] if isinstance(out, list) else out).op
    with _session(g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(out, {x: 1.0})
    assert f"returns {got} values, but expects to see {want} values." in str(info.value)
    _assert_names_op(info.value, op, line)


def test_py_function_too_few_outputs():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        line = _next_line()
        a, b = tf.py_function(lambda v: [v], [x], [tf.float32, tf.float32], name="short")
    with _session(g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(a, {x: 1.0})
    assert "returns 1 values, but expects to see 2 values." in str(info.value)
    _assert_names_op(info.value, a.op, line)


@pytest.mark.parametrize("ret, type_name", [
    (lambda v: {"a": v}, "dict"),
    (lambda v: (i for i in range(2)), "generator"),
    (lambda v: [None], "NoneType"),
    (lambda v: np.array([1, 2], dtype=object), "int"),
], ids=["dict", "generator", "list_of_none", "object_array_of_int"])
@pytest.mark.parametrize("kind, wrap", NUMPY_WRAPPERS, ids=NUMPY_IDS)
def test_unsupported_return_type(kind, wrap, ret, type_name):
    api, kw = wrap
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        line = _next_line()
        y = api(ret, [x], tf.float32, name=f"odd_{kind}", **kw)
    with _session(g) as sess, pytest.raises(tf.errors.InternalError) as info:
        sess.run(y, {x: 1.0})
    assert f"Unsupported object type {type_name}" in str(info.value)
    _assert_names_op(info.value, y.op, line)


def test_py_function_unconvertible_return():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        line = _next_line()
        y = tf.py_function(lambda v: {"a": v}, [x], tf.float32, name="dict_ret")
    with _session(g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: 1.0})
    assert "dict" in str(info.value)
    _assert_names_op(info.value, y.op, line)


def test_py_function_returns_tensor_of_other_dtype():
    """TF#26: an EagerTensor is not cast; the message names both dtypes."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        line = _next_line()
        y = tf.py_function(lambda v: tf.cast(v, tf.float64), [x], tf.float32, name="f64_ret")
    with _session(g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: 1.0})
    assert "requested dtype float32 for Tensor with dtype float64" in str(info.value)
    _assert_names_op(info.value, y.op, line)


# -- feeds -----------------------------------------------------------------------------

def test_missing_feed_names_the_placeholder():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(2,), name="x")
        y = tf.compat.v1.py_func(lambda v: v, [x], tf.float32, name="needs_x")
    with _session(g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y)
    assert "You must feed a value for placeholder tensor 'x'" in str(info.value)


def test_feed_of_wrong_shape_names_the_tensor():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(2,), name="x")
        y = x * 2.0
    with _session(g) as sess, pytest.raises(ValueError) as info:
        sess.run(y, {x: [1.0, 2.0, 3.0]})
    msg = str(info.value)
    assert "'x:0'" in msg
    assert "(3,)" in msg and "(2,)" in msg


def test_feed_of_unconvertible_value_names_the_tensor():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
    with _session(g) as sess, pytest.raises(TypeError) as info:
        sess.run(x, {x: "abc"})
    assert "'x:0'" in str(info.value)
    assert "float32" in str(info.value)


def test_feed_of_symbolic_tensor_names_it():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        c = tf.constant(1.0, name="c")
    with _session(g) as sess, pytest.raises(TypeError) as info:
        sess.run(x, {x: c})
    assert "'c:0'" in str(info.value)
    assert "The value of a feed cannot be a pfd.Tensor object" in str(info.value)  # TF's words
    assert "with key <pfd.Tensor 'x:0'" in str(info.value)   # and the placeholder fed
    with g.as_default():
        v = tf.Variable(1.0, name="v")
    with _session(g) as sess, pytest.raises(TypeError, match="'v:0'.*'x:0'"):
        sess.run(x, {"x:0": v})   # a graph variable: symbolic too


def test_feed_key_from_another_graph_names_it():
    g, other = tf.Graph(), tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
    with other.as_default():
        p = tf.compat.v1.placeholder(tf.float32, shape=(), name="elsewhere")
    with _session(g) as sess, pytest.raises(ValueError) as info:
        sess.run(x, {x: 1.0, p: 2.0})
    assert "elsewhere:0" in str(info.value)


def test_feed_key_that_is_an_operation_name():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
    with _session(g) as sess, pytest.raises(ValueError) as info:
        sess.run(x, {"x": 1.0})
    assert "'x'" in str(info.value)


# -- building ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind, wrap", ALL_WRAPPERS, ids=ALL_IDS)
@pytest.mark.parametrize("func", [3, "f"], ids=["int", "str"])
def test_non_callable_func(kind, wrap, func):
    api, kw = wrap
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
        with pytest.raises(ValueError) as info:
            api(func, [c], tf.float32, name="nc", **kw)
    assert "Expected func to be callable" in str(info.value)
    assert repr(func) in str(info.value)
    assert [op.name for op in g.get_operations()] == [c.op.name]  # nothing was built


@pytest.mark.parametrize("kind, wrap", ALL_WRAPPERS, ids=ALL_IDS)
def test_non_callable_func_eager(kind, wrap):
    api, kw = wrap
    with pytest.raises(ValueError, match="Expected func to be callable"):
        api(42, [1.0], tf.float32, name="nc", **kw)


def test_binary_op_dtype_mismatch_names_op_and_dtypes():
    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.placeholder(tf.float32, shape=(), name="a")
        b = tf.compat.v1.placeholder(tf.float64, shape=(), name="b")
        with pytest.raises(TypeError) as info:
            tf.add(a, b)
    msg = str(info.value)
    assert "AddV2" in msg and "float64" in msg and "float32" in msg


def test_incompatible_broadcast_names_the_inputs():
    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.placeholder(tf.float32, shape=(2,), name="left")
        b = tf.compat.v1.placeholder(tf.float32, shape=(3,), name="right")
        with pytest.raises(ValueError) as info:
            tf.multiply(a, b)
    msg = str(info.value)
    assert "'left:0'" in msg and "'right:0'" in msg


def test_gradients_of_eager_tensors_is_a_type_error():
    with pytest.raises(TypeError, match="GradientTape"):
        tf.gradients(tf.constant(1.0), tf.constant(2.0))


# -- fetches -----------------------------------------------------------------------------

@pytest.mark.parametrize("as_list", [False, True], ids=["single", "list"])
def test_fetch_from_another_graph(as_list):
    g, other = tf.Graph(), tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="mine")
    with other.as_default():
        c = tf.constant(2.0, name="foreign")
    with _session(g) as sess, pytest.raises(ValueError) as info:
        sess.run([c] if as_list else c)
    assert "foreign:0" in str(info.value)


def test_fetch_unknown_tensor_name():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="c")
    with _session(g) as sess:
        with pytest.raises(ValueError) as info:
            sess.run("nope:0")
        assert "'nope:0'" in str(info.value)
        with pytest.raises(ValueError) as info:
            sess.run("nope")
        assert "'nope'" in str(info.value)
        with pytest.raises(ValueError) as info:
            sess.run(["c:0", "nope:0"])
        assert "'nope:0'" in str(info.value)
        assert sess.run("c:0") == 1.0


def test_get_tensor_by_unknown_name():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="c")
    with pytest.raises(KeyError) as info:
        g.get_tensor_by_name("nope:0")
    assert "nope:0" in str(info.value)
    with pytest.raises(KeyError) as info:
        g.get_tensor_by_name("c:5")
    assert "c:5" in str(info.value) and "1 outputs" in str(info.value)
    with pytest.raises(KeyError) as info:
        g.get_operation_by_name("nope")
    assert "nope" in str(info.value)


def test_fetch_none():
    g = tf.Graph()
    with _session(g) as sess, pytest.raises(TypeError, match="None"):
        sess.run(None)


# -- exceptions raised by the wrapped function ---------------------------------------

def _inner_raise(exc):
    raise exc


def _make_raiser(exc, seen):
    def raise_exception(*args):
        seen.append(exc)
        _inner_raise(exc)
    return raise_exception


@pytest.mark.parametrize("exc_type, err_class", [
    (ValueError, tf.errors.InvalidArgumentError),
    (ZeroDivisionError, tf.errors.UnknownError),
    (StopIteration, tf.errors.OutOfRangeError),
], ids=["ValueError", "ZeroDivisionError", "StopIteration"])
@pytest.mark.parametrize("kind, wrap", ALL_WRAPPERS, ids=ALL_IDS)
def test_user_exception_is_chained_with_op_and_traceback(kind, wrap, exc_type, err_class):
    api, kw = wrap
    seen = []
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        raiser = _make_raiser(exc_type("blah"), seen)
        line = _next_line()
        y = api(raiser, [x], tf.float32, name=f"raiser_{kind}", **kw)
    with _session(g) as sess, pytest.raises(err_class) as info:
        sess.run(y, {x: 1.0})
    err = info.value
    assert err.__cause__ is seen[0]
    _assert_names_op(err, y.op, line)
    msg = str(err)
    assert f"{exc_type.__name__}: blah" in msg
    assert "Traceback (most recent call last)" in msg
    assert "in raise_exception" in msg and "in _inner_raise" in msg


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("kind, wrap", ALL_WRAPPERS, ids=ALL_IDS)
def test_interrupts_propagate_unchanged(kind, wrap, exc_type):
    api, kw = wrap
    seen = []
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(), name="x")
        y = api(_make_raiser(exc_type("stop"), seen), [x], tf.float32, name="interrupted", **kw)
    with _session(g) as sess:
        with pytest.raises(exc_type) as info:
            sess.run(y, {x: 1.0})
        assert info.value is seen[0]
        assert sess.run(x, {x: 2.0}) == 2.0


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_interrupts_propagate_unchanged_eager_py_function(exc_type):
    seen = []
    with pytest.raises(exc_type) as info:
        tf.py_function(_make_raiser(exc_type("stop"), seen), [1.0], tf.float32)
    assert info.value is seen[0]


def test_user_exception_eager_py_function_is_chained():
    seen = []
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.py_function(_make_raiser(TypeError("blah"), seen), [1.0], tf.float32)
    assert info.value.__cause__ is seen[0]
    assert "TypeError: blah" in str(info.value)
    assert "in _inner_raise" in str(info.value)


def test_user_exception_eager_numpy_function_propagates_unchanged():
    """TF#32: eager numpy_function calls func directly; its exception is not wrapped."""
    seen = []
    with pytest.raises(ValueError) as info:
        tf.numpy_function(_make_raiser(ValueError("blah"), seen), [1.0], tf.float32)
    assert info.value is seen[0]


# -- a failed run leaves the session usable (TF#37) ----------------------------------

def test_failed_run_leaves_session_usable():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=(), name="x")
        y = tf.compat.v1.py_func(lambda v: np.float64(1.0 / v) if v else 1 / 0, [x], tf.float64,
                                 name="recip")
        z = y + 1.0
    outcomes = []
    with _session(g) as sess:
        for feed in (1.0, 0.0, 2.0):
            try:
                outcomes.append(float(sess.run(y, {x: feed})))
            except tf.errors.OpError as e:
                outcomes.append(type(e).__name__)
        assert outcomes == [1.0, "UnknownError", 0.5]
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(z)  # missing feed
        with pytest.raises(ValueError):
            sess.run(z, {x: [1.0, 2.0]})  # wrong shape
        assert sess.run([y, z], {x: 4.0}) == [0.25, 1.25]


def test_failed_py_function_run_leaves_session_usable():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, shape=(), name="x")
        y = tf.py_function(lambda v: 1.0 / v if float(v) else 1 / 0, [x], tf.float64)
        (dy,) = tf.gradients(y, x)
    with _session(g) as sess:
        with pytest.raises(tf.errors.UnknownError):
            sess.run([y, dy], {x: 0.0})
        got_y, got_dy = sess.run([y, dy], {x: 2.0})
    assert got_y == pytest.approx(0.5)
    assert got_dy == pytest.approx(-0.25)


# -- an imported graph whose function is not registered (other processes) -----------

BUILD = """
import json, sys
import numpy as np
import pyfunc_debug as tf
{imports}
g = tf.Graph()
with g.as_default():
    x = tf.compat.v1.placeholder(tf.float64, shape=(), name="x")
    y = {wrapper}({func}, [x], tf.float64, name="wrapped")
with open(sys.argv[1], "w") as f:
    json.dump(g.as_graph_def(), f)
"""

RUN = """
import json, sys
import pyfunc_debug as tf
with open(sys.argv[1]) as f:
    graph_def = json.load(f)
result = {}
g = tf.Graph()
with g.as_default():
    tf.import_graph_def(graph_def, resolve_functions=sys.argv[2] == "resolve")
with tf.compat.v1.Session(graph=g) as sess:
    try:
        result["value"] = float(sess.run("import/wrapped:0", {"import/x:0": 3.0}))
    except Exception as e:
        result["error"] = type(e).__name__
        result["message"] = str(e)
print(json.dumps(result))
"""

MODULE = '''
import numpy as np


def triple(v):
    return np.float64(v * 3.0)


class Scaler:
    @staticmethod
    def halve(v):
        return np.float64(v / 2.0)
'''

SUBPROCESS_WRAPPERS = ["tf.compat.v1.py_func", "tf.numpy_function", "tf.py_function"]


def _python(code, *args, cwd, pythonpath=None):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _build_and_run(tmp_path, wrapper, func, imports="", mode="plain", pythonpath=None):
    path = tmp_path / "graph.json"
    _python(BUILD.format(imports=imports, wrapper=wrapper, func=func), str(path),
            cwd=tmp_path, pythonpath=pythonpath)
    json.loads(path.read_text())  # really JSON
    out = _python(RUN, str(path), mode, cwd=tmp_path, pythonpath=pythonpath)
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("wrapper", SUBPROCESS_WRAPPERS)
def test_imported_lambda_is_not_registered_in_another_process(tmp_path, wrapper):
    result = _build_and_run(tmp_path, wrapper, "lambda v: v * 2.0", mode="resolve")
    assert result.get("error") == "InvalidArgumentError", result
    msg = result["message"]
    assert "import/wrapped" in msg
    assert "__main__:<lambda>" in msg


@pytest.mark.parametrize("wrapper", SUBPROCESS_WRAPPERS)
def test_imported_module_function_needs_resolve_functions(tmp_path, wrapper):
    moddir = tmp_path / "mods"
    moddir.mkdir()
    (moddir / "pfd_bad_inputs_helpers.py").write_text(textwrap.dedent(MODULE))
    kw = dict(imports="import pfd_bad_inputs_helpers", pythonpath=str(moddir))
    result = _build_and_run(tmp_path, wrapper, "pfd_bad_inputs_helpers.triple", **kw)
    assert result.get("error") == "InvalidArgumentError", result
    assert "import/wrapped" in result["message"]
    assert "pfd_bad_inputs_helpers:triple" in result["message"]
    assert "resolve_functions" in result["message"]  # the message says how to fix it
    result = _build_and_run(tmp_path, wrapper, "pfd_bad_inputs_helpers.triple", mode="resolve",
                            **kw)
    assert result == {"value": 9.0}


def test_imported_nested_qualname_resolves(tmp_path):
    moddir = tmp_path / "mods"
    moddir.mkdir()
    (moddir / "pfd_bad_inputs_helpers.py").write_text(textwrap.dedent(MODULE))
    result = _build_and_run(tmp_path, "tf.compat.v1.py_func",
                            "pfd_bad_inputs_helpers.Scaler.halve", mode="resolve",
                            imports="import pfd_bad_inputs_helpers", pythonpath=str(moddir))
    assert result == {"value": 1.5}


def test_imported_local_function_is_never_resolved(tmp_path):
    imports = "def make():\n    def local(v):\n        return v * 2.0\n    return local\n"
    result = _build_and_run(tmp_path, "tf.compat.v1.py_func", "make()", imports=imports,
                            mode="resolve")
    assert result.get("error") == "InvalidArgumentError", result
    assert "__main__:make.<locals>.local" in result["message"]
