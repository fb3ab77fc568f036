"""The JSONL trace format: a versioned header line, then one event per line.

Each event line is a strict-JSON array ``[type, field, ...]`` (see ``codec``);
the header names the fields of every row type.

Written as the run goes and flushed at least every ``flusher.FLUSH_NS`` and at the end
of every run, so a process killed mid-run leaves a loadable prefix: the header
reaches the final name complete (written under a temporary name, then renamed),
a captured value's file is complete before the line naming it is written, and
a torn last line is skipped with a warning. Captured values (capture="full")
are ``.npy`` files in ``<path>.values/`` (see ``values``). Events that ran in a
Dask worker carry a negative ``thread`` and their ``worker`` and ``pid``
fields (rows without them, as local events and older traces have, read as
``None``); ``<path>.origins.json`` names the worker process of each thread
(address, pid, thread name), and loading gives them back (``events.origin``),
so a Chrome trace made from a loaded one has a track per worker. A header
from before a row type gained trailing fields is read too.

Reading them back is ``jsonl_load`` (``load_trace``, re-exported here).
"""
from __future__ import annotations

import collections
import gc
import json
import operator
import os
import threading
import time
from itertools import repeat as _repeat, starmap as _starmap

from .. import events as ev
from ..events import RunEnd
from . import flusher
from .codec import schema
from .jsonl_load import FORMAT, VERSION, LoadedTrace, TraceFormatError, load_trace, origins_path
from .lines import CANNOT_ENCODE, decode_lines, encode_batch, generic_lines
from .pending import PendingOpEnd, settle_lines, settled
from .values import values_dir, write_value

__all__ = ["JsonlWriter", "load_trace", "TraceFormatError", "LoadedTrace", "FORMAT", "VERSION",
           "values_dir", "origins_path"]

BATCH_EVENTS = 4096  # events ``write`` queues before it encodes them (a RunEnd: at once)


_THREAD = operator.itemgetter(3)  # every event's ``thread``
_OP_TYPES = (ev.OpStart, ev.OpEnd)


def _count_types(types: list, counts) -> None:
    """Add ``types`` (a batch's event types) to ``counts``. Written for the common batch:
    op events, with perhaps a run's start first and its end last (a ``RunEnd`` ends a
    batch). ``countOf`` finds a type by identity in C; a ``Counter`` hashes every item
    (measured in place: counting was a twentieth of a traced op)."""
    lo, hi = 0, len(types)
    while lo < hi and types[lo] not in _OP_TYPES:   # at most a few, each counted alone
        counts[types[lo]] += 1
        lo += 1
    while hi > lo and types[hi - 1] not in _OP_TYPES:
        counts[types[hi - 1]] += 1
        hi -= 1
    middle = types[lo:hi] if lo or hi < len(types) else types
    starts = operator.countOf(middle, ev.OpStart)
    ends = operator.countOf(middle, ev.OpEnd)
    if starts + ends == len(middle):
        counts[ev.OpStart] += starts
        counts[ev.OpEnd] += ends
    else:   # other events among the ops (an error, a framework callback's ...)
        counts.update(middle)


def _threads_of(batch: list) -> set:
    """The threads of a batch's events: most often all one thread (its int object, the
    same in every event of a run, found by identity in C)."""
    first = batch[0][3]
    if operator.countOf(map(_THREAD, batch), first) == len(batch):
        return {first}
    return set(map(_THREAD, batch))


