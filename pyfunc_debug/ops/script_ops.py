"""The seed ops: ``py_func`` / ``numpy_function`` (PyFunc, PyFuncStateless) and
``py_function`` (EagerPyFunc), in graphs and eagerly.

Wrapped functions are kept in a ``Callback`` holder; a weak registry maps the
op's token to it so an imported graph can find a function still alive in this
process (TF#51). Function bodies are never serialized.
"""
from __future__ import annotations

import bdb
import functools
import itertools
import weakref
from threading import get_ident

import numpy as np

from .. import events
from ..nest import flatten
from ..dtypes import as_dtype
from ..errors import CancelledError, InternalError, OpError
from ..graph.graph import building_graph, eager_mode
from ..graph.shape import UNKNOWN
from ..graph.source import user_frame
from ..graph.tensor import SymbolicTensor, TensorBase
from ..eager.tensor import EagerTensor, read_only
from ..eager import tape as tape_mod
from .convert import as_tensor_in, convert_to_tensor
from .registry import OpDef, dtype_tuple_attr, register
from .script_errors import map_exception, missing_callback
from .script_results import convert_eager_results, strict_checker

__all__ = ["py_func", "numpy_function", "py_function", "Callback", "callback_registry"]

_tokens = itertools.count()
# never mapped to a TF error: pdb's quit and the debugger's abort end the run as they are
_PASS_THROUGH = (bdb.BdbQuit, CancelledError)
callback_registry: "weakref.WeakValueDictionary[str, Callback]" = weakref.WeakValueDictionary()
_held_calls = events.held_calls   # capture="fault" (trace.faults): the call running, by thread


class Callback:
    """Holds a wrapped function (many, like numpy ufuncs, cannot be weakly referenced)."""

    __slots__ = ("func", "token", "qualname", "__weakref__")

    def __init__(self, func, token: str, qualname: str):
        self.func = func
        self.token = token
        self.qualname = qualname


def qualified_name(func) -> str:
    module = getattr(func, "__module__", None) or type(func).__module__
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) \
        or type(func).__qualname__
    return f"{module}:{name}"


def new_callback(func) -> Callback:
    token = f"pyfunc_{next(_tokens)}"
    cb = Callback(func, token, qualified_name(func))
    callback_registry[token] = cb
    return cb


# -- kernels --------------------------------------------------------------

def _bind_pyfunc(op, call=None):
    """Kernel for PyFunc/PyFuncStateless: call func on numpy values, check strictly.

    ``call(func, args)``, when given, makes the call (the debugger runs it under pdb).
    """
    cb = op.attrs.get("callback")
    if cb is None:
        def missing(*args):
            raise missing_callback(op)
        return missing
    func = cb.func
    invoke = func if call is None else (lambda *args: call(func, args))
    check, token = strict_checker(op.attrs["Tout"]), op.attrs["token"]
    make = _kernel_of_one if len(op.inputs) == 1 else _kernel_of_any
    return make(op, invoke, check, token)


def _kernel_of_any(op, invoke, check, token):
    def kernel(*args):
        if events.fault_capture:   # capture="fault": its inputs, in case the call goes wrong
            _held_calls[get_ident()] = (op, args)
        try:
            ret = invoke(*args)
        except _PASS_THROUGH:
            raise
        except Exception as e:
            raise map_exception(e) from e
        try:
            return check(ret, token)
        except OpError as e:
            e.returned = ret   # what the function gave back: the debugger shows it
            raise
        except Exception as e:  # TF converts results in Python: its errors map the same way
            raise map_exception(e) from e
    return kernel


def _kernel_of_one(op, invoke, check, token):
    """``_kernel_of_any`` for one input, the commonest: a fixed arity with its state in
    defaults calls faster than a closure taking ``*args``, and is 100 bytes smaller
    (a million-op plan, issue 28). The executor passes exactly one argument."""
    def kernel(a, op=op, invoke=invoke, check=check, token=token):
        if events.fault_capture:
            _held_calls[get_ident()] = (op, (a,))
        try:
            ret = invoke(a)
        except _PASS_THROUGH:
            raise
        except Exception as e:
            raise map_exception(e) from e
        try:
            return check(ret, token)
        except OpError as e:
            e.returned = ret
            raise
        except Exception as e:
            raise map_exception(e) from e
    return kernel


