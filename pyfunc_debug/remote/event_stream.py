"""Events on the wire: what the target's queue holds, as ``events`` messages, and back.

The queue holds events, op records and the infos that name them
(``runtime.records``). A message carries

- ``rows``: events in the JSONL trace codec's rows. A ``RunStart`` whose op
  names (or types) were sent before names them by a number instead: ``lists``
  gives each list the first time, ``[number, [...]]``. To a client that asked
  for them (``pending`` in its attach), an ``OpEnd`` of a framework callback may
  hold *pending* summaries (``trace.pending``: a small array's bytes as hex),
  which the client's UI takes when it shows them: the target's threads then pay
  a copy, not a summary. The decoder checks each one (shape, dtype, size, hex)
  before anything reads it;
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
import orjson

from .. import events as ev
from ..runtime.records import BOTH, END, START
from ..trace.bulk import paused_gc
from ..trace.codec import event_from_row, event_to_row, strict_row
from ..trace.lines import CANNOT_ENCODE, ROW_NAMES
from ..trace.summary import jsonable
from ..trace.pending import (DEFER_LIMIT, INPUTS_AT, OUTPUTS_AT, PREVIEW_AT, PendingOpEnd,
                             from_row, settled)
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
        events, ops, lists, recs, starts = [], [], [], [], []
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
                events.append(x)
        sink = self.sink
        if sink is not None:
            if sink.early:
                recs = [y for y in map(sink.late, recs) if y is not None]
            self._announce(starts)
        recs += starts
        if not (events or extra_rows or recs or ops):
            return None
        line = b'{"t":"events","rows":' + self._rows(events, lists, extra_rows)
        if lists:
            line += b',"lists":' + _json(lists)
        if not recs:
            return line + (b',"ops":' + _json(ops) if ops else b"") + b"}\n"
        blob = b"".join(recs)
        return (line + b',"ops":' + _json(ops) + b',"recs":0,"blobs":[%d]}\n' % len(blob)
                + blob)

    def _rows(self, events: list, lists: list, extra_rows) -> bytes:
        """``events`` (then ``extra_rows``) as a JSON array of rows: one ``orjson.dumps`` of
        them all (as ``trace.lines.encode_batch``), the standard library's strict JSON
        one row at a time for a batch it cannot encode (pending summaries taken then)."""
        with paused_gc():   # thousands of new tuples in no cycle: nothing to walk
            rows = [self._run_row(e, lists) if e.__class__ is ev.RunStart else
                    ROW_NAMES[e.__class__] + e for e in events]
            rows += extra_rows
            try:
                return orjson.dumps(rows, default=_SUMMARY_ROW)
            except CANNOT_ENCODE:
                pass
        settled(events)
        rows = [self._run_row(e, lists) if e.__class__ is ev.RunStart else event_to_row(e)
                for e in events]
        return _rows_json(rows + list(extra_rows))

    def _run_row(self, e, lists) -> list:
        row = event_to_row(e)
        self._number_lists(e, row, lists)
        return row

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


_SUMMARY_ROW = jsonable   # orjson's ``default``: a summary's row fields, a NaN's string


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
    """The client's side: one per connection. ``pending``: the client asked for pending
    summaries (a target sends none to any other; one sent anyway reads as a summary
    without statistics, as its fields say)."""

    def __init__(self, pending: bool = False):
        self._named: dict = {}
        self._pending = pending

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
                if self._pending and row[0] == "OpEnd" and len(row) > OUTPUTS_AT:
                    out.append(_op_end(row))
                else:
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


def _op_end(row):
    """The event of an ``OpEnd`` row: a ``PendingOpEnd`` when it holds pending summaries,
    each checked (``from_row``; its hex read once, so that no reader meets bad bytes)."""
    found = []
    for pos in (INPUTS_AT, OUTPUTS_AT):
        items = row[pos]
        if type(items) is not list:
            continue   # event_from_row names the field
        for j, item in enumerate(items):
            p = from_row(item)   # None for a summary's row; ValueError naming what is wrong
            if p is None:
                continue
            if p[2] > DEFER_LIMIT:   # no writer defers more: a peer's memory bomb
                raise ValueError(f"a pending summary of {p[2]} elements ({DEFER_LIMIT} at most)")
            if len(bytes.fromhex(p[-1])) * 2 != len(p[-1]):   # no spaces: hex only
                raise ValueError("a pending summary whose bytes are not hex")
            found.append((pos, j, p))
            items[j] = item[:PREVIEW_AT] + ["", False]   # checked as a summary's fields
    e = event_from_row(row)
    if not found:
        return e
    fields = [list(e.inputs), list(e.outputs)]
    for pos, j, p in found:
        fields[pos - INPUTS_AT][j] = p
    return tuple.__new__(PendingOpEnd, (*e[:INPUTS_AT - 1], tuple(fields[0]),
                                        tuple(fields[1]), *e[OUTPUTS_AT:]))


def _index(i, n: int) -> int:
    if type(i) is not int or not 0 <= i < n:
        raise WireError(f"malformed events message: field 'recs': blob {i!r} of {n}")
    return i


def _seq(e) -> int:
    return e.seq
