"""Events on the wire: what the target's queue holds, as ``events`` messages, and back.

The queue holds events, op records and the infos that name them
(``runtime.records``). A message carries

- ``rows``: events in the JSONL trace codec's rows. A ``RunStart`` whose op
  names (or types) were sent before names them by a number instead: ``lists``
  gives each list the first time, ``[number, [...]]``;
- ``ops``: ``[key, [name, type, source, producers]]`` for each op first seen;
- ``recs``: the index of a blob of op records (``runtime.records.RECORD``:
  ``kind, key, run, thread, seq0, t0, seq1, t1``), kind ``BOTH``, ``START``
  or ``END`` (the end of an op whose start was sent before, while it ran).
  They come from the queue in lists; joining them is all the encoding they need.

Records stay binary, as the executing thread made them: formatting big
integers as JSON costs more than running a small op. The client rebuilds the
events and orders them by ``seq``: it receives what an in-process subscriber
would have.
"""
from __future__ import annotations

import json
import time

import numpy as np

from .. import events as ev
from ..runtime.records import BOTH, END, START
from ..trace.codec import event_from_row, event_to_row, strict_row
from .wire import WireError, decoding

__all__ = ["Encoder", "Decoder", "MAX_RECORDS"]

MAX_RECORDS = 1 << 20   # op records one message may carry (64 MiB; a target sends far fewer)
RECORD_BYTES = 64       # runtime.records.RECORD

_RUN_LISTS = (7, 10)   # RunStart row positions of its op names and op types
EARLY_START_NS = 20_000_000   # an op running this long has its start sent before its end


class Encoder:
    """The target's side: one per connection (it remembers what it has numbered)."""

    def __init__(self, sink=None):
        self.sink = sink            # the RecordSink whose queue this encodes
        self._keys: dict = {}       # id(list) -> number, for RunStart's op lists
        self._kept: list = []       # keeps each numbered list alive, so its id is not reused

    def encode(self, items, extra_rows=()) -> bytes | None:
        """One ``events`` message (line and blob) for ``items``, popped from the queue in order,
        with the starts of ops running a while; None when there is nothing to send."""
        rows, ops, lists, recs, starts = [], [], [], [], []
        # the client orders by seq: records need not keep their place among the events
        for x in items:
            t = type(x)
            if t is list:           # a batch of records
                recs += x
            elif t is bytes:        # the start of an op, sent early (before a nested event)
                starts.append(x)
            elif t is tuple:        # a step's info, named before its first record
                ops.append([id(x), [x[0], x[1], x[2], list(x[3])]])
            else:
                row = event_to_row(x)
                if row[0] == "RunStart":
                    self._number_lists(x, row, lists)
                rows.append(row)
        sink = self.sink
        if sink is not None:
            if sink.early:
                recs = [y for y in map(sink.late, recs) if y is not None]
            self._announce(starts)
        recs += starts
        rows.extend(extra_rows)
        if not (rows or recs or ops or lists):
            return None
        line = b'{"t":"events","rows":' + _rows_json(rows)
        if lists:
            line += b',"lists":' + _json(lists)
        if not recs:
            return line + (b',"ops":' + _json(ops) if ops else b"") + b"}\n"
        blob = b"".join(recs)
        return (line + b',"ops":' + _json(ops) + b',"recs":0,"blobs":[%d]}\n' % len(blob)
                + blob)

    def _number_lists(self, e, row, lists) -> None:
        for pos in _RUN_LISTS:
            obj = e[pos - 1]
            k = self._keys.get(id(obj))
            if k is None:
                k = self._keys[id(obj)] = len(self._kept)
                self._kept.append(obj)
                lists.append([k, row[pos]])
            row[pos] = k

    def _announce(self, recs) -> None:
        """The starts of ops that have been running a while (their records come later)."""
        now = time.perf_counter_ns()
        sink = self.sink
        for thread, cur in list(sink.current.items()):
            c = cur[0]
            if c is not None and now - c[3] >= EARLY_START_NS and c[0] in sink.named:
                record = sink.start_early(thread)
                if record is not None:
                    recs.append(record)


def _json(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _rows_json(rows) -> bytes:
    try:
        text = json.dumps(rows, allow_nan=False, separators=(",", ":"))
    except ValueError:   # a NaN/Inf in a summary: spelled as a string (strict JSON)
        text = json.dumps([strict_row(r) for r in rows], separators=(",", ":"))
    except TypeError:    # a field JSON cannot hold: leave those events out
        text = json.dumps([r for r in rows if _encodable(r)], separators=(",", ":"))
    return text.encode()


def _encodable(row) -> bool:
    try:
        json.dumps(strict_row(row))
        return True
    except (TypeError, ValueError):
        return False


class Decoder:
    """The client's side: one per connection."""

    def __init__(self):
        self._named: dict = {}

    def decode(self, msg: dict, blobs=()) -> list:
        """The events of an ``events`` message, in ``seq`` order; ``WireError`` naming the
        field when it is malformed."""
        named = self._named
        with decoding("events", "ops"):
            for k, data in msg.get("ops") or ():
                name, typ, src, producers = data
                named[k] = (str(name), str(typ), str(src), tuple(map(str, producers)))
        with decoding("events", "lists"):
            for k, data in msg.get("lists") or ():
                named[k] = data
        out = []
        with decoding("events", "rows"):
            for row in msg["rows"]:
                if row and row[0] == "RunStart":
                    for pos in _RUN_LISTS:
                        if type(row[pos]) is int:
                            row[pos] = named[row[pos]]
                out.append(event_from_row(row))
        if "recs" not in msg:
            return out
        with decoding("events", "recs"):
            out += self._records(named, blobs[_index(msg["recs"], len(blobs))])
        out.sort(key=_seq)
        return out

    @staticmethod
    def _records(named: dict, data) -> list:
        if len(data) % RECORD_BYTES or len(data) > MAX_RECORDS * RECORD_BYTES:
            raise ValueError(f"{len(data)} bytes of op records (64 each, "
                             f"{MAX_RECORDS} at most)")
        table = np.frombuffer(data, "<i8").reshape(-1, 8).tolist()
        out = []
        OpStart, OpEnd, new, append = ev.OpStart, ev.OpEnd, tuple.__new__, out.append
        get = named.get
        for kind, k, run, thread, s0, t0, s1, t1 in table:
            # a stretch that began before this client attached may name its ops to no one
            name, typ, src, producers = get(k) or (f"<op {k:x}>", "", "", ())
            if kind == BOTH:   # all fields given: no NamedTuple __new__ in Python
                append(new(OpStart, (s0, run, t0, thread, name, typ, None, src, producers)))
                append(new(OpEnd, (s1, run, t1, thread, name, typ, None, t1 - t0, (), ())))
            elif kind == START:
                append(new(OpStart, (s0, run, t0, thread, name, typ, None, src, producers)))
            elif kind == END:
                append(new(OpEnd, (s1, run, t1, thread, name, typ, None, t1 - t0, (), ())))
            else:
                raise ValueError(f"malformed op record kind {kind}")
        return out


def _index(i, n: int) -> int:
    if type(i) is not int or not 0 <= i < n:
        raise WireError(f"malformed events message: field 'recs': blob {i!r} of {n}")
    return i


def _seq(e) -> int:
    return e.seq