def _bind_eager_pyfunc(op, call=None):
    """Kernel for EagerPyFunc: func gets EagerTensors; a tape is kept when a gradient needs it."""
    if op.attrs.get("is_grad"):
        return _bind_eager_pyfunc_grad(op)
    cb = op.attrs.get("callback")
    if cb is None:
        def missing(ctx, *args):
            raise missing_callback(op)
        return missing
    func, touts, token = cb.func, op.attrs["Tout"], op.attrs["token"]
    if call is not None:
        inner = func
        func = lambda *args: call(inner, args)  # noqa: E731
    tins = [t.dtype for t in op.inputs]
    n_out = len(touts)

    def kernel(ctx, *args):
        if events.fault_capture:
            _held_calls[get_ident()] = (op, args)
        ins = [EagerTensor(read_only(a), dt) for a, dt in zip(args, tins)]
        want_tape = bool(op._grad_consumers)
        outs, tape = call_eagerly(func, ins, touts, token, want_tape)
        if want_tape:
            ctx.tapes[op] = (tape, ins, outs)
        if n_out == 1:
            return outs[0]._value
        return tuple(o._value for o in outs) if n_out else None
    return kernel


def call_eagerly(func, ins, touts, token, want_tape):
    """Run a py_function body eagerly (outer tapes paused); maybe record a tape."""
    tape = tape_mod.GradientTape(persistent=True) if want_tape else None
    with eager_mode(), tape_mod.isolated(tape):
        if tape is not None:
            tape.watch(ins)
        try:
            ret = func(*ins)
        except _PASS_THROUGH:
            raise
        except Exception as e:
            raise map_exception(e) from e
        try:
            outs = convert_eager_results(ret, touts, token)
        except OpError as e:
            e.returned = ret   # what the function gave back: the debugger shows it
            raise
    return outs, tape


def tape_vjp(tape, ins, outs, grad_values):
    """Input gradients of a recorded py_function call; zeros where unconnected (TF#47)."""
    seeds = [EagerTensor(g, o.dtype) if not isinstance(g, EagerTensor) else g
             for g, o in zip(grad_values, outs)]
    float_ins = [x for x in ins if x.dtype.is_differentiable]
    with eager_mode(), tape_mod.isolated(None):
        grads = tape.gradient(outs, float_ins, output_gradients=seeds,
                              unconnected_gradients="zero")
    return grads


def _bind_eager_pyfunc_grad(op):
    fwd = op.attrs["forward"]
    n_out = len(op.outputs)

    def kernel(ctx, *grad_values):
        entry = ctx.tapes.pop(fwd, None)
        if entry is None:
            raise InternalError(None, None, f"the gradient of op '{fwd.name}' ran without its "
                                "forward call in the same run")
        grads = tape_vjp(*entry, grad_values)
        values = [g._value for g in grads]
        return values[0] if n_out == 1 else tuple(values)
    return kernel


def _g_eager_pyfunc(op, inputs, outputs, grads):
    """Gradient op for a graph py_function: another EagerPyFunc replaying its tape."""
    from ..graph.graph import control_dependencies
    if op.attrs.get("is_grad"):
        return [None] * len(inputs)  # only first order (TF#46)
    float_idx = [i for i, x in enumerate(inputs) if x.dtype.is_differentiable]
    if not float_idx:
        return [None] * len(inputs)
    graph = op.graph
    with control_dependencies([op]):
        grad_op = graph.create_op(
            EAGER_PY_FUNC, list(grads),
            {"is_grad": True, "forward": op, "token": f"pyfunc_{next(_tokens)}",
             "Tout": tuple(inputs[i].dtype for i in float_idx)},
            name=f"{op.name}_grad",
            out_specs=[(inputs[i].dtype, UNKNOWN) for i in float_idx])
    op._grad_consumers = op._grad_consumers + (grad_op,)
    result = [None] * len(inputs)
    for out, i in zip(grad_op.outputs, float_idx):
        result[i] = out
    return result


def _infer_tout(attrs, inputs):
    return [(dt, UNKNOWN) for dt in attrs["Tout"]]


def _cse_pyfunc(op):
    cb = op.attrs.get("callback")
    return None if cb is None else (id(cb.func), tuple(d.name for d in op.attrs["Tout"]))


def _no_kernel(attrs):
    raise InternalError(None, None, "script ops bind their kernel to the op")


def _script_attr_types(op_def_name):
    common = {"Tout": dtype_tuple_attr, "token": str}
    return common if op_def_name == "EagerPyFunc" else dict(common, Tin=dtype_tuple_attr)


