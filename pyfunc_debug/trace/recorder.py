"""``pfd.trace()``: record every event in a block; write Chrome JSON or JSONL."""
from __future__ import annotations

import collections
import os
import threading

from .. import events as ev
from .chrome import write_chrome
from .jsonl import JsonlWriter
from .pending import settled

__all__ = ["trace", "Trace", "RECENT_EVENTS"]

RECENT_EVENTS = 10_000  # what ``tr.events`` keeps of a streamed (.jsonl) trace
CAPTURES = ev.CAPTURE_LEVELS + ("fault",)   # "fault": summaries, and inputs of faulty calls


class Trace:
    """A recording: ``.events`` (in order), ``.thread_names``; ``save(path)``.

    ``path`` ending in ``.json`` (or no path) keeps every event in ``.events``
    and writes a Chrome trace on exit. ``.jsonl`` is streamed while the block
    runs, in bounded memory: the file holds every event (captured values in
    ``<path>.values/``), while ``.events`` is only a window of the most recent
    ``RECENT_EVENTS`` (a ``deque``, brought up to date with what is written each
    time ``.events`` is read: during a run it may lag by the events still queued,
    after each run it is complete), and with capture="full" the window's
    events carry no values (they are in the files; ``load_trace`` reads them
    back). ``event_count``, ``op_count`` and ``run_count`` count everything.

    Recorded framework callbacks (``instrument()``) leave their small arrays'
    summaries pending (``pending``) when this trace is the only listener with
    capture "summary", in memory as in a ``.jsonl`` file; ``.events`` settles
    them when read (while the block runs it gives a settled copy: callbacks on
    other threads may append meanwhile), so every summary read is the one
    ``summarize`` gives.
    """

    def __init__(self, path=None, capture: str = "summary", capture_bytes: int = 1 << 20):
        if path is not None and not str(path).endswith((".json", ".jsonl")):
            raise ValueError(f"trace path {path!r} must end in .json (Chrome trace) or "
                             ".jsonl (pyfunc-debug trace)")
        if capture not in CAPTURES:
            raise ValueError(f"capture must be one of {CAPTURES}, not {capture!r}")
        if capture == "fault" and path is not None and not str(path).endswith(".jsonl"):
            raise ValueError(f"capture='fault' keeps inputs beside a .jsonl trace, not "
                             f"{path!r}: record to OUT.jsonl (or in memory, then save it)")
        self.path = None if path is None else os.fspath(path)
        self.capture = capture
        self.capture_bytes = capture_bytes
        self._events: list = []
        self._names: dict[int, str] = {}
        self._sub = None
        self._writer = None
        self._kept = None   # an in-memory summary trace's settling sink (see the class)
        self._settled = 0   # events before this index are settled
        self.faults = None   # capture="fault": the ``trace.faults.FaultRecorder``
        self.pid = None      # the process the events came from, when not this one (save)

    @property
    def events(self):
        """The recorded events (of a streamed trace, its window: see the class)."""
        if self._writer is not None:   # the lines written since: read back now
            self._writer.settle_window()
        elif self._kept is not None and self._kept.deferred:
            self._settled = settled(self._events, self._settled)
            if self._sub is not None and not self._sub.closed:
                return self._events[:self._settled]
        return self._events

    @events.setter
    def events(self, events) -> None:   # e.g. a UI's recorded events, to ``save``
        self._events = events

    @property
    def thread_names(self) -> dict:
        """thread ident -> name, for every thread in the recording."""
        if self._writer is not None:   # named from every written event's thread
            self._writer.flush(to_os=False)
            threads = self._writer.threads
        else:
            threads = {e.thread for e in self._events}
        names = self._names   # named when asked (threads note their names as they run)
        for t in threads - names.keys():
            names[t] = ev.thread_name(t) or ("main" if t == threading.main_thread().ident
                                             else f"thread {t}")
        return names

    def __enter__(self) -> "Trace":
        if self.path is not None and self.path.endswith(".jsonl"):
            # the writer keeps the window and the counts (filled as batches are written:
            # complete after each run and on exit)
            self._events = collections.deque(maxlen=RECENT_EVENTS)
            self._writer = JsonlWriter(self.path, self.capture, window=self._events)
            callback, on_op = self._writer.write, self._writer.op_write
        else:
            callback = on_op = self._recorder()
        level = self.capture
        if level == "fault":   # the executor makes summaries; the recorder keeps faulty inputs
            from .faults import FaultRecorder
            self.faults = FaultRecorder(self.path if self._writer is not None else None)
            callback, level = self.faults.watching(callback), "summary"
        # a summary trace takes callbacks' small summaries later (trace.pending)
        settles = self._writer if self._writer is not None and level == "summary" else None
        if self._writer is None and self.capture == "summary":
            settles = self._kept = _Kept(self._events)
        self._sub = ev.subscribe(callback, level, self.capture_bytes, op_callback=on_op,
                                 settles=settles)
        return self

    def _recorder(self):
        """``_on_event`` of an in-memory trace: ``list.append`` itself (atomic, and no Python
        call per event); thread names come from ``events.thread_name`` when asked."""
        return self._events.append

    def __exit__(self, *exc) -> bool:
        self._sub.close()
        if self.faults is not None:
            self.faults.close()
        if self._writer is not None:
            self._writer.close()
        elif self.path is not None:
            self.save(self.path)
        return False

    def _count(self, cls) -> int:
        if self._writer is not None:
            self._writer.flush(to_os=False)   # include what is queued
            return self._writer.counts[cls]
        return sum(1 for e in self.events if type(e) is cls)

    @property
    def event_count(self) -> int:
        """Events recorded (streamed ones included, not only the window)."""
        return self._writer.count if self._writer is not None else len(self._events)

    @property
    def op_count(self) -> int:
        """Op executions that completed."""
        return self._count(ev.OpEnd)

    @property
    def failed_count(self) -> int:
        """Op executions that raised (``OpError``)."""
        return self._count(ev.OpError)

    @property
    def run_count(self) -> int:
        return self._count(ev.RunStart)

    def to_pandas(self):
        """One row per op call as a pandas DataFrame (columns: ``trace.export.export_trace``).

        Of a streamed (.jsonl) trace, every op in its file, not only the window.
        """
        from .rows import to_pandas
        if self._writer is None:
            return to_pandas(self.events, os.getpid())
        if self._sub is not None and not self._sub.closed:
            self._writer.sync()   # the block still runs: what is queued, into the file
        from .jsonl import load_trace
        return load_trace(self.path).to_pandas()

    def save(self, path) -> None:
        """Write ``.events`` to ``path`` (.json or .jsonl); of a streamed trace, only its window."""
        path = os.fspath(path)
        if path.endswith(".jsonl"):
            writer = JsonlWriter(path, self.capture, pid=self.pid)
            for e in self.events:
                writer.write(e)
            writer.close()
            if self.faults is not None and self._writer is None:
                self.faults.save(path)
        elif path.endswith(".json"):
            write_chrome(path, self.events, thread_names=self.thread_names, real_pid=self.pid)
        else:
            raise ValueError(f"trace path {path!r} must end in .json or .jsonl")


class _Kept:
    """An in-memory trace's events as the sink ``events.subscribe``'s ``settles`` names:
    ``op_write`` appends, ``deferred`` says a pending summary may be among them."""

    __slots__ = ("op_write", "deferred")

    def __init__(self, events: list):
        self.op_write = events.append
        self.deferred = False


def trace(path=None, capture: str = "summary", capture_bytes: int = 1 << 20) -> Trace:
    """``with pfd.trace("run.json") as tr:`` records every op run in the block.

    ``capture``: "none", "summary" (value summaries), "full" (copies of values too,
    up to ``capture_bytes`` each) or "fault" (summaries, plus the inputs of each
    wrapped call that raised, returned a wrong count or dtype, made NaN/Inf or
    carries a diagnostic: ``pyfunc-debug replay`` re-runs such a call).
    """
    return Trace(path, capture, capture_bytes)
