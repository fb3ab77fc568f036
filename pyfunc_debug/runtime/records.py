"""Op records: an op's ``OpStart`` and ``OpEnd`` as 64 bytes (capture "none").

When the bus's only subscriber takes records (``events.subscribe(records=sink)``
with a ``RecordSink``: the attach server), the observed loop puts one record
per op on ``sink.queue`` instead of making two events: about a third of their
cost, which is what lets a client watch a fast chain live. A record is eight
little-endian int64 (``RECORD``)::

    kind, key, run_id, thread, seq0, t0, seq1, t1

``kind`` is ``BOTH`` (the op ran: start at ``seq0``/``t0``, end at
``seq1``/``t1``) or ``START`` (the op failed or was interrupted: its ``OpError``
event follows). ``key`` is ``id(info)`` of the step's static event data
(``observed.step_info``: name, type, source, producers, ...); the first time a
key appears, ``info`` itself is put on the queue just before it (and kept in
``sink.named``, so the id stays unique). The seqs and clock readings are the
ones the events would have had: ``to_events`` rebuilds them exactly.

While an op runs, ``sink.current[thread]`` holds ``[(key, run_id, seq0, t0)]``
(``[None]`` outside the loop) and its record is not on the queue yet, so a
reader can say early that a long op started, and will see its record later. A ``py_function`` op (its eager
ops report inside it) and every other event still come as events.
"""
from __future__ import annotations

import struct
import threading
import time

from .. import events as ev
from .loop import PASS_THROUGH
from .op_errors import report_error, report_interrupt

__all__ = ["RecordSink", "run_steps_recorded", "to_events", "RECORD", "START", "END", "BOTH"]

START, END, BOTH = 1, 2, 3
RECORD = struct.Struct("<8q")
_INT64 = range(-(1 << 63), 1 << 63)

_now = time.perf_counter_ns


class RecordSink:
    """Where op records go: ``queue`` (a deque: records, infos and events in order),
    ``named`` (key -> info, each info put on the queue once) and ``current``."""

    def __init__(self, queue):
        self.queue = queue
        self.named: dict = {}
        self.current: dict = {}


def to_events(info, record: bytes) -> tuple:
    """The ``OpStart`` (and ``OpEnd``, for ``BOTH``) that ``record`` of op ``info`` stands for."""
    kind, _, run, thread, s0, t0, s1, t1 = RECORD.unpack(record)
    name, typ, src, producers = info[:4]
    out = ()
    if kind & START:
        out += (ev.OpStart(s0, run, t0, thread, name, typ, None, src, producers),)
    if kind & END:
        out += (ev.OpEnd(s1, run, t1, thread, name, typ, None, t1 - t0),)
    return out


def run_steps_recorded(items, vals, ctx, sink: RecordSink, with_events) -> None:
    """Run (step tuple, info) ``items`` in order, putting a record per op on ``sink``;
    ``with_events(items)`` runs the ops that must report as events.

    One clock reading ends an op and starts the next (their slices abut). An op's
    record is put when the next op starts, after ``current`` names that one.
    """
    tid = threading.get_ident()
    if tid not in _INT64:
        with_events(items)
        return
    seq = ev.next_seq
    run_id = ctx.run_id
    put = sink.queue.append
    named = sink.named
    pack = RECORD.pack
    cur = sink.current.get(tid)
    if cur is None:
        cur = sink.current[tid] = [None]
    prev = None
    t = _now()
    try:
        for step, info in items:
            kernel, ins, outs, mode, single, needs_ctx, drop, op = step
            if needs_ctx:
                cur[0] = None
                if prev is not None:
                    put(prev)
                    prev = None
                with_events(((step, info),))
                t = _now()
                continue
            key = id(info)
            if key not in named:
                named[key] = info
                put(info)
            s0 = seq()
            cur[0] = (key, run_id, s0, t)
            if prev is not None:
                put(prev)
            t0 = t
            try:
                r = kernel(vals[ins]) if mode == 1 else kernel(*[vals[s] for s in info[4]])
            except BaseException as exc:
                cur[0] = prev = None
                put(pack(START, key, run_id, tid, s0, t0, 0, 0))
                name, typ, src = info[:3]
                if isinstance(exc, PASS_THROUGH) or not isinstance(exc, Exception):
                    report_interrupt(exc, run_id, name, typ, None, src, tid, t0)
                    raise
                report_error(exc, op, ctx, name, typ, src, tid, t0)
            t = _now()
            prev = pack(BOTH, key, run_id, tid, s0, t0, seq(), t)
            if single:
                vals[outs] = r
            else:
                for s, v in zip(outs, tuple(r) if outs else ()):
                    vals[s] = v
            if drop:
                for s in drop:
                    vals[s] = None
    finally:
        cur[0] = None
        if prev is not None:
            put(prev)