# extra: "step_into" binds a kernel whose call to the wrapped function the debugger makes
PY_FUNC = register(OpDef("PyFunc", kernel=_no_kernel, bind=_bind_pyfunc, infer=_infer_tout,
                         grad=None, stateful=True, attr_types=_script_attr_types("PyFunc"),
                         extra={"blocks_gradient": True, "hands_out_arrays": True,
                                "step_into": _bind_pyfunc, "calls_python": True}))
PY_FUNC_STATELESS = register(OpDef("PyFuncStateless", kernel=_no_kernel, bind=_bind_pyfunc,
                                   infer=_infer_tout, grad=None, cse_key=_cse_pyfunc,
                                   attr_types=_script_attr_types("PyFuncStateless"),
                                   extra={"blocks_gradient": True, "hands_out_arrays": True,
                                          "step_into": _bind_pyfunc, "calls_python": True}))
EAGER_PY_FUNC = register(OpDef("EagerPyFunc", kernel=_no_kernel, bind=_bind_eager_pyfunc,
                               infer=_infer_tout, grad=_g_eager_pyfunc, stateful=True,
                               attr_types=_script_attr_types("EagerPyFunc"),
                               needs_ctx=True, extra={"step_into": _bind_eager_pyfunc,
                                                      "calls_python": True}))

# -- argument checks (TF#6, TF#7, TF#9) ------------------------------------


def _parse_tout(Tout):
    if isinstance(Tout, (list, tuple)):
        return tuple(as_dtype(t) for t in Tout), False
    return (as_dtype(Tout),), True


def _missing_tout(api: str):
    return TypeError(f"Missing required argument: 'Tout'\n  If using tf.{api} as a decorator, "
                     f"set `Tout`\n  **by name** above the function:\n  `@tf.{api}(Tout=tout)`")


def _check_callable(func):
    if not callable(func):
        raise ValueError(f"Expected func to be callable. Received func={func!r} of type "
                         f"{type(func)}.")


def _decorator_or_call(api, build, func, inp, Tout, **kw):
    from ..dtypes import DType
    if func is None or isinstance(func, DType):
        if func is not None or Tout is None:
            raise _missing_tout(api)
        if inp is not None:
            raise TypeError(f"Don't set the `inp` argument when using tf.{api} as a decorator "
                            "(`func=None`).")

        def decorator(f):
            @functools.wraps(f)
            def wrapper(*args):
                return build(f, list(args), Tout, **kw)
            return wrapper
        return decorator
    if Tout is None:  # TF checks Tout first: a bare ``@py_function`` reports it
        raise _missing_tout(api)
    if inp is None:
        raise TypeError("Missing argument `inp`:\n  You must set the `inp` argument (the list of "
                        "arguments to the\n  function), unless you use "
                        f"`tf.{api}` as a decorator(`func=None`).")
    return build(func, inp, Tout, **kw)


def _graph_for(inp):
    for x in inp:
        if isinstance(x, SymbolicTensor):
            return x.op.graph
    return building_graph()


def _graph_inputs(inp, graph, op_type):
    out = []
    for x in inp:
        try:
            out.append(as_tensor_in(x, graph))
        except (TypeError, ValueError):
            raise TypeError(f"Tensors in list passed to 'input' of '{op_type}' Op have types "
                            f"[<NOT CONVERTIBLE TO TENSOR>] that are invalid. Tensors: {inp!r}") from None
    return out


def _finish(op, single, stateless=False):
    if tape_mod.recording():
        tape_mod.record(op, op.inputs, op.outputs)
    if not op.outputs and not single:
        return [] if stateless else op
    return op.outputs[0] if single else list(op.outputs)


# -- py_func / numpy_function ------------------------------------------------

def _build_numpy_function(func, inp, Tout, stateful=True, name=None):
    _check_callable(func)
    inp = list(inp)
    graph = _graph_for(inp)
    touts, single = _parse_tout(Tout)
    if graph is None:
        return _eager_numpy_function(func, inp, touts)
    op_def = PY_FUNC if stateful else PY_FUNC_STATELESS
    tensors = _graph_inputs(inp, graph, op_def.name)
    cb = new_callback(func)
    graph._keep_alive(cb)
    op = graph.create_op(op_def, tensors, {
        "token": cb.token, "Tout": touts, "Tin": tuple(t.dtype for t in tensors),
        "callback": cb, "func_name": cb.qualname}, name=name,
        out_specs=[(dt, UNKNOWN) for dt in touts])
    return _finish(op, single, stateless=not stateful)


