"""Feed keys and values checked against their placeholders.

Every failure is a ``TypeError`` or ``ValueError`` naming the tensor (SPEC §2a):
never numpy's ``OverflowError`` or a lookup's ``KeyError``.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import scalar_or_array, to_bytes_array
from ..graph.tensor import SymbolicTensor, Tensor

__all__ = ["convert_feed", "feed_tensor"]


def feed_tensor(graph, key) -> SymbolicTensor:
    """The graph tensor a ``feed_dict`` key names."""
    if isinstance(key, str):
        try:
            key = graph.get_tensor_by_name(key)
        except KeyError as e:  # (a ValueError already names the key)
            raise TypeError(f"Cannot interpret feed_dict key {key!r} as a Tensor: "
                            f"{e.args[0] if e.args else e}") from None
    if isinstance(key, Tensor) and not isinstance(key, SymbolicTensor):
        raise TypeError("Cannot use an EagerTensor as a feed key: feed placeholders "
                        "(symbolic tensors) of the session's graph.")
    if not isinstance(key, SymbolicTensor):
        raise TypeError(f"Cannot interpret feed_dict key {key!r} as a Tensor.")
    if key.graph is not graph:
        raise ValueError(f"Feed key {key!r} is not an element of this session's graph.")
    return key


def convert_feed(tensor, value):
    """A fed value in the placeholder's dtype, checked against its static shape."""
    dtype = tensor.dtype
    if isinstance(value, SymbolicTensor):
        raise TypeError(f"The value of a feed cannot be a pfd.Tensor object ('{value.name}'). "
                        "Acceptable feed values include Python scalars, strings, lists, "
                        "numpy ndarrays, or EagerTensors.")
    if value is None:
        raise TypeError(f"Cannot feed None to tensor '{tensor.name}' of dtype {dtype.name}.")
    if isinstance(value, Tensor):  # an EagerTensor
        value = value._value
    try:
        if dtype.is_string:
            arr = to_bytes_array(value)
        else:
            arr = np.asarray(value, dtype=dtype.np_dtype)
    except OverflowError as e:
        raise ValueError(f"Cannot feed {_short(value)} to tensor '{tensor.name}' of dtype "
                         f"{dtype.name}: {e}") from None
    except (TypeError, ValueError) as e:
        raise TypeError(f"Cannot feed {_short(value)} to tensor '{tensor.name}' of dtype "
                        f"{dtype.name}: {e}") from None
    if not tensor.shape.is_compatible_with(arr.shape):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor '{tensor.name}', "
                         f"which has shape {tensor.shape} (op '{tensor.op.name}' created at "
                         f"{tensor.op.source}).")
    return scalar_or_array(arr)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
