"""Events as JSONL lines: one compiled encoding of a batch, and a store that keeps them so.

``encode_batch`` is the JSONL writer's fast path (one ``orjson.dumps`` call a
batch, no Python code per event). ``EventLines`` keeps events as those lines in
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

import orjson

from .. import events as ev
from .bulk import paused_gc
from .codec import event_to_row, strict_row
from .jsonl_load import decode_batch
from .pending import PendingOpEnd

__all__ = ["encode_batch", "generic_lines", "decode_lines", "EventLines", "CANNOT_ENCODE"]

_ROW_NAMES = {cls: (name,) for name, cls in ev.EVENT_TYPES.items()}
_ROW_NAMES[PendingOpEnd] = ("OpEnd",)
_NL = orjson.Fragment(b"\n")  # between rows: the only raw newline a batch's JSON holds
_END = orjson.Fragment(b"")  # after the last newline: its commas go with the others
_ROW = operator.attrgetter("row")  # orjson's ``default``: a summary's row (see ``summary``)
# what ``encode_batch`` raises for a batch it cannot encode (say an int beyond 64 bits)
CANNOT_ENCODE = (KeyError, TypeError, orjson.JSONEncodeError)


def encode_batch(batch):
    """The JSON lines of ``batch`` (bytes-like, each line ending in a newline): each the
    row ``codec.event_to_row`` gives, a summary as its ``row``, a pending summary (a
    plain tuple, see ``pending``) as it is. Raises one of ``CANNOT_ENCODE``.

    One ``orjson.dumps`` of the rows with a raw newline between them: JSON strings
    never hold a raw newline, so ``,\\n,`` only ever joins two rows. Rows are built in
    C (``map``). The collector is paused meanwhile: the rows are thousands of new
    tuples, in no cycle and gone once the batch is encoded, which it would walk for
    nothing."""
    with paused_gc():
        rows = [_NL] * (2 * len(batch) + 1)  # a row, then a newline, per event
        rows[-1] = _END
        rows[:-1:2] = map(operator.add, map(_ROW_NAMES.__getitem__, map(type, batch)), batch)
        data = orjson.dumps(rows, default=_ROW)  # b'[row,\n,row,\n,...,row,\n,]'
        del rows
    return memoryview(data.replace(b",\n,", b"\n"))[1:-1]   # no copy of the lines


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
            data = bytes(encode_batch(batch))
        except CANNOT_ENCODE:
            try:
                data = generic_lines(batch)
            except (TypeError, ValueError):   # not JSON at all: kept as they are
                data = batch
        self._chunks.append(data)
        self._n += len(batch)

    def __len__(self) -> int:
        return self._n

    def __iter__(self):
        for data in self._chunks:
            yield from decode_lines(data) if data.__class__ is bytes else data
