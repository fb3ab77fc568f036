"""TF catalogue, section F: exceptions raised by the wrapped function (TF#33-TF#37).

SPEC §2 goes beyond TF here, and these tests follow SPEC: the original exception
is chained as ``__cause__`` (TF: ``None``), the error carries ``err.op``, and
``KeyboardInterrupt``/``SystemExit`` propagate unchanged (TF swallows them into
``UnknownError``).

Not ported, and why:
- TF#33 numeric ``error_code`` values: not part of SPEC §2.
- TF#35 TF's exact wrapping text (``Graph execution error``, ``[[{{node ..}}]]``,
  ``{{function_node __wrapped__...}}``): engine-specific; we check the op name,
  the core text and ``message == str(err)``.
- TF#36 logging of failures: no logging contract in SPEC.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import pyfunc_debug as tf


class WeirdError(Exception):
    pass


class MyValueError(ValueError):
    pass


def _session(g):
    return tf.compat.v1.Session(graph=g)


# Each mode builds an op named "myop" around ``func`` (taking one float input)
# and runs it once with input 1.0, raising whatever the engine raises.

def _graph_mode(wrapper):
    def run(func):
        g = tf.Graph()
        with g.as_default():
            x = tf.compat.v1.placeholder(tf.float32)
            y = wrapper(func, [x], tf.float32, name="myop")
        with _session(g) as sess:
            return sess.run(y, feed_dict={x: 1.0})
    return run


def _eager_py_function(func):
    return tf.py_function(func, [tf.constant(1.0)], tf.float32, name="myop")


def _tf_function_mode(func):
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        return tf.numpy_function(func, [inp], tf.float32, name="myop")
    return fx(tf.constant(1.0))


def _tf_function_py_function_mode(func):
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        return tf.py_function(func, [inp], tf.float32, name="myop")
    return fx(tf.constant(1.0))


MODES = [
    pytest.param(_graph_mode(lambda f, i, t, **k: tf.compat.v1.py_func(f, i, t, **k)),
                 id="session-py_func"),
    pytest.param(_graph_mode(lambda f, i, t, **k: tf.numpy_function(f, i, t, **k)),
                 id="session-numpy_function"),
    pytest.param(_graph_mode(lambda f, i, t, **k: tf.py_function(f, i, t, **k)),
                 id="session-py_function"),
    pytest.param(_eager_py_function, id="eager-py_function"),
    pytest.param(_tf_function_mode, id="tf.function-numpy_function"),
    pytest.param(_tf_function_py_function_mode, id="tf.function-py_function"),
]
GRAPH_MODES = MODES[:3] + MODES[4:]


def _raiser(exc):
    def func(_):
        raise exc
    return func


# ------------------------------------------------------------ TF#33 mapping

MAPPING = [
    (lambda: ValueError("blah"), "InvalidArgumentError"),
    (lambda: TypeError("blah"), "InvalidArgumentError"),
    (lambda: MyValueError("blah"), "InvalidArgumentError"),
    (lambda: UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
     "InvalidArgumentError"),
    (lambda: StopIteration("blah"), "OutOfRangeError"),
    (lambda: MemoryError("blah"), "ResourceExhaustedError"),
    (lambda: NotImplementedError("blah"), "UnimplementedError"),
    (lambda: IndexError("blah"), "UnknownError"),
    (lambda: KeyError("blah"), "UnknownError"),
    (lambda: LookupError("blah"), "UnknownError"),
    (lambda: RuntimeError("blah"), "UnknownError"),
    (lambda: ZeroDivisionError("blah"), "UnknownError"),
    (lambda: AssertionError("blah"), "UnknownError"),
    (lambda: ArithmeticError("blah"), "UnknownError"),
    (lambda: OverflowError("blah"), "UnknownError"),
    (lambda: AttributeError("blah"), "UnknownError"),
    (lambda: OSError("blah"), "UnknownError"),
    (lambda: WeirdError("blah"), "UnknownError"),
]
MAPPING_IDS = ["ValueError", "TypeError", "ValueError-subclass", "UnicodeDecodeError",
               "StopIteration", "MemoryError", "NotImplementedError", "IndexError",
               "KeyError", "LookupError", "RuntimeError", "ZeroDivisionError",
               "AssertionError", "ArithmeticError", "OverflowError", "AttributeError",
               "OSError", "custom"]


@pytest.mark.parametrize("run", MODES)
@pytest.mark.parametrize("make_exc, cls_name", MAPPING, ids=MAPPING_IDS)
def test_tf33_python_exceptions_map_to_tf_error_classes(run, make_exc, cls_name):
    exc = make_exc()
    cls = getattr(tf.errors, cls_name)
    with pytest.raises(tf.errors.OpError) as ei:
        run(_raiser(exc))
    assert type(ei.value) is cls, f"{type(exc).__name__} -> {type(ei.value).__name__}"
    # SPEC §2 beyond TF: the original exception is chained.
    assert ei.value.__cause__ is exc


@pytest.mark.parametrize("run", GRAPH_MODES)
def test_spec_error_carries_the_operation(run):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        run(_raiser(ValueError("blah")))
    op = ei.value.op
    assert op is not None
    assert op.name == "myop"
    assert op.type in ("PyFunc", "EagerPyFunc")
    assert "myop" in str(ei.value)


@pytest.mark.parametrize("run", MODES)
@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_spec_keyboard_interrupt_and_system_exit_propagate_unchanged(run, exc_type):
    exc = exc_type()
    with pytest.raises(exc_type) as ei:
        run(_raiser(exc))
    assert ei.value is exc


@pytest.mark.parametrize("run", MODES)
def test_tf33_tf_error_raised_inside_func_becomes_unknown_error(run):
    inner = tf.errors.InvalidArgumentError(None, None, "tf-blah")
    with pytest.raises(tf.errors.OpError) as ei:
        run(_raiser(inner))
    assert type(ei.value) is tf.errors.UnknownError
    assert "InvalidArgumentError: tf-blah" in str(ei.value)
    assert ei.value.__cause__ is inner


def test_error_classes_share_the_op_error_base():
    for name in ["InvalidArgumentError", "UnknownError", "OutOfRangeError",
                 "UnimplementedError", "ResourceExhaustedError", "InternalError",
                 "NotFoundError", "CancelledError"]:
        assert issubclass(getattr(tf.errors, name), tf.errors.OpError), name
    assert issubclass(tf.errors.OpError, Exception)


# ------------------------------------------------------ TF#34 message text

def inner_exception(exc_type):
    raise exc_type("blah")


def raise_exception(_):
    inner_exception(ValueError)


@pytest.mark.parametrize("run", MODES)
def test_tf34_message_holds_exception_and_traceback_with_user_frames(run):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        run(raise_exception)
    msg = str(ei.value)
    # TF's own test regex (py_func_test.testExceptionHandling).
    assert re.search(r": blah.*in raise_exception.*in inner_exception.*: blah", msg, re.DOTALL)
    assert "ValueError: blah" in msg
    assert "Traceback (most recent call last)" in msg
    assert 'raise exc_type("blah")' in msg


@pytest.mark.parametrize("run", MODES)
@pytest.mark.parametrize("exc, line", [
    (WeirdError("blah"), "WeirdError: blah"),
    (KeyError("k"), "KeyError: 'k'"),
    (StopIteration(), "StopIteration"),
], ids=["custom", "KeyError", "StopIteration-no-args"])
def test_tf34_type_names_are_bare(run, exc, line):
    with pytest.raises(tf.errors.OpError) as ei:
        run(_raiser(exc))
    msg = str(ei.value)
    assert re.search(r"(^|\s)" + re.escape(line), msg, re.MULTILINE), msg


@pytest.mark.parametrize("run", MODES)
def test_tf34_multiline_message_is_kept(run):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        run(_raiser(ValueError("line one\nline two")))
    assert "ValueError: line one\nline two" in str(ei.value)


@pytest.mark.parametrize("run", MODES)
def test_tf34_chained_exception_section_is_kept(run):
    def func(_):
        try:
            {}["missing"]
        except KeyError as e:
            raise RuntimeError("outer") from e

    with pytest.raises(tf.errors.UnknownError) as ei:
        run(func)
    msg = str(ei.value)
    assert "The above exception was the direct cause of the following exception" in msg
    assert "KeyError: 'missing'" in msg and "RuntimeError: outer" in msg
    assert isinstance(ei.value.__cause__, RuntimeError)


# ------------------------------------------------------------------ TF#35

@pytest.mark.parametrize("run", MODES)
def test_tf35_message_equals_str_and_names_the_op(run):
    with pytest.raises(tf.errors.OpError) as ei:
        run(_raiser(ValueError("blah")))
    assert ei.value.message == str(ei.value)
    # Eager TF names the op type (``[Op:EagerPyFunc]``); graph modes name the node.
    assert "myop" in ei.value.message or "EagerPyFunc" in ei.value.message


@pytest.mark.parametrize("wrapper", [
    pytest.param(lambda f, i, t: tf.compat.v1.py_func(f, i, t, name="myop"), id="py_func"),
    pytest.param(lambda f, i, t: tf.py_function(f, i, t, name="myop"), id="py_function"),
])
def test_tf35_count_and_dtype_errors_have_the_same_wrapping(wrapper):
    g = tf.Graph()
    with g.as_default():
        y = wrapper(lambda: None, [], tf.float32)
    with _session(g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as ei:
            sess.run(y)
    assert ei.value.message == str(ei.value)
    assert ei.value.op is not None and ei.value.op.name == "myop"
    assert "myop" in str(ei.value)


# ------------------------------------------------ TF#37 session still usable

@pytest.mark.parametrize("wrapper", [
    pytest.param(lambda f, i, t: tf.compat.v1.py_func(f, i, t), id="py_func"),
    pytest.param(lambda f, i, t: tf.py_function(f, i, t), id="py_function"),
])
def test_tf37_session_is_usable_after_a_py_func_error(wrapper):
    def inverse(a):
        return np.float32(1.0 / float(a))

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = wrapper(inverse, [x], tf.float32)
        z = y * 2.0
    results = []
    with _session(g) as sess:
        for v in (1.0, 0.0, 2.0):
            try:
                results.append(float(sess.run(y, feed_dict={x: v})))
            except tf.errors.OpError as e:
                results.append(type(e).__name__)
        # A different fetch signature after the failure also works.
        assert sess.run(z, feed_dict={x: 4.0}) == pytest.approx(0.5)
    assert results == [1.0, "UnknownError", 0.5]


def test_tf37_tf_function_is_usable_after_a_py_func_error():
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def fx(inp):
        return tf.numpy_function(lambda a: np.float32(1.0 / float(a)), [inp], tf.float32)

    results = []
    for v in (1.0, 0.0, 2.0):
        try:
            results.append(float(fx(tf.constant(v)).numpy()))
        except tf.errors.OpError as e:
            results.append(type(e).__name__)
    assert results == [1.0, "UnknownError", 0.5]
