"""Events as JSONL lines: one compiled encoding of a batch, and a store that keeps them so.

``encode_batch`` is the JSONL writer's fast path (one call of msgspec's encoder
a batch, no Python code per event). ``EventLines`` keeps events as those lines in
memory — about a third of the memory the events take as Python objects, and
nothing the garbage collector walks — and gives them back, equal to the events
kept, when read (``codec``: a line reads back as the event it was written from).
A streamed trace's window and the UI's record of a session use it: both keep
many events for a long time and read them rarely (a window when ``tr.events`` is
read, the UI's record when the session is exported).
"""
from __future__ import annotations

import json
import operator

import msgspec
import numpy as np

from .. import events as ev
from .bulk import paused_gc
from .codec import event_to_row, strict_row
from .jsonl_load import decode_batch
from .pending import PendingOpEnd
from .summary import json_number

__all__ = ["encode_batch", "generic_lines", "decode_lines", "EventLines", "CANNOT_ENCODE",
           "ROW_NAMES"]

# event type -> the head of its row, ``(name,)``: a row is ``ROW_NAMES[type(e)] + e``
ROW_NAMES = {cls: (name,) for name, cls in ev.EVENT_TYPES.items()}
ROW_NAMES[PendingOpEnd] = ("OpEnd",)
_TYPE_NAME = ROW_NAMES.__getitem__


def _unusual(o):
    """msgspec's ``enc_hook``: what it does not encode as it is (it takes exact types
    only). A summary's captured value (an array or numpy scalar: stored apart from the
    event, see ``jsonl``) as null; a subclass of str, int or float as that type, a NaN or
    ±Inf as its string (a summary holds them as ``summary.NonFinite``, a float subclass,
    so that they come here). Anything else cannot be encoded here (the generic way tries)."""
    if isinstance(o, str):
        return str(o)
    if isinstance(o, (np.ndarray, np.generic)):
        return None
    if isinstance(o, int):
        return int(o)
    if isinstance(o, float):
        return json_number(float(o))
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


# One call a batch, with each row's newline: msgspec writes every tuple, summaries
# included, as a JSON array (a summary with its ``value`` as an eleventh field: null).
# Measured against orjson's one call and the removal of its commas between rows: 355
# against 590 ns an event (benchmarks/hotpaths.py --only tracing: JSONL 13x against 15x).
_ENCODE_LINES = msgspec.json.Encoder(enc_hook=_unusual).encode_lines
# what ``encode_batch`` raises for a batch it cannot encode (KeyError: an event of a type
# no row is named for)
CANNOT_ENCODE = (KeyError, TypeError, ValueError, msgspec.EncodeError)


def encode_batch(batch, types=None) -> bytes:
    """The JSON lines of ``batch`` (each line ending in a newline): each the row
    ``codec.event_to_row`` gives, a summary as its fields and a null value, a pending
    summary (a plain tuple, see ``pending``) as it is. Raises one of ``CANNOT_ENCODE``.

    Rows are built in C (``map``), as a list: msgspec 0.22's ``encode_lines`` keeps a
    reference to an iterator it is given (here, every batch's events, for ever). The
    collector is paused meanwhile: the rows are new tuples, gone once encoded, which it
    would walk for nothing. ``types``: the events' types, if the caller has them."""
    with paused_gc():
        return _ENCODE_LINES(list(map(operator.add, map(_TYPE_NAME, types or map(type, batch)),
                                      batch)))


def generic_lines(batch, value_key=None) -> bytes:
    """``batch``'s lines one event at a time, by the standard library (what
    ``encode_batch`` cannot encode, and every batch with captured values):
    ``value_key(event, field, i)`` stores a captured value and names it (see
    ``codec.event_to_row``); without it, captured values are left out."""
    out = []
    for e in batch:
        row = event_to_row(e, value_key)
        try:
            out.append(_dumps(row))
        except ValueError:  # a NaN or Inf: spelled as a string (strict JSON)
            out.append(_dumps(strict_row(row)))
    return "".join([line + "\n" for line in out]).encode()


def _not_json(o):
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _row_encoder():
    """``json.dumps(row, separators=(",", ":"), allow_nan=False)``, made once.

    ``JSONEncoder.encode`` builds its C encoder anew on every call, which costs
    more than encoding one event row.
    """
    c_make = getattr(json.encoder, "c_make_encoder", None)
    if c_make is None:
        return json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
    enc = c_make(None, _not_json, json.encoder.encode_basestring_ascii, None, ":", ",",
                 False, False, False)
    join = "".join
    return lambda row: join(enc(row, 0))


_dumps = _row_encoder()


def decode_lines(data: bytes) -> list:
    """The events of ``data`` (whole lines, as ``encode_batch`` makes them), read as the
    loader reads a file's (``jsonl_load.decode_batch``)."""
    rows = data.split(b"\n")
    if rows and not rows[-1]:
        rows.pop()
    events = []
    with paused_gc():
        if rows and not decode_batch(rows, None, events.append):
            raise ValueError("events kept as lines did not read back")
    return events


class EventLines:
    """Events kept as JSONL lines, in order: ``extend(events)`` (captured values are left
    out), ``len()``, and iteration or ``list()``, which read them back."""

    def __init__(self):
        self._chunks: list = []
        self._n = 0

    def extend(self, events) -> None:
        batch = events if isinstance(events, list) else list(events)
        if not batch:
            return
        try:
            data = encode_batch(batch)
        except CANNOT_ENCODE:
            try:
                data = generic_lines(batch)
            except (KeyError, TypeError, ValueError):   # not JSON at all: kept as they are
                data = batch
        self._chunks.append(data)
        self._n += len(batch)

    def __len__(self) -> int:
        return self._n

    def __iter__(self):
        for data in self._chunks:
            yield from decode_lines(data) if data.__class__ is bytes else data
