"""Events <-> JSON rows, the line format of ``.jsonl`` traces.

A row is ``[type, field, field, ...]`` in the record's field order (the header
of a trace lists the fields of each type); a ``ValueSummary`` is a row of its
fields, plus a value key when a captured value is stored beside the trace.
Rows are what the fast C JSON encoder likes best. Decoding only builds the
known event records from plain data: nothing in a file is executed.
"""
from __future__ import annotations

from ..events import EVENT_TYPES
from .summary import ValueSummary

__all__ = ["event_to_row", "event_from_row", "schema", "SUMMARY_FIELDS"]

SUMMARY_FIELDS = ValueSummary._fields[:-1]  # ``value`` is stored apart from the event
_N_SUMMARY = len(SUMMARY_FIELDS)
# positions of summary tuples inside each event type's row (1-based: row[0] is the type)
_SUMMARY_POS = {name: tuple(i + 1 for i, f in enumerate(cls._fields) if f in ("inputs", "outputs"))
                for name, cls in EVENT_TYPES.items()}


def schema() -> dict:
    """Field names per row type, written in the trace header."""
    d = {name: list(cls._fields) for name, cls in EVENT_TYPES.items()}
    d["ValueSummary"] = list(SUMMARY_FIELDS) + ["value_key?"]
    return d


def _summary_row(s, key):
    row = list(s[:_N_SUMMARY])
    if key is not None:
        row.append(key)
    return row


def event_to_row(event, value_key=None) -> list:
    """``value_key(event, field, i)`` stores a captured value and names it."""
    name = event.__class__.__name__
    row = [name, *event]
    for pos in _SUMMARY_POS[name]:
        sums = row[pos]
        if value_key is None or all(s.value is None for s in sums):
            row[pos] = [s[:_N_SUMMARY] for s in sums]  # tuples encode as JSON arrays
        else:
            field = event._fields[pos - 1]
            row[pos] = [_summary_row(s, value_key(event, field, i) if s.value is not None
                                     else None) for i, s in enumerate(sums)]
    return row


def _summary_from(row, values):
    if len(row) not in (_N_SUMMARY, _N_SUMMARY + 1):
        raise ValueError(f"a value summary has {len(row)} fields, expected {_N_SUMMARY}")
    value = None
    if len(row) > _N_SUMMARY and values is not None:
        value = values.get(row[_N_SUMMARY])
    return ValueSummary(tuple(row[0]), *row[1:_N_SUMMARY], value)


def _tuples(v):
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


def event_from_row(row, values=None):
    if not isinstance(row, list) or not row or row[0] not in EVENT_TYPES:
        raise ValueError(f"unknown event row {str(row)[:60]!r}")
    name = row[0]
    cls = EVENT_TYPES[name]
    fields = row[1:]
    if len(fields) != len(cls._fields):
        raise ValueError(f"{name} row has {len(fields)} fields, expected {len(cls._fields)}")
    summary_pos = _SUMMARY_POS[name]
    out = []
    for pos, v in enumerate(fields, start=1):
        if pos in summary_pos:
            v = tuple(_summary_from(s, values) for s in v)
        elif isinstance(v, list):
            v = _tuples(v)
        out.append(v)
    return cls(*out)
