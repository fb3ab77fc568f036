"""Running one op at once on concrete values (eager mode)."""
from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from ..dtypes import scalar_or_array
from .tensor import EagerTensor
from . import tape as tape_mod

__all__ = ["execute", "EagerContext", "watching_eager"]


class EagerContext:
    """Per-call state for ops that need a context outside any ``Session.run``."""

    __slots__ = ("tapes",)

    def __init__(self):
        self.tapes = {}


_local = threading.local()


@contextlib.contextmanager
def watching_eager(parent: str, run_id: int, level: int, cap: int, events: bool = True,
                   hook=None):
    """Eager ops run in the block are observed as children of ``parent`` (a py_function).

    With ``events`` they emit OpStart/OpEnd/OpError; a ``hook`` (the debugger)
    is asked ``before``/``after``/``error`` around each.
    """
    saved = getattr(_local, "parent", None)
    _local.parent = (parent, run_id, level, cap, events, hook)
    try:
        yield
    finally:
        _local.parent = saved


class _EagerOp:
    """What the tape records for an eager op: the op_def, attrs, inputs, outputs."""

    __slots__ = ("op_def", "attrs", "name", "type")

    def __init__(self, op_def, attrs, name):
        self.op_def = op_def
        self.attrs = attrs
        self.name = name or op_def.name
        self.type = op_def.name


def execute(op_def, inputs, attrs, name=None):
    """Compute ``op_def`` on ``EagerTensor`` inputs; returns a list of ``EagerTensor``."""
    tensors = inputs
    values = [t._value for t in tensors]
    fn = op_def.kernel(attrs)
    watched = getattr(_local, "parent", None)
    if watched is not None:
        out = _observed_call(fn, op_def, name or op_def.name, values, watched)
    else:
        out = fn(EagerContext(), *values) if op_def.needs_ctx else fn(*values)
    specs = op_def.infer(attrs, tensors)
    outs = (out,) if len(specs) == 1 else (out or ())
    results = [EagerTensor(_as_dtype(v, dt), dt) for v, (dt, _) in zip(outs, specs)]
    if tape_mod.recording():
        tape_mod.record(_EagerOp(op_def, attrs, name), tensors, results)
    return results


def _observed_call(fn, op_def, name, values, watched):
    from .. import events as ev
    from ..trace.summary import summarize
    parent, run_id, level, cap, events, hook = watched
    tid = threading.get_ident()
    now = time.perf_counter_ns
    typ = op_def.name
    if hook is not None:
        hook.before(name, typ, values, parent, run_id)
    t0 = now()  # one reading for OpStart and the slice's start
    if events:
        ev.emit(ev.OpStart(ev.next_seq(), run_id, t0, tid, name, typ, parent))
    in_sums = tuple(summarize(v, cap) for v in values) if events and level else ()
    try:
        out = fn(EagerContext(), *values) if op_def.needs_ctx else fn(*values)
    except BaseException as e:
        t1 = now()
        if events:  # also on KeyboardInterrupt & co: every OpStart gets closed
            msg = str(e) if isinstance(e, Exception) else f"interrupted by {type(e).__name__}"
            ev.emit(ev.OpError(ev.next_seq(), run_id, t1, tid, name, typ, parent,
                               type(e).__name__, msg, "", t1 - t0))
        if hook is not None and isinstance(e, Exception):
            hook.error(name, typ, values, e, parent, run_id)
        raise
    t1 = now()
    outs = out if isinstance(out, tuple) else (out,)
    if events:
        out_sums = tuple(summarize(v, cap) for v in outs) if level else ()
        ev.emit(ev.OpEnd(ev.next_seq(), run_id, t1, tid, name, typ, parent, t1 - t0,
                         in_sums, out_sums))
    if hook is not None:
        hook.after(name, typ, values, list(outs), parent, run_id)
    return out


def _as_dtype(value, dtype):
    np_dtype = dtype.np_dtype
    vdt = getattr(value, "dtype", None)
    if vdt is np_dtype or vdt == np_dtype:
        return value
    return scalar_or_array(np.asarray(value).astype(np_dtype))
