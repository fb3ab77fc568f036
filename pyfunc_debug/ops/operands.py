"""Operands of the math ops as tensors of one dtype, as TF converts Python values."""
from __future__ import annotations

import numpy as np

from ..graph.tensor import TensorBase
from .convert import convert_to_tensor

__all__ = ["as_tensor", "pair"]


def as_tensor(x, dtype=None):
    return x if isinstance(x, TensorBase) else convert_to_tensor(x, dtype)


def _operand(value, dtype):
    if isinstance(value, (np.ndarray, np.generic)):
        return convert_to_tensor(value)
    return convert_to_tensor(value, dtype)


def pair(x, y, op_name):
    """Convert the operands of a binary op to one dtype (a Python value takes the other's)."""
    if getattr(type(x), "_pfd_variable", False):
        x = x._pfd_tensor()
    if getattr(type(y), "_pfd_variable", False):
        y = y._pfd_tensor()
    if isinstance(x, TensorBase) and not isinstance(y, TensorBase):
        y = _operand(y, x.dtype)
    elif isinstance(y, TensorBase) and not isinstance(x, TensorBase):
        x = _operand(x, y.dtype)
    else:
        x, y = as_tensor(x), as_tensor(y)
    if x.dtype is not y.dtype:
        raise TypeError(f"Input 'y' of '{op_name}' Op has type {y.dtype.name} that does not "
                        f"match type {x.dtype.name} of argument 'x'.")
    return x, y
