"""The Breakpoint op: an identity that pauses when a debugger is attached."""
from __future__ import annotations

from .dispatch import apply1
from .registry import OpDef, register

__all__ = ["BREAKPOINT", "breakpoint_op"]

# stateful: never de-duplicated or folded, so each one pauses where it was put
BREAKPOINT = register(OpDef("Breakpoint", kernel=lambda attrs: (lambda x: x),
                            infer=lambda a, i: [(i[0].dtype, i[0].shape)],
                            grad=lambda op, i, o, g: [g[0]], stateful=True))


def breakpoint_op(x, name=None):
    from .convert import convert_to_tensor
    from ..graph.tensor import TensorBase
    x = x if isinstance(x, TensorBase) else convert_to_tensor(x)
    return apply1(BREAKPOINT, [x], {}, name or "breakpoint")
