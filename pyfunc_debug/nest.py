"""Nested structures (lists, tuples, namedtuples, dicts) as TensorFlow's ``tf.nest`` sees them.

Dict values are visited in sorted key order, as in ``tf.nest``.
"""
from __future__ import annotations

__all__ = ["flatten", "map_structure", "pack_sequence_as"]


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def flatten(x) -> list:
    """The leaves of ``x``, depth first."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in flatten(item)]
    return [x]


def _rebuild(template, items):
    if isinstance(template, list):
        return list(items)
    if _is_namedtuple(template):
        return type(template)(*items)
    return type(template)(items)


def map_structure(fn, x):
    """``x`` with every leaf replaced by ``fn(leaf)``."""
    if isinstance(x, dict):
        return {k: map_structure(fn, v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return _rebuild(x, [map_structure(fn, v) for v in x])
    return fn(x)


def pack_sequence_as(template, flat: list):
    """``flat`` (as ``flatten(template)`` orders it) in the shape of ``template``."""
    it = iter(flat)

    def build(t):
        if isinstance(t, dict):
            values = {k: build(t[k]) for k in sorted(t)}
            return {k: values[k] for k in t}
        if isinstance(t, (list, tuple)):
            return _rebuild(t, [build(v) for v in t])
        return next(it)
    return build(template)
