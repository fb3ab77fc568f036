"""Debugging a real TensorFlow program: its Python callbacks as ops (SPEC §10).

``instrument()`` makes every ``tf.py_function``, ``tf.numpy_function`` and
``tf.compat.v1.py_func`` call — eager, inside ``tf.function``, in
``tf.data`` maps (any ``num_parallel_calls``) and in v1 sessions — emit
``OpStart``/``OpEnd``/``OpError`` events and honour the attached debuggers'
breakpoints, pauses, step-into pdb and post-mortem, on whichever TF thread
runs it; when summaries are recorded, calls raise the diagnostics our own ops do
(``non_finite``, ``shape_change``, ``input_modified``: ``external_calls``);
eager calls from one line are calls of one op. A graph ``numpy_function``/``py_func``
result that TF refuses once the callback returned (a count or dtype unlike ``Tout``:
``result_error``) is the call's ``OpError``; TF then raises its own error, as without
us. Requires the ``tensorflow`` extra; this module and ``pyfunc_debug.jax`` are the
only ones that import a framework.

How: every callback TF builds goes through two globals of its private
``script_ops`` module, looked up at call time — ``_internal_py_func`` (graphs,
``tf.function``, ``tf.data``, eager ``py_function``) and ``py_func_common``
(eager ``numpy_function``/``py_func``, which call the function directly).
Wrapping both catches aliases imported before ``instrument()``. The op's name,
type and the user's file:line are read from the op TF returns at build time
(its traceback maps autograph's generated code back to the user's lines).
Callbacks built before ``instrument()`` run unobserved: it warns about them.
TF's own callbacks (``Dataset.from_generator``'s) are hidden unless
``internal=True``. Gradient functions are never wrapped, so gradients through
an instrumented ``py_function`` are TF's own.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import warnings

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import types_pb2
from tensorflow.python.framework import ops as tf_ops
from tensorflow.python.ops import script_ops
from tensorflow.python.util import tf_stack

from .debug.external import ExternalOp
from .external_calls import CallbackRun, Closing, without_our_frames
from .source_text import PACKAGE_DIR, USER_LIKE, is_ours, launcher_files

__all__ = ["instrument", "uninstrument", "Instrumentation", "result_error"]



def _package_dir(name: str) -> str | None:
    spec = importlib.util.find_spec(name)  # finds without importing
    origin = spec.origin if spec is not None else None
    return os.path.dirname(origin) + os.sep if origin else None


# TF's own files (and Keras', which calls TF on the user's behalf): never the user's line
_TF_DIRS = tuple(d for d in map(_package_dir, ("tensorflow", "keras", "tf_keras")) if d)
_NOT_USER = _TF_DIRS + (PACKAGE_DIR, "<frozen ")
_CONTEXTLIB = os.path.dirname(os.__file__) + os.sep + "contextlib.py"

_active: Instrumentation | None = None


def _is_user_file(filename: str) -> bool:
    return (not filename.startswith(_NOT_USER) or filename.startswith(USER_LIKE)) and \
        filename != _CONTEXTLIB


def _code(func):
    """The code object pdb stops in when stepping into ``func``."""
    while hasattr(func, "func") and not hasattr(func, "__code__"):  # functools.partial
        func = func.func
    return getattr(func, "__code__", None)


def _is_internal(func) -> bool:
    code = _code(func)
    return code is not None and code.co_filename.startswith(_TF_DIRS)


def _stack_source(depth: int = 3) -> str:
    """The innermost user frame now (eager calls: there is no op to ask)."""
    frame = sys._getframe(depth)
    while frame is not None:
        if _is_user_file(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def _op_source(op) -> str:
    """The user's file:line in a TF op's creation traceback (innermost last)."""
    try:
        frames = list(op.traceback)
    except Exception:  # an op without a recorded traceback
        return ""
    for f in reversed(frames):
        if _is_user_file(f.filename):
            return f"{f.filename}:{f.lineno}"
    return ""


def _op_of(result):
    """The graph op behind ``_internal_py_func``'s result (``None`` when eager)."""
    first = result[0] if isinstance(result, (list, tuple)) and result else result
    if isinstance(first, tf.Operation):
        return first
    try:
        return first.op
    except (AttributeError, ValueError):  # EagerTensor: no op; [] when eager with Tout=[]
        return None


