"""Python/numpy values to tensors: ``convert_to_tensor`` and ``constant`` (TF#10, TF#22)."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dtypes import DType, as_dtype, scalar_or_array, to_bytes_array
from ..graph.graph import building, building_graph
from ..graph.tensor import SymbolicTensor, TensorBase
from ..eager.tensor import EagerTensor
from .pack_ops import pack
from .registry import OpDef, dtype_attr, register

__all__ = ["to_numpy", "to_bytes_array", "convert_to_tensor", "constant",
           "as_tensor_in", "scalar_or_array"]

_PY_SCALARS = (int, float, bool, str, bytes, list, tuple)


def _is_stringy(value) -> bool:
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SU" or (value.dtype.kind == "O" and value.size > 0
                                            and isinstance(value.flat[0], (str, bytes)))
    if isinstance(value, (list, tuple)) and value:
        first = value[0]
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        return isinstance(first, (str, bytes))
    return False


def to_numpy(value, dtype: DType | None = None):
    """Convert ``value`` to the numpy form a tensor of ``dtype`` holds."""
    if value is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type "
                         "(<class 'NoneType'>) to a Tensor.")
    if (dtype is not None and dtype.is_string) or (dtype is None and _is_stringy(value)):
        return scalar_or_array(to_bytes_array(value))
    from_python = not isinstance(value, (np.ndarray, np.generic))
    try:
        arr = np.asarray(value)
    except ValueError as e:  # ragged lists
        raise TypeError(f"Cannot convert {value!r} to a tensor: {e}") from None
    if arr.dtype.kind == "O" or arr.dtype.kind not in "biufc":
        raise TypeError(f"Attempt to convert a value ({value!r}) with an unsupported type "
                        f"({type(value)}) to a Tensor.")
    if dtype is None:
        if from_python:
            if arr.dtype == np.float64:
                arr = arr.astype(np.float32)
            elif arr.dtype == np.int64:
                info = np.iinfo(np.int32)
                if arr.size == 0 or (arr.min() >= info.min and arr.max() <= info.max):
                    arr = arr.astype(np.int32)
        elif arr.dtype not in dtypes._BY_NP:
            raise TypeError(f"Unsupported numpy data type {arr.dtype} for a tensor.")
        return scalar_or_array(arr)
    target = dtype.np_dtype
    if arr.dtype != target:
        if from_python and dtype.is_integer and arr.dtype.kind == "f" \
                and not np.all(np.equal(np.mod(arr, 1), 0)):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        if arr.dtype.kind == "c" and not dtype.is_complex:
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        if from_python and dtype.is_bool and arr.dtype.kind != "b":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype bool")
        arr = arr.astype(target)
    return scalar_or_array(arr)


def _is_variable(value) -> bool:
    return getattr(type(value), "_pfd_variable", False)


def _has_tensor(value) -> bool:
    if isinstance(value, TensorBase) or _is_variable(value):
        return True
    return isinstance(value, (list, tuple)) and any(_has_tensor(v) for v in value)


def _first_tensor(value):
    if isinstance(value, TensorBase) or _is_variable(value):
        return value
    for v in value:
        found = _first_tensor(v) if isinstance(v, (list, tuple, TensorBase)) or \
            _is_variable(v) else None
        if found is not None:
            return found
    return None


def _pack_mixed(value, dtype):
    """A (nested) list mixing tensors and numbers as one tensor: a Pack op in a graph."""
    symbolic = _first_symbolic(value)
    graph = symbolic.graph if symbolic is not None else building_graph()
    dtype = dtype or _first_tensor(value).dtype

    def build(v):
        if isinstance(v, (list, tuple)):
            if not v:
                raise ValueError(f"Cannot pack an empty list together with tensors: {value!r}")
            return pack([build(x) for x in v], dtype, graph)
        if _is_variable(v):
            v = v._pfd_tensor(graph)
        if isinstance(v, TensorBase):
            if v.dtype is not dtype:
                raise TypeError(f"Cannot pack a {v.dtype.name} tensor {v!r} into a {dtype.name} "
                                "tensor: all tensors in the list must share one dtype.")
            return as_tensor_in(v, graph) if graph is not None else v
        arr = to_numpy(v, dtype)
        return const_in_graph(graph, arr, dtype) if graph is not None else EagerTensor(arr, dtype)
    return build(value)


def _first_symbolic(value):
    if isinstance(value, SymbolicTensor):
        return value
    if isinstance(value, (list, tuple)):
        for v in value:
            found = _first_symbolic(v)
            if found is not None:
                return found
    return None


def convert_to_tensor(value, dtype=None, name=None, dtype_hint=None):
    """A ``Tensor`` for ``value``: a constant, or a Pack of a list that mixes tensors and numbers."""
    dtype = None if dtype is None else as_dtype(dtype)
    if _is_variable(value):
        value = value._pfd_tensor()
    if isinstance(value, (list, tuple)) and _has_tensor(value):
        return _pack_mixed(value, dtype)
    if isinstance(value, TensorBase):
        if dtype is not None and value.dtype is not dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor "
                             f"with dtype {value.dtype.name}: {value!r}")
        return value
    if dtype is None and dtype_hint is not None and not isinstance(value, (np.ndarray, np.generic)):
        try:
            return constant(value, as_dtype(dtype_hint), name=name)
        except (TypeError, ValueError):
            pass
    return constant(value, dtype, name=name)


def constant(value, dtype=None, shape=None, name=None):
    """A constant: built into the graph when building, else an ``EagerTensor``."""
    dtype = None if dtype is None else as_dtype(dtype)
    if isinstance(value, TensorBase):
        value = np.asarray(value)
    arr = to_numpy(value, dtype)
    if isinstance(arr, np.ndarray) and arr is value:
        arr = arr.copy()  # a constant does not alias the caller's array (TF#49)
    if shape is not None:
        arr = scalar_or_array(np.broadcast_to(np.asarray(arr), tuple(shape)).copy()
                              if np.size(arr) == 1 else np.reshape(arr, tuple(shape)))
    dt = dtype or (dtypes.string if isinstance(arr, bytes) else as_dtype(arr.dtype))
    graph = building_graph()
    if graph is None:
        return EagerTensor(arr, dt)
    return const_in_graph(graph, arr, dt, name)


def _const_kernel(attrs):
    value = attrs["value"]
    return lambda: value


CONST = register(OpDef("Const", kernel=_const_kernel,
                       infer=lambda a, i: [(a["dtype"], np.shape(a["value"]))],
                       attr_types={"dtype": dtype_attr,
                                   "value": (np.ndarray, np.generic, bytes)}))


def const_in_graph(graph, value, dtype, name=None) -> SymbolicTensor:
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    op = graph.create_op(CONST, (), {"value": value, "dtype": dtype}, name=name or "Const",
                         out_specs=[(dtype, np.shape(value))])
    return op.outputs[0]


def as_tensor_in(value, graph, dtype=None):
    """``value`` as a symbolic tensor of ``graph`` (eager values become constants)."""
    if isinstance(value, SymbolicTensor):
        return value
    if isinstance(value, EagerTensor):
        return const_in_graph(graph, value._value, value.dtype)
    if _is_variable(value):
        return as_tensor_in(value._pfd_tensor(graph), graph, dtype)
    dt = None if dtype is None else as_dtype(dtype)
    if isinstance(value, (list, tuple)) and _has_tensor(value):
        with building(graph):
            return as_tensor_in(_pack_mixed(value, dt), graph)
    arr = to_numpy(value, dt)
    return const_in_graph(graph, arr, dt or as_dtype(np.asarray(arr).dtype))
