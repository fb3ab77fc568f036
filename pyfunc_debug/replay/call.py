"""Calling a recorded function again with its recorded inputs, plainly or under pdb.

Inputs are given the kind the function received: numpy arrays for
``py_func``/``numpy_function``, our ``EagerTensor``s for ``py_function``, and
for a trace recorded through the TensorFlow or JAX adapter that framework's
eager tensors or arrays when it is installed (numpy otherwise, said once).
"""
from __future__ import annotations

import importlib
import sys
import traceback
from dataclasses import dataclass

import numpy as np

__all__ = ["Outcome", "make_inputs", "invoke", "user_traceback"]

EAGER_TYPES = ("EagerPyFunc",)


@dataclass
class Outcome:
    """What the replayed call did: ``returned`` its result, or ``error`` what it raised."""

    returned: object = None
    error: BaseException | None = None

    @property
    def not_called(self) -> bool:
        """The call itself failed, raised here (a ``TypeError`` binding the recorded
        arguments: the function's parameters changed, or it is a method or ``partial``
        whose bound part replay cannot rebuild), not in the function."""
        tb = self.error.__traceback__ if isinstance(self.error, TypeError) else None
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        return tb is not None and tb.tb_frame.f_code.co_filename == __file__

    @property
    def where(self):
        """(file, line) of the frame that raised, or (None, None)."""
        tb = self.error.__traceback__ if self.error is not None else None
        if tb is None:
            return None, None
        while tb.tb_next is not None:
            tb = tb.tb_next
        return tb.tb_frame.f_code.co_filename, tb.tb_lineno


def make_inputs(record, function: dict, notes: list) -> tuple:
    """(arguments, context manager the call runs in) for one captured call."""
    values = []
    for i, (spec, v) in enumerate(zip(record["inputs"], record.inputs)):
        if v is None:
            raise ValueError(f"input {i} ({spec.get('key')}) could not be read")
        arr = np.array(v, dtype=object if spec.get("dtype") == "object" else None)
        if spec.get("dtype") not in (None, "object") and arr.dtype.name != spec["dtype"]:
            arr = arr.astype(spec["dtype"])
        values.append(arr)
    # a py_func/numpy_function that got a numpy scalar or bytes gets it again, not a 0-d
    # array (``len()`` of one raises)
    given = [_scalar(v) if spec.get("scalar") and not v.shape else v
             for spec, v in zip(record["inputs"], values)]
    adapter = function.get("adapter")
    if adapter == "tensorflow":   # numpy_function/py_func callbacks get numpy, as here
        if record["op_type"] not in EAGER_TYPES:
            return given, None
        return _framework("tensorflow", values, notes, lambda tf, a: tf.constant(a))
    if adapter == "jax":
        return _framework("jax.numpy", values, notes, lambda jnp, a: jnp.asarray(a))
    if record["op_type"] in EAGER_TYPES:
        from ..dtypes import as_dtype
        from ..eager.tensor import EagerTensor
        from ..graph.graph import eager_mode
        tins = function.get("Tin") or [None] * len(values)
        args = [EagerTensor(v, as_dtype(t) if t else None) for v, t in zip(values, tins)]
        return args, eager_mode
    return given, None


def _scalar(v):
    """The scalar a 0-d array holds, as a call got it: a numpy scalar, or ``bytes``/``str``."""
    x = v[()]
    return bytes(x) if isinstance(x, np.bytes_) else str(x) if isinstance(x, np.str_) else x


def _framework(name, values, notes, convert):
    try:
        module = importlib.import_module(name)
    except ImportError:
        notes.append(f"{name.split('.')[0]} is not installed here: the recorded inputs are "
                     "given as numpy arrays")
        return values, None
    return [convert(module, v) for v in values], None


def invoke(func, args, context, mode: str | None, out=None) -> Outcome:
    """Call ``func(*args)``: ``mode`` None plainly, "pdb" stopping at its first line,
    "post-mortem" opening pdb at the frame that raised, if it raises."""
    from ..debug.pdb_choice import pdb_class, take_note
    out = out or sys.stdout
    outcome = Outcome()
    if mode is not None:
        note = take_note()
        if note:
            print(note, file=sys.stderr)
    debugger = pdb_class()() if mode is not None else None
    ctx = context() if context is not None else _Nothing()
    try:
        with ctx:
            if mode == "pdb":
                outcome.returned = _under_pdb(debugger, func, args)
            else:
                outcome.returned = func(*args)
    except Exception as e:  # noqa: BLE001 - the replayed function's own exception (or pdb's quit)
        outcome.error = e
        if mode == "post-mortem" and not outcome.not_called:
            print(user_traceback(e), file=out)
            debugger.reset()
            debugger.interaction(None, e.__traceback__)
    return outcome


def _under_pdb(debugger, func, args):
    """``func(*args)`` stopping at its first line: ``Bdb.runcall`` without its catching of
    ``BdbQuit`` (a quit in pdb passed for a call that returned None, whose result then
    failed the output check)."""
    debugger.reset()
    sys.settrace(debugger.trace_dispatch)
    try:
        return func(*args)
    finally:
        debugger.quitting = True
        sys.settrace(None)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def user_traceback(error: BaseException) -> str:
    """The traceback from the replayed function's frame on (not replay's own frames)."""
    tb = error.__traceback__
    here = __file__
    while tb is not None and tb.tb_frame.f_code.co_filename == here:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb)).rstrip()