def _numeric_touts(Tout) -> tuple:
    """The numpy dtypes of a py_function's numeric outputs, one per output; () when any is
    not a plain numeric or bool dtype (strings, nested specs: recorded as returned)."""
    items = Tout if isinstance(Tout, (list, tuple)) else [Tout]
    try:
        dtypes = tuple(np.dtype(tf.as_dtype(t).as_numpy_dtype) for t in items)
    except (TypeError, ValueError):
        return ()
    return dtypes if all(d.kind in "biufc" for d in dtypes) else ()


def _type_name(dtype) -> str:
    """A dtype as TF's kernels name it in their errors ("float", "double", "string")."""
    return types_pb2.DataType.Name(dtype.as_datatype_enum)[3:].lower()


def _kernel_dtype(a: np.ndarray):
    """The dtype of the tensor TF's kernel makes of a converted result; None when it
    refuses the array in a way not modelled here (a numpy type TF has no dtype for)."""
    if a.dtype.kind in "OS":   # bytes, or an object array of bytes/str: strings
        return tf.string
    try:
        return tf.as_dtype(a.dtype)
    except TypeError:
        return None


def _single_none(a) -> bool:
    """The kernel's ``IsSingleNone``: a function that returned None has no outputs."""
    return a.dtype.kind == "O" and a.ndim == 0 and a[()] is None


def result_error(ret, tout, token: str):
    """The error TF fails a graph ``numpy_function``/``py_func`` with when its function
    returned ``ret``, else None. TF finds it after the function (and our wrapper) returned:
    its registry converts the result in Python, then the kernel checks the count and each
    dtype against ``tout`` (TF dtypes or their names), never casting; ``token`` names the
    function in TF's message."""
    tout = [tf.as_dtype(t) for t in tout]
    try:   # as FuncRegistry.__call__ does
        if isinstance(ret, bytes):
            ret = [ret]
        convert = script_ops.FuncRegistry._convert
        if isinstance(ret, (list, tuple)):
            values = [convert(x) for x in ret]
        else:
            one = convert(ret)
            values = [] if _single_none(one) else [one]
    except Exception as e:   # noqa: BLE001 - TF's conversion raises it again, and fails on it
        return e.with_traceback(None)
    got = []
    for a in values:
        if a.dtype.kind == "O":
            for x in a.reshape(-1):
                if not isinstance(x, (bytes, str)):
                    return tf.errors.InternalError(
                        None, None, f"Unsupported object type {type(x).__name__}")
        dtype = _kernel_dtype(a)
        if dtype is None:
            return None
        got.append(dtype)
    if len(got) != len(tout):
        return tf.errors.InvalidArgumentError(
            None, None, f"{token} returns {len(got)} values, but expects to see {len(tout)} "
            "values.")
    for i, (have, want) in enumerate(zip(got, tout)):
        if have != want:
            return tf.errors.InvalidArgumentError(
                None, None, f"{i}-th value returned by {token} is {_type_name(have)}, but "
                f"expects {_type_name(want)}")
    return None


def _result_check(op):
    """``ExternalOp.check`` for a graph numpy_function/py_func op: ``result_error`` for
    the op's Tout, the commonest result (one array of the one numeric dtype) passed at
    once (it runs at every observed call)."""
    tout, token = list(op.get_attr("Tout")), op.get_attr("token")
    token = token.decode() if isinstance(token, bytes) else token
    single = tout[0].as_numpy_dtype if len(tout) == 1 and tout[0] != tf.string else None
    ndarray = np.ndarray

    def check(ret):
        if single is not None and (ret.__class__ is single or (
                ret.__class__ is ndarray and ret.dtype == single)):
            return None
        return result_error(ret, tout, token)
    return check, tuple(t.name for t in tout)


