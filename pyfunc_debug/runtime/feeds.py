"""Feed keys and values checked against their placeholders.

Every failure is a ``TypeError`` or ``ValueError`` naming the tensor (SPEC §2a):
never numpy's ``OverflowError`` or a lookup's ``KeyError``.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import scalar_or_array, to_bytes_array
from ..graph.tensor import SymbolicTensor, Tensor
from ..source_text import relative_source

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
    if isinstance(value, SymbolicTensor) or _is_graph_variable(value):
        # TF's wording, naming the placeholder fed as well as the value
        raise TypeError("The value of a feed cannot be a pfd.Tensor object. Acceptable feed "
                        "values include Python scalars, strings, lists, numpy ndarrays, or "
                        f"EagerTensors. For reference, the tensor object was {_short(value)} "
                        f"which was passed to the argument `feed_dict` with key {tensor}.")
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
    except Exception as e:  # noqa: BLE001 - whatever a fed object's conversion raises
        raise TypeError(f"Cannot feed {_short(value)} to tensor '{tensor.name}' of dtype "
                        f"{dtype.name}: {type(e).__name__}: {e}") from e
    if not tensor.shape.is_compatible_with(arr.shape):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor '{tensor.name}', "
                         f"which has shape {tensor.shape} (op '{tensor.op.name}' created at "
                         f"{relative_source(str(tensor.op.source))}).")
    return scalar_or_array(arr)


def _is_graph_variable(value) -> bool:
    """A graph ``Variable``: symbolic like a tensor (it has no value outside a session)."""
    return getattr(type(value), "_pfd_variable", False) and \
        getattr(value, "_graph", None) is not None


def _short(value) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a user object whose repr fails
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 80 else text[:77] + "..."
