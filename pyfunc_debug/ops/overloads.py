"""Python operators on tensors (``+ - * / ** @ -x abs() < <= > >= == !=``), both kinds."""
from __future__ import annotations

from ..graph.tensor import TensorBase
from . import math_ops as m

__all__ = ["install"]


def _flip(fn):
    return lambda self, other: fn(other, self)


def _eq(self, other):
    try:
        return m.equal(self, other)
    except (TypeError, ValueError):
        return NotImplemented


def _ne(self, other):
    try:
        return m.not_equal(self, other)
    except (TypeError, ValueError):
        return NotImplemented


_OPERATORS = {
    "__add__": m.add, "__radd__": _flip(m.add),
    "__sub__": m.subtract, "__rsub__": _flip(m.subtract),
    "__mul__": m.multiply, "__rmul__": _flip(m.multiply),
    "__truediv__": m.divide, "__rtruediv__": _flip(m.divide),
    "__pow__": m.pow, "__rpow__": _flip(m.pow),
    "__matmul__": m.matmul, "__rmatmul__": _flip(m.matmul),
    "__neg__": m.negative, "__abs__": m.abs,
    "__lt__": m.less, "__le__": m.less_equal, "__gt__": m.greater, "__ge__": m.greater_equal,
    "__eq__": _eq, "__ne__": _ne,
}


def install(cls=TensorBase) -> None:
    for name, fn in _OPERATORS.items():
        setattr(cls, name, lambda self, *a, _fn=fn: _fn(self, *a))


install()
