"""Steps in the form they travel to a worker: plain data plus the wrapped functions.

An ``Operation`` holds its graph, which does not travel; a ``ShippedOp`` keeps
what kernels, errors and events read of it (name, type, attributes, input
dtypes, creation site). The worker binds the kernel again from the op
registry, as the plan compiler does here.
"""
from __future__ import annotations

import linecache
import types
from dataclasses import dataclass

from ..ops.registry import REGISTRY
from ..runtime.plan import Step

__all__ = ["ShippedOp", "ShippedStep", "ship", "rebuild"]


@dataclass(frozen=True)
class _Input:
    dtype: object
    op: object  # a _Name: events read ``t.op.name``


@dataclass(frozen=True)
class _Name:
    name: str


class ShippedOp:
    """The parts of an ``Operation`` a kernel and its error message read."""

    __slots__ = ("name", "type", "attrs", "inputs", "outputs", "source", "device",
                 "control_inputs", "_grad_consumers", "code_file")
    graph = None

    def __init__(self, op):
        self.name, self.type, self.source, self.device = op.name, op.type, op.source, op.device
        self.attrs = dict(op.attrs)
        self.inputs = tuple(_Input(t.dtype, _Name(t.op.name)) for t in op.inputs)
        self.outputs = ()
        self.control_inputs = ()
        self._grad_consumers = ()
        self.code_file = _by_value_file(op)

    @property
    def op_def(self):
        return REGISTRY[self.type]

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"<pfd.Operation '{self.name}' type={self.type} (shipped)>"


@dataclass(frozen=True)
class ShippedStep:
    op: ShippedOp
    in_slots: tuple
    out_slots: tuple
    needs_ctx: bool
    info: tuple  # the observed loop's per-step event data (see runtime.observed)


def ship(step, info) -> ShippedStep:
    return ShippedStep(ShippedOp(step.op), step.in_slots, step.out_slots, step.needs_ctx, info)


def _by_value_file(op):
    """(file name, source text) of the op's wrapped function when Dask ships it by value
    (a function of the script, ``__main__``): cloudpickle names its code's file
    ``<dynamic-code>``, which tracebacks and pdb in the worker could not show."""
    func = getattr(op.attrs.get("callback"), "func", None)
    code = getattr(func, "__code__", None)
    if code is None or getattr(func, "__module__", None) != "__main__":
        return None
    return code.co_filename, "".join(linecache.getlines(code.co_filename)) or None


def _renamed(code, filename: str):
    consts = tuple(_renamed(c, filename) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _restore_file(op) -> None:
    """The wrapped function's code names its file again; its lines are in ``linecache``
    (unless this host has the file itself)."""
    func = getattr(op.attrs.get("callback"), "func", None)
    if op.code_file is None or not isinstance(func, types.FunctionType):
        return
    filename, text = op.code_file
    if func.__code__.co_filename != filename:
        func.__code__ = _renamed(func.__code__, filename)
    if text is not None and not linecache.getlines(filename):
        # no modification time: linecache.checkcache keeps the entry
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)


def rebuild(shipped: ShippedStep) -> tuple:
    """The executor's step tuple, with the kernel bound in this process."""
    op = shipped.op
    _restore_file(op)
    op_def = op.op_def
    kernel = op_def.bind(op) if op_def.bind is not None else op_def.kernel(op.attrs)
    return Step(op, kernel, shipped.in_slots, shipped.out_slots, shipped.needs_ctx).as_tuple()
