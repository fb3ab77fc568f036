"""Op records: an op's ``OpStart`` and ``OpEnd`` as 64 bytes (capture "none").

When the bus's only subscriber takes records (``events.subscribe(records=sink)``
with a ``RecordSink``: the attach server), the observed loop makes one record
per op instead of two events — about a third of their cost, which is what lets
a client watch a fast chain live. A record is eight little-endian int64
(``RECORD``)::

    kind, key, run_id, thread, seq0, t0, seq1, t1

``kind`` is ``BOTH`` (the op ran: start at ``seq0``/``t0``, end at
``seq1``/``t1``), ``START`` (the op failed or was interrupted: its ``OpError``
event follows) or ``END`` (see below). ``key`` is ``id(info)`` of the step's
static event data (``observed.step_info``: name, type, source, producers,
...); before a key's first record, ``info`` itself goes on ``sink.queue``
(and stays in ``sink.named``, so the id stays unique) — a whole plan's at once
when the loop is given its steps (``observed.PlanItems``). The seqs and clock
readings are the ones the events would have had, so a reader rebuilds them exactly
(``remote.event_stream.Decoder``).

Records go on the queue in lists (``bytes`` each), at least every
``FLUSH_NS`` and when the loop returns: a reader pays per list, not per op.
While an op runs, ``sink.current[thread]`` holds ``[(key, run_id, seq0, t0),
batch]`` (``[None, []]`` between loops; ``batch``: records not on the queue
yet, never the running op's). So a reader
may send the start of a long-running op early — and an event the op's thread
emits meanwhile (a nested run inside the wrapped function) is preceded by it
(``sink.start_early``) — and ``sink.early`` remembers which, so that the op's
record later counts as its end only.
"""
from __future__ import annotations

import struct
import threading
import time

from .. import events as ev
from .loop import PASS_THROUGH
from .op_errors import report_error, report_interrupt

__all__ = ["RecordSink", "run_steps_recorded", "RECORD", "START", "END", "BOTH",
           "FLUSH_NS"]

START, END, BOTH = 1, 2, 3
RECORD = struct.Struct("<8q")
FLUSH_NS = 2_000_000
NAME_ALL_LIMIT = 20_000   # plans up to this many ops have their op names sent at once
_INT64 = range(-(1 << 63), 1 << 63)
_MARK = slice(24, 40)   # a record's thread and seq0: which op it is

_now = time.perf_counter_ns


class RecordSink:
    """Where op records go: ``queue`` (a deque: lists of records, infos and events, in
    order), ``named`` (key -> info), ``current`` and ``early`` (see the module)."""

    def __init__(self, queue):
        self.queue = queue
        self.named: dict = {}
        self.lists: dict = {}     # id -> a plan's info list named whole (kept: ids stay unique)
        self.current: dict = {}
        self.early: dict = {}     # thread+seq0 bytes of ops whose START went out alone

    def start_early(self, thread: int) -> bytes | None:
        """The START record of the op ``thread`` is running, unless one went out already
        (then None); the op's own record will then give its end only."""
        cur = self.current.get(thread)
        c = cur[0] if cur is not None else None
        if c is None:
            return None
        key, run, s0, t0 = c
        record = RECORD.pack(START, key, run, thread, s0, t0, 0, 0)
        token = object()
        if self.early.setdefault(record[_MARK], token) is not token:
            return None   # the other thread (reader or runner) sent it
        return record

    def name_all(self, infos) -> None:
        """Name every info of a plan now (``observed.PlanItems.infos``), once per list."""
        if self.lists.get(id(infos)) is infos:
            return
        named, put = self.named, self.queue.append
        for info in infos:
            key = id(info)
            if key not in named:
                named[key] = info
                put(info)
        self.lists[id(infos)] = infos

    def put_event(self, e) -> None:
        """Queue an event. One from inside a recorded op (a nested run: same thread) comes
        after the records its loop holds back and the op's start, sent early for it."""
        cur = self.current.get(e.thread)
        if cur is not None:
            held = cur[1]
            if held:
                self.queue.append(held[:])
                held.clear()
            if cur[0] is not None:
                start = self.start_early(e.thread)
                if start is not None:
                    self.queue.append(start)
        self.queue.append(e)

    def late(self, record: bytes) -> bytes | None:
        """``record``, or its end only when its start went out early (None for a START)."""
        if self.early.pop(record[_MARK], None) is None:
            return record
        kind, *rest = RECORD.unpack(record)
        return RECORD.pack(END, *rest) if kind == BOTH else None


def run_steps_recorded(items, vals, ctx, sink: RecordSink, with_events) -> None:
    """Run (step tuple, info) ``items`` in order, recording each op on ``sink``;
    ``with_events(items, vals, ctx)`` runs the ops that must report as events.

    One clock reading ends an op and starts the next (their slices abut). An op's
    record joins the batch when the next op starts, after ``current`` names that one.
    """
    tid = threading.get_ident()
    if tid not in _INT64:
        with_events(items, vals, ctx)
        return
    infos = getattr(items, "infos", None)
    if infos is not None and len(infos) > NAME_ALL_LIMIT:
        infos = None        # a huge plan: named as its ops run, not all up front
    if infos is not None:   # a plan's steps: its infos named at once, no check per op
        sink.name_all(infos)
    seq = ev.next_seq
    run_id = ctx.run_id
    put = sink.queue.append
    named = None if infos is not None else sink.named
    pack = RECORD.pack
    cur = sink.current.get(tid)
    if cur is None:
        cur = sink.current[tid] = [None, []]
    outer = cur[:]   # a run nested in an op of a recorded loop of this thread
    batch = cur[1] = []
    add = batch.append
    prev = None
    t = _now()
    flush_at = t + FLUSH_NS
    try:
        for step, info in items:
            kernel, ins, outs, mode, single, needs_ctx, drop, op = step
            if needs_ctx:
                cur[0] = None
                if prev is not None:
                    add(prev)
                    prev = None
                if batch:
                    put(batch)
                    batch = cur[1] = []
                    add = batch.append
                with_events(((step, info),), vals, ctx)
                t = _now()
                continue
            key = id(info)
            if named is not None and key not in named:
                named[key] = info
                put(info)
            s0 = seq()
            cur[0] = (key, run_id, s0, t)
            if prev is not None:
                add(prev)
                if t > flush_at:
                    put(batch)
                    batch = cur[1] = []
                    add = batch.append
                    flush_at = t + FLUSH_NS
            t0 = t
            try:
                r = kernel(vals[ins]) if mode == 1 else kernel(*[vals[s] for s in info[4]])
            except BaseException as exc:
                cur[0] = prev = None
                add(pack(START, key, run_id, tid, s0, t0, 0, 0))
                put(batch)
                batch = cur[1] = []
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
        cur[0] = None   # first: the last op's record goes on the queue next
        if prev is not None:
            batch.append(prev)
        if batch:
            put(batch)
        cur[0], cur[1] = outer
