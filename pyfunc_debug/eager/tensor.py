"""EagerTensor: a value computed at once, with TensorFlow's eager-tensor API."""
from __future__ import annotations

import numpy as np

from ..dtypes import as_dtype
from ..graph.shape import TensorShape
from ..graph.tensor import TensorBase

__all__ = ["EagerTensor", "read_only"]


def read_only(value):
    """``value``, or a read-only view of it when it is a writeable array (no copy).

    A py_function in a graph gets its inputs this way: ``np.asarray(x)`` and eager
    ops read them without a copy, and nothing can write into a constant, a feed
    or another op's result through them.
    """
    if value.__class__ is np.ndarray and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


class EagerTensor(TensorBase):
    """A concrete value: ``.numpy()``, ``.dtype``, ``.shape``; usable as an array."""

    __slots__ = ("_value", "dtype", "__weakref__")

    def __init__(self, value, dtype=None):
        self._value = value
        self.dtype = as_dtype(value.dtype) if dtype is None else dtype

    def numpy(self):
        """The value as numpy: a scalar for rank 0, else a copy of the array (TF#15: writing
        into it changes nothing). ``np.asarray(t)`` reads the array itself, without a copy."""
        v = self._value
        return v.copy() if isinstance(v, np.ndarray) else v

    @property
    def shape(self) -> TensorShape:
        return TensorShape(np.shape(self._value))

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return np.ndim(self._value)

    @property
    def device(self) -> str:
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def __array__(self, dtype=None, copy=None):
        arr = np.asarray(self._value)
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def _scalar(self, kind):
        if np.ndim(self._value) != 0:
            raise ValueError(f"Cannot convert a tensor of shape {self.shape} to a Python {kind.__name__}; "
                             "only rank-0 tensors can be.")
        return kind(self._value)

    def __bool__(self) -> bool:
        return self._scalar(bool)

    def __float__(self) -> float:
        return self._scalar(float)

    def __int__(self) -> int:
        return self._scalar(int)

    def __index__(self) -> int:
        if not self.dtype.is_integer:
            raise TypeError(f"Only integer tensors can be used as an index, not {self.dtype.name}.")
        return self._scalar(int)

    def __len__(self) -> int:
        if np.ndim(self._value) == 0:
            raise TypeError("len() of a rank-0 tensor is not defined.")
        return len(self._value)

    def __iter__(self):
        if np.ndim(self._value) == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (EagerTensor(v, self.dtype) for v in self._value)

    def __getitem__(self, index):
        return EagerTensor(np.asarray(self._value)[index], self.dtype)

    def __format__(self, spec: str) -> str:
        return format(self._value, spec) if np.ndim(self._value) == 0 else format(str(self), spec)

    __hash__ = None  # as in TF: compare with ==, key dicts with ``id`` or ``ref()``

    def ref(self):
        return _Ref(self)

    def __repr__(self) -> str:
        value = np.array2string(np.asarray(self._value), separator=", ")
        return f"<pfd.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={value}>"

    def __str__(self) -> str:
        return f"pfd.Tensor({str(np.asarray(self._value))}, shape={self.shape}, dtype={self.dtype.name})"


class _Ref:
    """Hashable reference to a tensor (``t.ref()``), compared by identity."""

    __slots__ = ("_t",)

    def __init__(self, t):
        self._t = t

    def deref(self):
        return self._t

    def __hash__(self):
        return id(self._t)

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._t is self._t
