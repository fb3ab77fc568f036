"""Events <-> plain JSON objects (``{"type": "OpEnd", ...}``), shared by the file formats.

Decoding only builds the known event records from plain data: nothing in a
trace file is ever executed or unpickled.
"""
from __future__ import annotations

from ..events import EVENT_TYPES
from .summary import ValueSummary

__all__ = ["event_to_json", "event_from_json", "summary_to_json", "summary_from_json"]

_SUMMARY_FIELDS = ValueSummary._fields[:-1]  # ``value`` is stored apart from the event


def summary_to_json(s: ValueSummary, value_key: str | None = None) -> dict:
    d = {k: getattr(s, k) for k in _SUMMARY_FIELDS}
    d["shape"] = list(s.shape)
    if value_key is not None:
        d["value_key"] = value_key
    return d


def summary_from_json(d: dict, values=None) -> ValueSummary:
    kw = {k: d[k] for k in _SUMMARY_FIELDS if k in d}
    kw["shape"] = tuple(d.get("shape", ()))
    key = d.get("value_key")
    if key is not None and values is not None:
        kw["value"] = values.get(key)
    return ValueSummary(**kw)


def event_to_json(event, value_keys=None) -> dict:
    """``value_keys(event, "inputs"|"outputs", i)`` names a stored value, or None."""
    d = {"type": type(event).__name__}
    for name, v in zip(event._fields, event):
        if name in ("inputs", "outputs"):
            d[name] = [summary_to_json(s, value_keys(event, name, i) if value_keys and
                                       s.value is not None else None)
                       for i, s in enumerate(v)]
        elif isinstance(v, tuple):
            d[name] = [list(x) if isinstance(x, tuple) else x for x in v]
        else:
            d[name] = v
    return d


def event_from_json(d: dict, values=None):
    cls = EVENT_TYPES.get(d.get("type"))
    if cls is None:
        raise ValueError(f"unknown event type {d.get('type')!r}")
    kw = {}
    for name in cls._fields:
        if name not in d:
            continue
        v = d[name]
        if name in ("inputs", "outputs"):
            v = tuple(summary_from_json(s, values) for s in v)
        elif isinstance(v, list):
            v = tuple(tuple(x) if isinstance(x, list) else x for x in v)
        kw[name] = v
    return cls(**kw)
