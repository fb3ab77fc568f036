"""Fetch arguments resolved to graph elements (the structure itself is ``nest``'s job)."""
from __future__ import annotations

from ..graph.operation import Operation
from ..graph.tensor import SymbolicTensor
from ..nest import flatten

__all__ = ["resolve_fetches"]


def _resolve(fetch, graph):
    if isinstance(fetch, (SymbolicTensor, Operation, str)) or \
            getattr(type(fetch), "_pfd_variable", False):
        try:
            return graph.as_graph_element(fetch)
        except KeyError as e:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                             f"({e.args[0]})") from None
    if fetch is None:
        raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
    raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a "
                    "string, Tensor or Operation (or a list/tuple/dict of them).")


def resolve_fetches(fetches, graph) -> list:
    """The graph elements of ``fetches``' leaves, in ``nest.flatten`` order."""
    return [_resolve(f, graph) for f in flatten(fetches)]
