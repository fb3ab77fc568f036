"""Running one op at once on concrete values (eager mode)."""
from __future__ import annotations

import threading

from .tensor import EagerTensor
from . import tape as tape_mod

__all__ = ["execute", "EagerContext", "eager_observers"]


class EagerContext:
    """Per-call state for ops that need a context outside any ``Session.run``."""

    __slots__ = ("tapes", "run_id")

    def __init__(self):
        self.tapes = {}
        self.run_id = None


# Set by the event layer while a trace/debugger listens to eager ops (issue: events).
eager_observers: list = []
_local = threading.local()


class _EagerOp:
    """What the tape records for an eager op: the op_def, attrs, inputs, outputs."""

    __slots__ = ("op_def", "attrs", "name", "type", "custom_grad")

    def __init__(self, op_def, attrs, name):
        self.op_def = op_def
        self.attrs = attrs
        self.name = name or op_def.name
        self.type = op_def.name
        self.custom_grad = None


def execute(op_def, inputs, attrs, name=None):
    """Compute ``op_def`` on eager ``inputs``; returns a list of ``EagerTensor``."""
    from ..ops.convert import convert_to_tensor
    tensors = [x if isinstance(x, EagerTensor) else convert_to_tensor(x) for x in inputs]
    values = [t._value for t in tensors]
    fn = op_def.kernel(attrs)
    out = fn(EagerContext(), *values) if op_def.needs_ctx else fn(*values)
    specs = op_def.infer(attrs, tensors)
    outs = (out,) if len(specs) == 1 else (out or ())
    results = [EagerTensor(_as_dtype(v, dt), dt) for v, (dt, _) in zip(outs, specs)]
    if tape_mod.recording():
        tape_mod.record(_EagerOp(op_def, attrs, name), tensors, results)
    return results


def _as_dtype(value, dtype):
    np_dtype = dtype.np_dtype
    vdt = getattr(value, "dtype", None)
    if vdt is np_dtype or vdt == np_dtype:
        return value
    from ..ops.convert import scalar_or_array
    import numpy as np
    return scalar_or_array(np.asarray(value).astype(np_dtype))
