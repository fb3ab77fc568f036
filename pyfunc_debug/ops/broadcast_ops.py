"""Reducing a gradient to an input's shape, and broadcasting it back (gradient helpers)."""
from __future__ import annotations

import numpy as np

from ..dtypes import scalar_or_array
from .dispatch import apply1
from .registry import OpDef, register

__all__ = ["sum_to", "SUM_TO_SHAPE", "BROADCAST_LIKE"]


def sum_to(g, x):
    """``g`` summed over the axes ``x`` was broadcast along (identity when shapes agree)."""
    if g.shape.is_fully_defined() and g.shape == x.shape:
        return g
    return apply1(SUM_TO_SHAPE, [g, x], {})


def _sum_to_kernel(attrs):
    def k(g, x):
        gs, xs = np.shape(g), np.shape(x)
        if gs == xs:
            return g
        lead = len(gs) - len(xs)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, d in enumerate(xs) if d == 1 and gs[i + lead] != 1)
        g = np.asarray(g)
        r = np.sum(g, axis=axes, keepdims=True, dtype=g.dtype) if axes else g
        return scalar_or_array(np.reshape(r, xs))
    return k


def _g_sum_to(op, inputs, outputs, grads):
    return [apply1(BROADCAST_LIKE, [grads[0], inputs[0]], {}), None]


def _broadcast_like_kernel(attrs):
    return lambda u, g: scalar_or_array(np.array(np.broadcast_to(u, np.shape(g))))


def _g_broadcast_like(op, inputs, outputs, grads):
    return [sum_to(grads[0], inputs[0]), None]


def _no_attrs(op):
    return ()


SUM_TO_SHAPE = register(OpDef("SumToShapeOf", kernel=_sum_to_kernel,
                              infer=lambda a, i: [(i[0].dtype, i[1].shape)], grad=_g_sum_to,
                              cse_key=_no_attrs))
BROADCAST_LIKE = register(OpDef("BroadcastToShapeOf", kernel=_broadcast_like_kernel,
                                infer=lambda a, i: [(i[0].dtype, i[1].shape)],
                                grad=_g_broadcast_like, cse_key=_no_attrs))
