"""Events <-> JSON rows, the line format of ``.jsonl`` traces.

A row is ``[type, field, field, ...]`` in the record's field order (the header
of a trace lists the fields of each type); a ``ValueSummary`` is a row of its
fields, plus a value key when a captured value is stored beside the trace (or
``null``: none, as the JSONL writer's encoder writes every summary since version 3).
Rows are what the fast C JSON encoder likes best. Decoding only builds the
known event records from plain data: nothing in a file is executed.

Rows are strict JSON (RFC 8259): a non-finite float in a numeric field (a
summary's min/max/mean) is written as the string "nan", "inf" or "-inf".
Decoding follows each field's declared kind (``FIELD_KINDS``): such a string
in a numeric field reads back as a float, while a string field (a preview that
reads "nan") stays a string; any other type, in any field, is an error.
"""
from __future__ import annotations

import math

from ..events import EVENT_TYPES, OPTIONAL_TAIL, WORKER_EVENTS
from .summary import ROW_FIELDS, NonFinite, ValueSummary, json_number, row_fields
from .values import valid_key

__all__ = ["event_to_row", "event_from_row", "schema", "schema_compatible", "strict_row",
           "strict_fields", "SUMMARY_FIELDS", "FIELD_KINDS", "summary_to_row",
           "summary_from_row"]

SUMMARY_FIELDS = ValueSummary._fields[:ROW_FIELDS]  # ``value`` is stored apart from the event
_N_SUMMARY = ROW_FIELDS
# positions of summary tuples inside each event type's row (1-based: row[0] is the type)
_SUMMARY_POS = {name: tuple(i + 1 for i, f in enumerate(cls._fields) if f in ("inputs", "outputs"))
                for name, cls in EVENT_TYPES.items()}


def schema() -> dict:
    """Field names per row type, written in the trace header."""
    d = {name: list(cls._fields) for name, cls in EVENT_TYPES.items()}
    d["ValueSummary"] = list(SUMMARY_FIELDS) + ["value_key?"]
    return d


def _fields_of(s) -> tuple:
    """A summary's row fields; a pending one's (a plain tuple, ``pending``) too."""
    return s[:_N_SUMMARY] if s.__class__ is tuple else row_fields(s)


def _summary_row(s, key):
    return [*_fields_of(s), key]   # key None: no captured value (null, as since version 3)


def event_to_row(event, value_key=None) -> list:
    """``value_key(event, field, i)`` stores a captured value and names it."""
    name = event.__class__.__name__
    row = [name, *event]
    for pos in _SUMMARY_POS[name]:
        sums = row[pos]
        if value_key is None or all(s.value is None for s in sums):
            row[pos] = [_fields_of(s) + (None,) for s in sums]  # tuples: JSON arrays
        else:
            field = event._fields[pos - 1]
            row[pos] = [_summary_row(s, value_key(event, field, i) if s.value is not None
                                     else None) for i, s in enumerate(sums)]
    return row


_new = tuple.__new__


def strict_row(row) -> list:
    """``row`` with non-finite floats in summaries spelled as strings (the rare slow path)."""
    for pos in _SUMMARY_POS[row[0]]:
        row[pos] = [strict_fields(s) for s in row[pos]]
    return row


def strict_fields(fields) -> list:
    """One summary's row with non-finite floats spelled as strings."""
    return [json_number(v) for v in fields]


# -- decoding: every field checked against its kind ---------------------------------

FIELD_KINDS = {
    "seq": "int", "run_id": "int?", "t_ns": "int", "thread": "int", "duration_ns": "int",
    "kind": "str", "name": "str", "op": "str", "op_type": "str", "source": "str",
    "error_type": "str", "message": "str", "when": "str", "breakpoint": "str",
    "category": "str", "hint": "str", "parent": "str?", "error": "str?", "ok": "bool",
    "ops": "strs", "folded": "strs", "op_types": "strs", "producers": "strs",
    "deduplicated": "pairs", "inputs": "sums", "outputs": "sums",
    "worker": "str?", "pid": "int?",
}
_NONE = type(None)
_SIMPLE = {"int": (int,), "int?": (int, _NONE), "str": (str,), "str?": (str, _NONE),
           "bool": (bool,)}
