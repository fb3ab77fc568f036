"""DType objects (``pfd.float32`` ...), conversion from numpy/Python types, and the
two value forms every layer shares (rank-0 scalars, string tensors)."""
from __future__ import annotations

import builtins

import numpy as np

__all__ = ["DType", "as_dtype", "float16", "float32", "float64", "int8", "int16",
           "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
           "string", "complex64", "complex128", "ALL", "scalar_or_array", "to_bytes_array"]


class DType:
    """A tensor element type: ``.name`` and the numpy type it stores as."""

    __slots__ = ("name", "as_numpy_dtype", "np_dtype", "is_floating",
                 "is_integer", "is_bool", "is_string", "is_complex")

    def __init__(self, name: str, np_type):
        self.name = name
        self.as_numpy_dtype = np_type
        self.np_dtype = np.dtype(np_type)
        kind = self.np_dtype.kind
        self.is_floating = kind == "f"
        self.is_integer = kind in "iu"
        self.is_bool = kind == "b"
        self.is_string = kind == "O"
        self.is_complex = kind == "c"

    @property
    def is_differentiable(self) -> bool:
        """Floating or complex: the types gradients flow through (as in TF)."""
        return self.is_floating or self.is_complex

    @property
    def real_dtype(self) -> "DType":
        """float32 for complex64, float64 for complex128, else itself."""
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def __repr__(self) -> str:
        return f"pfd.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: '{self.name}'>"

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool = DType("bool", np.bool_)  # noqa: A001 - TF's public name
string = DType("string", np.object_)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
       uint32, uint64, bool, string, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16})
_BY_NP = {d.np_dtype: d for d in ALL}
_BY_PY = {float: float32, int: int32, builtins.bool: bool, str: string, bytes: string,
          complex: complex128}


def as_dtype(value) -> DType:
    """Convert a ``DType``, numpy dtype/type, name or Python type to a ``DType``."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        found = _BY_PY.get(value)
    except TypeError:  # unhashable, e.g. {}
        found = None
    if found is not None:
        return found
    try:
        np_dtype = np.dtype(value) if value is not None else None
    except TypeError:
        np_dtype = None
    if np_dtype is not None:
        if np_dtype.kind in "SU":
            return string
        if np_dtype in _BY_NP:
            return _BY_NP[np_dtype]
    raise TypeError(f"Cannot convert the argument `type_value`: {value!r} "
                    "to a pyfunc_debug DType.")


def scalar_or_array(arr):
    """Rank-0 values travel as numpy scalars (TF#13), others as arrays."""
    return arr[()] if isinstance(arr, np.ndarray) and arr.ndim == 0 else arr


def _encode(x):
    if type(x) is bytes:
        return x
    if isinstance(x, bytes):  # np.bytes_: plain bytes, as TF fetches them
        return bytes(x)
    if isinstance(x, str):
        return x.encode("utf-8")
    raise TypeError(f"Expected bytes or str in a string tensor, got {type(x).__name__}: {x!r}")


def to_bytes_array(value) -> np.ndarray:
    """Strings as an object array of UTF-8 ``bytes`` (TF#22)."""
    arr = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if arr.dtype.kind in "SUO":
        out = np.empty(arr.shape, dtype=object)
        flat_in = arr.reshape(-1)
        flat_out = out.reshape(-1)
        for i in range(flat_in.size):
            flat_out[i] = _encode(flat_in[i])
        return out
    raise TypeError(f"Cannot convert a {arr.dtype} array to a string tensor.")
