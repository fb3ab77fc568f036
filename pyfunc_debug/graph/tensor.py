"""Symbolic tensors: the outputs of ops in a graph.

``Tensor`` is the public base of both kinds, as in TensorFlow:
``SymbolicTensor`` (a graph output) and ``EagerTensor`` (a value) subclass it,
so ``isinstance(x, pfd.Tensor)`` holds for both. ``ops/overloads.py`` installs
the Python operators on the base, so both overload ``+ - * / ...`` the same way.
"""
from __future__ import annotations

from ..errors import OperatorNotAllowedInGraphError
from .defaults import require_session
from .shape import TensorShape, as_shape

__all__ = ["Tensor", "TensorBase", "SymbolicTensor", "TensorSpec"]


class Tensor:
    """A tensor: symbolic (``SymbolicTensor``) or concrete (``EagerTensor``)."""

    __slots__ = ()
    __array_priority__ = 100  # make ndarray + tensor defer to our __radd__


TensorBase = Tensor  # the name the ops use for "either kind"


class SymbolicTensor(Tensor):
    """A symbolic output ``op:index`` of an ``Operation`` in a ``Graph``."""

    __slots__ = ("op", "value_index", "dtype", "_shape", "__weakref__")

    def __init__(self, op, value_index: int, dtype, shape):
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self._shape = as_shape(shape)

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self):
        return self.op.graph

    @property
    def device(self) -> str:
        return self.op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        """Refine the static shape (what callers do after a py_func, TF#25)."""
        self._shape = self._shape.merge_with(shape)

    def eval(self, feed_dict=None, session=None):
        """This tensor's value in ``session`` (default: the default session)."""
        return require_session(session, f"Tensor '{self.name}'").run(self, feed_dict)

    def consumers(self) -> list:
        return [op for op in self.op.graph.get_operations()
                if any(t is self for t in op.inputs)]

    def __repr__(self) -> str:
        return f"<pfd.Tensor '{self.name}' shape={self._shape} dtype={self.dtype.name}>"

    __hash__ = object.__hash__

    def __bool__(self):
        raise OperatorNotAllowedInGraphError(
            f"Using a symbolic pfd.Tensor ('{self.name}') as a Python bool is not "
            "allowed: its value is only known when the graph runs. Use pfd.where "
            "or compute the condition inside a py_function.")

    def __iter__(self):
        raise OperatorNotAllowedInGraphError(
            f"Iterating over a symbolic pfd.Tensor ('{self.name}') is not allowed. "
            "Pass inputs as a list, e.g. inp=[x].")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensor '{self.name}'.")


class TensorSpec:
    """Shape and dtype of a ``function`` argument (``TensorSpec(None, float32)``)."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=None, name=None):
        from ..dtypes import as_dtype, float32
        self.shape = as_shape(shape)
        self.dtype = float32 if dtype is None else as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, value) -> bool:
        return value.dtype is self.dtype and self.shape.is_compatible_with(value.shape)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TensorSpec) and other.shape == self.shape
                and other.dtype is self.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=pfd.{self.dtype.name}, name={self.name!r})"