_converted_checks: dict = {}


def _converted_check(Tout):
    """``ExternalOp.check`` for a py_function, or None: once the function returned, TF
    converts each result to its Tout with ``EagerFunc._convert`` (``convert_to_tensor``)
    and fails the op if that raises (a string for a float Tout); this makes the same
    conversion, so that the record fails too. A tensor or array of its Tout's dtype (the
    commonest result) passes at once. One per Tout."""
    try:
        tout = tuple(tf.as_dtype(t) for t in (Tout if isinstance(Tout, (list, tuple))
                                              else [Tout]))
    except (TypeError, ValueError):   # nested specs: TF converts them its own way
        return None
    check = _converted_checks.get(tout)
    if check is None:
        convert = script_ops.EagerFunc(None, list(tout), False)._convert
        fits = [(t, t.as_numpy_dtype) for t in tout]

        def passes(x, t, np_dtype) -> bool:
            return x.dtype == (t if isinstance(x, tf.Tensor) else np_dtype) \
                if isinstance(x, (tf.Tensor, np.ndarray)) else False

        def check(ret):
            try:   # as EagerFunc._call does
                if isinstance(ret, (tuple, list)):
                    for x, (t, np_dtype) in zip(ret, fits):
                        if not passes(x, t, np_dtype):
                            convert(x, t)
                elif ret is not None and not passes(ret, *fits[0]):
                    convert(ret, fits[0][0])
            except Exception as e:   # noqa: BLE001 - what TF will fail the op with
                return e.with_traceback(None)
            return None
        check = _converted_checks[tout] = check
    return check


def _eager_name(name, op_type: str) -> str:
    scope = tf_ops.get_name_scope()
    base = name or op_type
    return f"{scope}/{base}" if scope else base


_eager_ops: dict = {}


def _eager_op(name: str, typ: str, source: str, target=None, touts=(),
              check=None) -> ExternalOp:
    """One op per eager call site (and function): its calls are calls of one op, which
    diagnostics compare (an output shape unlike the earlier calls')."""
    key = (name, typ, source, target, touts, check)
    op = _eager_ops.get(key)
    if op is None:
        if len(_eager_ops) > 4096:   # call sites made in a loop (generated names)
            _eager_ops.clear()
        op = _eager_ops[key] = ExternalOp(name, typ, source, target=target, touts=touts,
                                          check=check)
    return op


def _our_files() -> frozenset:
    """Our package's files (``is_ours``: not the demo's or the examples')."""
    return frozenset(path for folder, _, names in os.walk(PACKAGE_DIR) for name in names
                     if name.endswith(".py") and is_ours(path := os.path.join(folder, name)))


class _NotTheProgram(tf_stack.StackTraceFilter):
    """TF's stack filter for an op's creation stack: our frames and the launcher's
    (``Instrumentation`` sets ``files`` once installed)."""

    files: frozenset = frozenset()

    def get_filtered_filenames(self):
        parent = self.parent.get_filtered_filenames() if self.parent is not None else ()
        return self.files.union(parent)


