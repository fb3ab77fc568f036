"""Turning what a wrapped function returned into output values.

``py_func``/``numpy_function`` in a graph: split as TF does, then check the
count and each dtype exactly — never cast (TF#17–23). ``py_function``: convert
each result to its ``Tout`` like ``convert_to_tensor`` (TF#26–28).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import _BY_NP, DType
from ..eager.tensor import EagerTensor
from ..errors import InternalError, InvalidArgumentError, UnknownError
from .convert import convert_to_tensor, scalar_or_array, to_bytes_array

__all__ = ["strict_checker", "split_strict", "convert_eager_results"]


def _dtype_name(arr) -> str:
    dt = arr.dtype
    if dt.kind in "SUO":
        return "string"
    found = _BY_NP.get(dt)
    return found.name if found is not None else str(dt)


def _count_error(token: str, got: int, want: int):
    return InvalidArgumentError(None, None, f"{token} returns {got} values, but expects to see "
                                f"{want} values.")


# numpy types TF names when it refuses them (``NdarrayToTensor``)
_NPY_NAMES = {"g": "NPY_LONGDOUBLE", "G": "NPY_CLONGDOUBLE", "M": "NPY_DATETIME",
              "m": "NPY_TIMEDELTA"}


def _tf_convert(value) -> np.ndarray:
    """One returned value as TF's ``FuncRegistry._convert`` makes it, quirks included.

    ``bytes`` (and lists of them) become object arrays of the very objects
    returned, so NULs survive; other ``str`` values are UTF-8 encoded; a ``U``
    array returned as it is goes through ``astype(bytes)``, which only takes
    ASCII (TF fails on ``np.array(["é"])`` with ``UnicodeEncodeError``). Its
    exceptions are the function's own (mapped like one it raised).
    """
    result = np.asarray(value, order="C")
    char = result.dtype.char
    if char == "S" and result is not value:
        return np.asarray(value, order="C", dtype=object)
    if char == "U" and result is not value:
        value = np.vectorize(lambda x: x.encode("utf8"))(value)
        return np.asarray(value, order="C", dtype=object)
    if char == "U":
        return result.astype(np.bytes_)
    return result


def _to_array(value) -> np.ndarray:
    """One returned value as an array, rejecting what TF cannot hold (TF#23)."""
    arr = _tf_convert(value)
    dt = arr.dtype
    if dt.names is not None or dt.kind == "V":
        raise InternalError(None, None, "Unsupported numpy data type")
    if dt.kind == "O":
        for item in arr.reshape(-1):
            if not isinstance(item, (bytes, str)):
                raise InternalError(None, None, f"Unsupported object type {type(item).__name__}")
        return arr
    if dt.char in _NPY_NAMES:
        raise InternalError(None, None, f"Unsupported numpy type: {_NPY_NAMES[dt.char]}")
    if dt.kind not in "biufcS":
        raise InternalError(None, None, f"Unsupported numpy data type {dt}")
    if not dt.isnative:  # TF would read the bytes as they lie (a wrong value): swap them
        arr = arr.astype(dt.newbyteorder("="))
    return arr


def split_strict(ret) -> list:
    """Split a return value into outputs as TF's registry does (TF#17, TF#21).

    Exceptions other than ``OpError``s come from the conversion TF makes in
    Python: callers map them as they map the function's own.
    """
    if ret is None:
        return []
    if isinstance(ret, bytes):
        return [_to_array(ret)]
    if isinstance(ret, (list, tuple)):
        return [_to_array(v) for v in ret]
    if isinstance(ret, np.ndarray) and ret.dtype.kind == "O" and ret.ndim == 0 and ret[()] is None:
        return []
    return [_to_array(ret)]


def _check_one(arr: np.ndarray, want: DType, index: int, token: str):
    if want.is_string:
        if arr.dtype.kind not in "SUO":
            raise _dtype_error(index, token, _dtype_name(arr), want)
        return scalar_or_array(to_bytes_array(arr))
    if arr.dtype != want.np_dtype:
        raise _dtype_error(index, token, _dtype_name(arr), want)
    return scalar_or_array(arr)


def _dtype_error(index, token, got, want):
    hint = ("py_func/numpy_function never cast results: return e.g. "
            f"`np.asarray(result, dtype=np.{want.np_dtype.name if not want.is_string else 'object_'})`"
            " or change Tout.")
    return InvalidArgumentError(None, None, f"{index}-th value returned by {token} is {got}, "
                                f"but expects {want.name}\nHint: {hint}")


_checkers: dict = {}


def strict_checker(touts: tuple):
    """The result check ``check(ret, token)`` for py_func/numpy_function returning ``touts``.

    Shared by every op with the same ``Tout`` (a big graph holds one per
    signature, not two closures per op); fast path for one plain output.
    """
    found = _checkers.get(touts)
    if found is None:
        found = _checkers[touts] = _make_checker(touts)
    return found


def _make_checker(touts: tuple):
    n = len(touts)

    def check(ret, token):
        arrays = split_strict(ret)
        if len(arrays) != n:
            raise _count_error(token, len(arrays), n)
        values = [_check_one(a, dt, i, token) for i, (a, dt) in enumerate(zip(arrays, touts))]
        return values[0] if n == 1 else (tuple(values) if n else None)

    if n != 1 or touts[0].is_string:
        return check
    np_dtype = touts[0].np_dtype
    scalar_type = np_dtype.type
    ndarray = np.ndarray

    def check1(ret, token):
        cls = ret.__class__
        if cls is scalar_type:
            return ret
        if cls is ndarray and ret.dtype == np_dtype and ret.ndim:
            return ret
        return check(ret, token)
    return check1


def convert_eager_results(ret, touts: tuple, token: str) -> list:
    """py_function results as ``EagerTensor``s of ``touts`` (TF#26–28)."""
    from ..graph.tensor import SymbolicTensor
    if not touts:
        if ret is None:
            return []
        raise UnknownError(None, None, "IndexError: list index out of range")
    if ret is None:
        values = []
    elif isinstance(ret, (list, tuple)):
        values = list(ret)
    else:
        values = [ret]
    if len(values) < len(touts):
        raise _count_error(token, len(values), len(touts))
    out = []
    for v, dt in zip(values, touts):  # extra values are dropped, as TF's zip does
        if v.__class__ is np.ndarray and v.ndim and v.dtype == dt.np_dtype and not dt.is_string:
            out.append(EagerTensor(v, dt))  # wrapped without a copy, as TF does (TF#50)
            continue
        if getattr(type(v), "_pfd_variable", False):  # TF#29
            raise UnknownError(None, None, "RuntimeError: Attempting to return a variable from "
                               "an eagerly executed py_func. Only numeric data structures like "
                               "Tensors or NumPy arrays should be returned; to return the value "
                               "of a variable, make sure to obtain the Tensor backing it by "
                               f"calling `.read_value()` on the variable in question: {v!r}")
        if isinstance(v, SymbolicTensor):
            raise InvalidArgumentError(None, None, f"TypeError: {v!r} is out of scope and cannot "
                                       "be used here: a py_function body runs eagerly.")
        try:
            out.append(convert_to_tensor(v, dt))
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError(None, None, f"{type(e).__name__}: {e}") from e
    return out
