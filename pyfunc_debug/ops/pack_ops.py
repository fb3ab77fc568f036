"""Pack/Unpack: a list of same-shaped tensors as one tensor along a new axis 0.

``convert_to_tensor`` uses ``pack`` for lists that mix tensors and numbers.
Ops here are applied without ``dispatch`` (which imports ``convert``): their
inputs are tensors already, in one graph or all eager.
"""
from __future__ import annotations

import numpy as np

from ..eager import execute as eager
from ..eager import tape as tape_mod
from ..graph.shape import UNKNOWN, TensorShape
from ..graph.tensor import SymbolicTensor
from .registry import OpDef, dtype_attr, register

__all__ = ["PACK", "UNPACK", "pack"]


def _apply(op_def, inputs, attrs, graph):
    if graph is None:
        return eager.execute(op_def, inputs, attrs)
    op = graph.create_op(op_def, inputs, attrs)
    if tape_mod.recording():
        tape_mod.record(op, op.inputs, op.outputs)
    return op.outputs


def _graph_of(tensors):
    for t in tensors:
        if isinstance(t, SymbolicTensor):
            return t.graph
    return None


def _pack_kernel(attrs):
    dt = attrs["T"].np_dtype
    return lambda *xs: np.stack([np.asarray(x, dtype=dt) for x in xs], axis=0)


def _pack_infer(attrs, inputs):
    shape = UNKNOWN
    for t in inputs:
        s = t.shape
        if s.dims is None:
            continue
        if shape.dims is not None and not shape.is_compatible_with(s):
            raise ValueError(f"Shapes of all inputs must match to pack them: {shape} != {s} "
                             f"(input {t!r}).")
        shape = s if shape.dims is None else shape.merge_with(s)
    dims = None if shape.dims is None else (len(inputs),) + shape.dims
    return [(attrs["T"], TensorShape(dims))]


def _g_pack(op, inputs, outputs, grads):
    return list(_apply(UNPACK, [grads[0]], {"num": len(inputs), "T": op.attrs["T"]},
                       _graph_of(grads)))


def _unpack_kernel(attrs):
    n = attrs["num"]
    return lambda x: tuple(np.asarray(x)[i][()] if np.ndim(x) == 1 else np.asarray(x)[i]
                           for i in range(n))


def _unpack_infer(attrs, inputs):
    s = inputs[0].shape
    inner = UNKNOWN if s.dims is None else TensorShape(s.dims[1:])
    return [(inputs[0].dtype, inner)] * attrs["num"]


def _g_unpack(op, inputs, outputs, grads):
    return _apply(PACK, list(grads), {"N": len(grads), "T": op.attrs["T"]}, _graph_of(grads))


PACK = register(OpDef("Pack", kernel=_pack_kernel, infer=_pack_infer, grad=_g_pack,
                      cse_key=lambda op: (op.attrs["T"].name,),
                      attr_types={"T": dtype_attr, "N": int}))
UNPACK = register(OpDef("Unpack", kernel=_unpack_kernel, infer=_unpack_infer, grad=_g_unpack,
                        cse_key=lambda op: (op.attrs["num"],),
                        attr_types={"T": dtype_attr, "num": int}))


def pack(parts, dtype, graph=None):
    """One tensor stacking ``parts`` (tensors of ``dtype``) along a new first axis."""
    return _apply(PACK, list(parts), {"N": len(parts), "T": dtype}, graph)[0]