def _eager_numpy_function(func, inp, touts):
    """Eager TF2: call at once on copies, results not checked against Tout (TF#14, TF#32).

    When someone listens to events, a result that would fail in a graph is
    reported as a ``Warning`` event.
    """
    args = [np.array(x._value) if isinstance(x, EagerTensor) else np.array(x) for x in inp]
    ret = func(*args)
    if events.listening():
        _warn_if_graph_would_fail(func, ret, touts)
    if ret is None:
        return None
    flat = flatten(ret)
    tensors = [convert_to_tensor(v) for v in flat]
    return tensors[0] if len(tensors) == 1 else tensors


def _warn_if_graph_would_fail(func, ret, touts) -> None:
    import threading
    import time
    try:
        strict_checker(touts)(ret, "the eager numpy_function")
        return
    except OpError as e:
        problem = e.message.splitlines()[0]
    except Exception as e:  # noqa: BLE001 - the conversion itself fails (TF: an error too)
        problem = f"{type(e).__name__}: {e}"
    where = user_frame(3)
    events.emit(events.Warning(
        events.next_seq(), None, time.perf_counter_ns(), threading.get_ident(), "numpy_function",
        "PyFunc", None, f"eager numpy_function({qualified_name(func)}) at {where}: {problem}; "
        "eagerly results are not checked, but in a graph or a function this op would fail",
        "tout_mismatch", (), str(where), "return exactly the dtypes Tout declares (e.g. "
        "result.astype(np.float32)), or change Tout"))


def py_func(func, inp, Tout, stateful=True, name=None):
    """``compat.v1.py_func``: wrap a numpy function as an op (see SPEC §2)."""
    return _build_numpy_function(func, inp, Tout, stateful=stateful, name=name)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """Wrap a function of numpy arrays as an op; also a decorator (``func=None``)."""
    return _decorator_or_call("numpy_function", _build_numpy_function, func, inp, Tout,
                              stateful=stateful, name=name)


# -- py_function ------------------------------------------------------------------

def _build_py_function(func, inp, Tout, name=None):
    _check_callable(func)
    inp = list(inp)
    touts, single = _parse_tout(Tout)
    graph = _graph_for(inp)
    if graph is None:
        return _eager_py_function(func, inp, touts, single, name)
    tensors = _graph_inputs(inp, graph, "EagerPyFunc")
    cb = new_callback(func)
    graph._keep_alive(cb)
    op = graph.create_op(EAGER_PY_FUNC, tensors, {
        "token": cb.token, "Tout": touts, "Tin": tuple(t.dtype for t in tensors),
        "callback": cb, "func_name": cb.qualname}, name=name,
        out_specs=[(dt, UNKNOWN) for dt in touts])
    return _finish(op, single)


def _eager_py_function(func, inp, touts, single, name):
    user_ins = [x if isinstance(x, TensorBase) else convert_to_tensor(x) for x in inp]
    ins = [EagerTensor(x._value, x.dtype) for x in user_ins]  # numpy() copies (TF#49)
    recording = tape_mod.recording()
    try:
        outs, tape = call_eagerly(func, ins, touts, "EagerPyFunc", recording)
    except OpError as e:
        where = user_frame(2)
        e.message = (f"Eager op '{name or 'EagerPyFunc'}' (EagerPyFunc) called at {where} "
                     f"(in {where.function}):\n{e.message} [Op:EagerPyFunc] name: {name or ''}")
        e.args = (e.message,)
        raise
    if recording and outs:
        record = _EagerPyFuncRecord(tape, ins)
        tape_mod.record(record, user_ins, outs)
    if single:
        return outs[0]
    return outs


class _EagerPyFuncRecord:
    """Tape entry for an eager py_function: its gradient replays the inner tape."""

    __slots__ = ("tape", "ins", "name", "type", "op_def", "attrs")

    def __init__(self, tape, ins):
        self.tape, self.ins = tape, ins
        self.name = self.type = "EagerPyFunc"
        self.op_def = EAGER_PY_FUNC
        self.attrs = {}

    def custom_grad(self, op, inputs, outputs, grads):
        float_grads = iter(tape_vjp(self.tape, self.ins, outputs, grads))
        return [next(float_grads) if x.dtype.is_differentiable else None for x in inputs]


def py_function(func=None, inp=None, Tout=None, name=None):
    """Wrap a function of ``EagerTensor``s as a once-differentiable op; also a decorator."""
    return _decorator_or_call("py_function", _build_py_function, func, inp, Tout, name=name)


eager_py_func = py_function