_NUMBER = (int, float, _NONE)
_INT_MIN, _INT_MAX = -(1 << 1000), 1 << 1000   # past these an integer has no float: it breaks
_NONFINITE = {"nan": NonFinite(math.nan), "inf": NonFinite(math.inf), "-inf": NonFinite(-math.inf)}
# Rows may end before the optional worker/pid tail (a local event, an older trace):
# per (event type, row length), (position, field, allowed types) of the simple fields
# and (position, field, kind) of the rest
_CHECKS = {}
_TAIL = {name: len(OPTIONAL_TAIL) if cls in WORKER_EVENTS else 0
         for name, cls in EVENT_TYPES.items()}
for _name, _cls in EVENT_TYPES.items():
    _missing = set(_cls._fields) - FIELD_KINDS.keys()
    assert not _missing, f"codec: no kind declared for {_name} fields {_missing}"
    for _n in {len(_cls._fields) - _TAIL[_name], len(_cls._fields)}:
        _CHECKS[_name, _n] = (
            tuple((i, f, _SIMPLE[FIELD_KINDS[f]]) for i, f in enumerate(_cls._fields[:_n])
                  if FIELD_KINDS[f] in _SIMPLE),
            tuple((i, f, FIELD_KINDS[f]) for i, f in enumerate(_cls._fields[:_n])
                  if FIELD_KINDS[f] not in _SIMPLE),
            tuple((i, f) for i, f in enumerate(_cls._fields[:_n])
                  if FIELD_KINDS[f] in ("int", "int?")))


def schema_compatible(rows) -> bool:
    """Whether a header's row fields (``schema()`` of the writer) can be read: this
    version's, or an older one's, whose rows lack trailing fields that have defaults."""
    mine = schema()
    if type(rows) is not dict or rows.keys() != mine.keys() or \
            rows["ValueSummary"] != mine["ValueSummary"]:
        return False
    for name, cls in EVENT_TYPES.items():
        theirs = rows[name]
        if type(theirs) is not list or theirs != mine[name][:len(theirs)] or \
                not set(cls._fields[len(theirs):]) <= cls._field_defaults.keys():
            return False
    return True


def _type_name(v) -> str:
    return "null" if v is None else type(v).__name__


_ONLY_STR, _ONLY_INT = {str}, {int}


def _strs(v, field):
    # set(map(type, v)) runs in C: far cheaper than a generator over the items
    if type(v) is not list or (v and set(map(type, v)) != _ONLY_STR):
        raise ValueError(f"field {field!r} must be a list of strings, not {str(v)[:60]}")
    return tuple(v)


def _pairs(v, field):
    if type(v) is not list or not all(type(p) is list and len(p) == 2 and type(p[0]) is str
                                      and type(p[1]) is str for p in v):
        raise ValueError(f"field {field!r} must be a list of [string, string] pairs")
    return tuple(tuple(p) for p in v)


def _number(v, field):
    if type(v) is int:   # a summary's statistics are floats (an int that none can hold: bad)
        try:
            return float(v)
        except OverflowError:
            raise ValueError(f"summary field {field!r} is an integer too large for a "
                             f"number, {str(v)[:20]}…") from None
    if type(v) in _NUMBER:
        return v
    if type(v) is str and v in _NONFINITE:
        return _NONFINITE[v]
    raise ValueError(f"summary field {field!r} must be a number, null, \"nan\", \"inf\" or "
                     f"\"-inf\", not {_type_name(v)} {str(v)[:40]}")