class Instrumentation(Closing):
    """The installed wrappers; ``close()`` (or leaving ``with``) restores TF's own and
    ends the callbacks' run. ``run`` is the ``CallbackRun`` the calls belong to."""

    def __init__(self, internal: bool = False):
        self.internal = internal
        self.run = CallbackRun("tensorflow")
        self._saved = None

    def _install(self) -> None:
        _NotTheProgram.files = _our_files() | launcher_files()
        self._saved = (script_ops._internal_py_func, script_ops.py_func_common)
        internal_py_func, py_func_common = self._saved
        me = self

        def _internal_py_func(func, inp, Tout, stateful=None, use_eager_py_func=False,
                              is_grad_func=False, name=None):
            # the op's creation stack, which TF's errors quote ("defined at"), leaves out
            # our frames as it leaves out TF's own: its message reads as without us
            with _NotTheProgram():
                return build(func, inp, Tout, stateful, use_eager_py_func, is_grad_func, name)

        def build(func, inp, Tout, stateful, use_eager_py_func, is_grad_func, name):
            if is_grad_func or not callable(func) or (not me.internal and _is_internal(func)):
                # not callable: TF's own check raises its ValueError, as without us
                return internal_py_func(func, inp, Tout, stateful, use_eager_py_func,
                                        is_grad_func, name)
            typ = "EagerPyFunc" if use_eager_py_func else (
                "PyFunc" if stateful else "PyFuncStateless")
            eager = tf.executing_eagerly()   # then the call runs in there: no op to name it
            touts = _numeric_touts(Tout) if use_eager_py_func else ()
            converted = _converted_check(Tout) if use_eager_py_func else None
            holder = [(_eager_op if eager else ExternalOp)(_eager_name(name, typ), typ,
                                                          _stack_source(), target=_code(func),
                                                          touts=touts, check=converted)]
            result = internal_py_func(me._callback(func, holder), inp, Tout, stateful,
                                      use_eager_py_func, is_grad_func, name)
            op = None if eager else _op_of(result)
            if op is not None:  # built, not run: name it after TF's op, as the user named it
                check, declared = _result_check(op) if not use_eager_py_func else \
                    (converted, ())
                holder[0] = ExternalOp(op.name, op.type, _op_source(op) or holder[0].source,
                                       target=holder[0].target, touts=touts, check=check,
                                       declared=declared)
            return result

        def _py_func_common(func, inp, Tout, stateful=True, name=None):
            if (not tf.executing_eagerly() or not callable(func)
                    or (not me.internal and _is_internal(func))):
                return py_func_common(func, inp, Tout, stateful=stateful, name=name)
            typ = "PyFunc" if stateful else "PyFuncStateless"
            holder = [_eager_op(_eager_name(name, typ), typ, _stack_source(), target=_code(func))]
            return py_func_common(me._callback(func, holder), inp, Tout, stateful=stateful,
                                  name=name)

        script_ops._internal_py_func = _internal_py_func
        script_ops.py_func_common = _py_func_common

    def _callback(self, func, holder):
        run = self.run

        def callback(*args):
            try:
                return run.call(holder[0], func, args)
            except BaseException as e:   # TF prints its traceback: as without us
                without_our_frames(e)
                raise   # a bare raise adds no frame (this one) back (Python 3.11+)
        callback.__name__ = getattr(func, "__name__", "callback")
        callback.__qualname__ = getattr(func, "__qualname__", callback.__name__)
        return callback

    def close(self) -> None:
        """Restore TF's functions (already-built callbacks stay wrapped) and end the run."""
        global _active
        if self._saved is not None:
            script_ops._internal_py_func, script_ops.py_func_common = self._saved
            self._saved = None
        if _active is self:
            _active = None
        self.run.end()


def instrument(internal: bool = False) -> Instrumentation:
    """Wrap every Python callback TensorFlow builds from now on (see the module docstring).

    Call it before functions are traced or datasets built; callbacks built earlier
    run unobserved and a ``RuntimeWarning`` says how many. ``internal=True`` also
    shows TF's own callbacks (``Dataset.from_generator``). Calling it again returns
    the active ``Instrumentation``. Use as ``with instrument(): ...`` or call
    ``uninstrument()`` to restore TF.
    """
    global _active
    if _active is not None:
        _active.internal = _active.internal or internal
        return _active
    built = script_ops._py_funcs.size()
    if built:
        warnings.warn(f"pyfunc_debug.tensorflow.instrument() was called after {built} Python "
                      f"callback{'s were' if built != 1 else ' was'} built (tf.function traced, "
                      "dataset built or graph made): those run without events or breakpoints. "
                      "Call instrument() first (pyfunc-debug run --tf does).",
                      RuntimeWarning, stacklevel=2)
    _active = Instrumentation(internal)
    _active._install()
    return _active


def uninstrument() -> None:
    """Undo ``instrument()`` (no-op when not instrumented)."""
    if _active is not None:
        _active.close()
