"""Nested fetch structures: flatten to a list of graph elements, rebuild the results."""
from __future__ import annotations

from ..graph.operation import Operation
from ..graph.tensor import Tensor

__all__ = ["flatten_fetches", "rebuild"]


def flatten_fetches(fetches, graph, out: list):
    """Append the leaves of ``fetches`` to ``out``; return a hashable structure key."""
    if isinstance(fetches, (Tensor, Operation, str)):
        try:
            out.append(graph.as_graph_element(fetches))
        except KeyError as e:
            raise ValueError(f"Fetch argument {fetches!r} cannot be interpreted as a Tensor. "
                             f"({e.args[0]})") from None
        return fetches
    if isinstance(fetches, dict):
        return ("dict", tuple((k, flatten_fetches(v, graph, out)) for k, v in fetches.items()))
    if isinstance(fetches, (list, tuple)):
        return (type(fetches), tuple(flatten_fetches(v, graph, out) for v in fetches))
    if fetches is None:
        raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
    raise TypeError(f"Fetch argument {fetches!r} has invalid type {type(fetches)}, must be a "
                    "string, Tensor or Operation (or a list/tuple/dict of them).")


def rebuild(key, values_iter):
    """The fetched values in the structure ``key`` describes."""
    if isinstance(key, tuple) and len(key) == 2 and (key[0] == "dict" or isinstance(key[0], type)):
        kind, items = key
        if kind == "dict":
            return {k: rebuild(sub, values_iter) for k, sub in items}
        values = [rebuild(sub, values_iter) for sub in items]
        if kind is list:
            return values
        if kind is tuple:
            return tuple(values)
        try:
            return kind(*values)  # namedtuple
        except TypeError:
            return kind(values)
    return next(values_iter)