class JsonlWriter:
    """Appends events to ``path`` as they come.

    ``write`` only queues the event (one ``deque.append``: the run's thread pays
    little more), and ``op_write`` is that ``append`` itself; the queue is
    encoded and written in batches — at every ``RunEnd``, by the helper thread
    every open writer shares (``flusher``) at least every ``flusher.FLUSH_NS``, once
    ``BATCH_EVENTS`` events wait when ``write`` queues one, when the garbage
    collector starts a pass (encoded only), and on ``flush``/``close``. A batch is one
    call of msgspec's compiled encoder (see ``_encode``), with no Python code
    run per event. With capture="full" every event is written at once (its
    value files before its line; no queue of captured arrays), encoded by
    ``json``.

    ``window`` (a ``deque(maxlen=...)``, optional) receives each event once
    its line is written, in the file's order and without captured values
    (they are in the value files) — with capture "none" or "summary", when
    ``settle_window`` is called (the lines are kept until then, see there);
    ``counts`` counts written events by type
    and ``threads`` holds the thread of every written event. With them a
    recorder needs no lock of its own: ``write`` is its callback, and
    ``op_write`` (the queue's own ``append``, a C call) its ``op_callback``.

    A framework callback may queue a ``PendingOpEnd`` (and set ``deferred``,
    see ``pending``): its line holds its small arrays' pending summaries as
    they are, settled by whoever reads it (``load_trace``, ``settle_window``).
    """

    def __init__(self, path, capture: str, window=None, pid: int | None = None):
        self.path = os.fspath(path)
        header = {"format": FORMAT, "version": VERSION,
                  "pid": os.getpid() if pid is None else pid,
                  "created": time.time(), "capture": capture, "rows": schema()}
        # the file appears under its name only once its header is complete
        tmp = os.path.join(os.path.dirname(self.path) or ".",
                           f".{os.path.basename(self.path)}.{os.getpid()}.tmp")
        self._f = open(tmp, "wb")
        try:
            self._f.write(json.dumps(header).encode() + b"\n")
            self._f.flush()
            os.replace(tmp, self.path)
        except BaseException:
            self._f.close()
            os.unlink(tmp)
            raise
        self._values_dir = None
        self._fast = capture != "full"   # batches encoded by msgspec (see _encode)
        self.window = window
        self._lines = collections.deque()   # (lines, count) of batches the window is owed
        self._lines_n = 0
        self.counts = collections.Counter()  # event type -> events written
        self.threads: set = set()
        self._queue = collections.deque()
        self._encoded: list = []   # lines encoded, not written yet (a collection's start)
        self.deferred = False  # set by a callback queueing a PendingOpEnd (pending)
        self.op_write = self.write
        self._remote: set = set()        # remote threads the origins file names
        self._lock = threading.Lock()    # one batch at a time, in queue order
        self._error = None               # the helper thread's write error, raised on close
        if self._fast:
            self.write = self._queue_event  # the hot path: no Python frame beyond this one
            self.op_write = self._queue.append  # ops between runs: the flusher writes them
            flusher.register(self)

    @property
    def count(self) -> int:
        """Events written or queued."""
        with self._lock:
            return sum(self.counts.values()) + len(self._queue)

    def write(self, event) -> None:
        """Write ``event`` now (capture="full"; other captures queue it, see the class)."""
        self._queue.append(event)
        self.flush()

    def _queue_event(self, event) -> None:
        queue = self._queue
        queue.append(event)
        if len(queue) >= BATCH_EVENTS or event.__class__ is RunEnd:
            self.flush(event.__class__ is RunEnd)

    def flush(self, to_os: bool = True) -> None:
        """Encode the queued events; with ``to_os``, hand every line to the operating system."""
        with self._lock:
            if self._f.closed:   # the helper thread, as the writer closes: nothing to do
                return
            self._write_queued()
            if to_os:
                self._f.flush()

    def _write_queued(self) -> None:
        """Encode the queued events and write every encoded line (the lock held)."""
        self._encode_queued()
        if self._encoded:   # each batch as it is (a join would copy them all once more)
            self._f.writelines(self._encoded)
            self._encoded.clear()

    def _encode_before_collection(self) -> None:
        """The collector starts a pass: the queued events are encoded first (their lines
        wait in memory for the next flush), so that they die young instead of being
        walked and moved to older generations, whose full passes walk the whole program
        (measured: a fifth of a traced op's time). No I/O, which would let other threads
        take the interpreter lock in the middle of whatever made the collection (a
        framework's callback, issue 24), and no wait: a thread holding the lock (it may be
        this one) keeps the queue."""
        if self._queue and not ev._origins and self._lock.acquire(blocking=False):
            try:
                self._encode_queued()
            except Exception as e:  # noqa: BLE001 - raised by close(), as the flusher's
                if self._error is None:
                    self._error = e
            finally:
                self._lock.release()

    def _encode_queued(self) -> None:
        """Encode the queued events into ``_encoded`` (the lock held)."""
        queue = self._queue
        n = len(queue)
        if n:  # popleft: events queued meanwhile (another thread) stay for the next batch
            batch = list(_starmap(queue.popleft, _repeat((), n)))   # n calls, in C
            types = list(map(type, batch))
            lines = self._encode(batch, types)
            self._encoded.append(lines)
            _count_types(types, self.counts)
            if self.deferred:
                self.counts[ev.OpEnd] += self.counts.pop(PendingOpEnd, 0)
            threads = _threads_of(batch)
            self.threads |= threads
            if self.window is not None:
                if self._fast:   # kept as lines: see ``settle_window``
                    self._keep_lines(lines, n)
                else:
                    self.window.extend(map(ev.without_values, batch))
            if ev._origins:   # this process has seen a Dask worker's events: these?
                remote = {t for t in threads if t < 0} - self._remote
                if remote:
                    self._write_origins(remote)

    def sync(self) -> None:
        """Every event queued so far written to the file (for a reader of the file while
        the recording goes on)."""
        self.flush()

    def _keep_lines(self, lines, n: int) -> None:
        """Keep a written batch's lines for the window, and only as many as it holds."""
        kept = self._lines
        kept.append((lines, n))
        self._lines_n += n
        room = self.window.maxlen
        while room is not None and self._lines_n - kept[0][1] >= room:
            self._lines_n -= kept.popleft()[1]

    def settle_window(self) -> None:
        """The window up to date: the lines written since it was last read, as events.

        The window keeps lines, not the events themselves, until it is read: events
        kept alive go through the collector's older generations and make its full
        passes (over the whole program's heap) come sooner. A line reads back as the
        very event it was written from (``codec``); a pending summary is settled.
        """
        if self.window is None or not self._lines:
            return
        with self._lock:   # one reader at a time, and in the file's order
            chunks, self._lines, self._lines_n = self._lines, collections.deque(), 0
            data = b"".join([lines for lines, _ in chunks])
            room = self.window.maxlen
            if room is not None:   # only the lines the window can hold are read
                rows = data.split(b"\n")   # the last one empty: every line ends in \n
                if len(rows) > room + 1:
                    data = b"\n".join(rows[-room - 1:])
            if self.deferred:
                data = settle_lines(data)
            self.window.extend(decode_lines(data))

    def _write_origins(self, remote) -> None:
        """``<path>.origins.json``: the process each remote thread id in the trace stands
        for (see ``events.origin``), replaced whole, so a reader never sees half of it."""
        self._remote |= {t for t in remote if ev.origin(t) is not None}
        data = {str(t): [o.address, o.pid, o.thread_name]
                for t, o in ((t, ev.origin(t)) for t in sorted(self._remote))}
        path = origins_path(self.path)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)

    def _encode(self, batch, types=None):
        """The JSON lines of ``batch`` (bytes-like): each the row ``event_to_row`` gives,
        as strict JSON (a pending summary, a plain tuple, as it is: see ``pending``),
        in one compiled call (``lines.encode_batch``). A batch it refuses (say an
        object of a type no JSON holds) is encoded the generic way, row by row; so is
        every batch with capture="full".
        """
        if self._fast:
            try:
                return encode_batch(batch, types)
            except CANNOT_ENCODE:
                settled(batch)   # the generic way knows no pending summary
        return generic_lines(batch, self._value_key)

    def _value_key(self, event, field, i):
        key = f"{event.seq}-{'in' if field == 'inputs' else 'out'}{i}"
        if self._values_dir is None:
            self._values_dir = values_dir(self.path)
            os.makedirs(self._values_dir, exist_ok=True)
        write_value(self._values_dir, key, getattr(event, field)[i].value)
        return key

    def _after_fork(self) -> None:
        """In a forked child: no helper thread, and the lock it may have held is new;
        the parent's queued events are the parent's to write."""
        self._lock = threading.Lock()
        self._queue.clear()
        self._encoded.clear()

    def close(self) -> None:
        """Write what is queued and close the file; the helper thread leaves it alone."""
        flusher.unregister(self)
        # ``write`` bound to this writer, on this writer: a cycle that would keep the
        # window's events alive until the collector's next full pass
        self.__dict__.pop("write", None)
        with self._lock:   # after a batch the helper thread may be writing
            if not self._f.closed:
                try:
                    self._write_queued()
                finally:
                    self._f.close()
        if self._error is not None:  # the helper thread's batch was not written
            error, self._error = self._error, None
            raise error


def _before_collection(phase: str, info: dict) -> None:
    if phase == "start" and flusher._refs:   # open writers (all but capture="full"'s)
        for writer in flusher.open_writers():
            writer._encode_before_collection()


gc.callbacks.append(_before_collection)


def _after_fork_in_child() -> None:
    for writer in flusher.open_writers():
        writer._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