def _summary_from(row, values, field):
    if type(row) is not list or len(row) not in (_N_SUMMARY, _N_SUMMARY + 1):
        raise ValueError(f"field {field!r}: a value summary is a list of {_N_SUMMARY} "
                         f"(or {_N_SUMMARY + 1}) fields, not {str(row)[:60]}")
    shape, dtype, size, lo, hi, mean, nan, inf, preview, approx = row[:_N_SUMMARY]
    if type(shape) is not list or (shape and set(map(type, shape)) != _ONLY_INT):
        raise ValueError(f"field {field!r}: shape must be a list of integers, not {str(shape)[:40]}")
    if not (type(dtype) is str and type(size) is int and type(nan) is int and type(inf) is int
            and type(preview) is str and type(approx) is bool):
        raise ValueError(f"field {field!r}: summary fields have the wrong types "
                         f"(dtype, size, nan, inf, preview, approx = {dtype!r}, {size!r}, "
                         f"{nan!r}, {inf!r}, {str(preview)[:20]!r}, {approx!r})")
    value = None
    if len(row) > _N_SUMMARY and row[_N_SUMMARY] is not None:   # null: no value (version 3)
        key = row[_N_SUMMARY]
        if not valid_key(key):
            raise ValueError(f"field {field!r}: bad value key {str(key)[:40]!r}")
        if values is not None:
            value = values.get(key)
    lo, hi, mean = _number(lo, "min"), _number(hi, "max"), _number(mean, "mean")
    return ValueSummary(tuple(shape), dtype, size, lo, hi, mean, nan, inf, preview, approx, value)


def summary_to_row(s) -> list:
    """A ``ValueSummary`` as a strict-JSON row (its value left out)."""
    return strict_fields(_fields_of(s))


def summary_from_row(row, field: str = "value"):
    """The ``ValueSummary`` a row encodes, type-checked (``ValueError`` naming ``field``)."""
    return _summary_from(row, None, field)


def _json_default(v):
    return list(v) if isinstance(v, tuple) else v


def event_from_row(row, values=None):
    """The event a row encodes, every field type-checked (``ValueError`` naming the field).

    ``values.get(key)`` supplies captured values referenced by summaries. A row
    without the worker/pid tail gives an event without it (see ``events``).
    """
    if type(row) is not list or not row or type(row[0]) is not str or row[0] not in EVENT_TYPES:
        raise ValueError(f"unknown event row {str(row)[:60]!r}")
    name = row[0]
    cls = EVENT_TYPES[name]
    fields = row[1:]
    n, full = len(fields), len(cls._fields)
    base = full - _TAIL[name]
    if n < base and set(cls._fields[n:base]) <= cls._field_defaults.keys():
        # written before trailing fields were added
        fields += [_json_default(cls._field_defaults[f]) for f in cls._fields[n:base]]
        n = base
    checks = _CHECKS.get((name, n))
    if checks is None:
        raise ValueError(f"{name} row has {len(row) - 1} fields, expected "
                         f"{full if base == full else f'{base} or {full}'}")
    simple, other, ints = checks
    for i, field, types in simple:
        if type(fields[i]) not in types:
            raise ValueError(f"{name} field {field!r} is {_type_name(fields[i])} "
                             f"{str(fields[i])[:40]}, expected {'/'.join(t.__name__ for t in types)}")
    for i, field in ints:   # clocks, ids, counts: times and sums divide them as floats
        v = fields[i]
        if v is not None and not _INT_MIN <= v <= _INT_MAX:
            raise ValueError(f"{name} field {field!r} is an integer too large for a number, "
                             f"{str(v)[:20]}…")
    for i, field, kind in other:
        v = fields[i]
        if kind == "sums":
            if type(v) is not list:
                raise ValueError(f"{name} field {field!r} must be a list of value summaries")
            fields[i] = tuple([_summary_from(s, values, field) for s in v])
        elif kind == "strs":
            fields[i] = _strs(v, field)
        else:
            fields[i] = _pairs(v, field)
    if _TAIL[name] and n == full and fields[-1] is None and fields[-2] is None:
        del fields[-2:]   # the usual form of an event that did not run in a worker
    return _new(cls, fields)   # every field it has given: no NamedTuple ``__new__``
