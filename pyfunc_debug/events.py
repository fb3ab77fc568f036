"""Per-op events and the subscription bus (SPEC §3).

Events are small immutable records (named tuples of plain data). Every one has
``seq`` (strictly increasing per process), ``run_id``, ``t_ns``
(``time.perf_counter_ns``), ``thread``, ``op`` (the op's name), ``op_type`` and
``parent`` (the enclosing py_function op, for eager ops run inside it).

``subscribe(callback, capture=...)`` -> handle; callbacks run in the executing
thread. A callback that raises is reported once — a ``Warning`` event to the
other subscribers and a ``warnings.warn`` — and the run goes on. With no
subscriber the executor takes its fast path and makes no events at all.

Events that ran in another process (a Dask worker, SPEC §8) are re-emitted
here with a ``thread`` that ``remote_thread`` made: a negative number, and
``origin(event.thread)`` names the process (address, pid, thread name). The op
events among them (``WORKER_EVENTS``) also carry the worker's address and pid
as fields, ``worker`` and ``pid`` (SPEC §3b); other events read them as ``None``.
"""
from __future__ import annotations

import itertools
import threading
import warnings
from typing import NamedTuple

from msgspec.structs import replace as _replace

from .trace.summary import ROW_FIELDS, ValueSummary

__all__ = ["RunStart", "OpStart", "OpEnd", "OpError", "RunEnd", "BreakpointHit", "Warning",
           "ValueSummary", "subscribe", "Subscription", "EVENT_TYPES", "CAPTURE_LEVELS",
           "listening", "emit", "next_seq", "Origin", "origin", "remote_thread", "thread_name",
           "note_thread", "WORKER_EVENTS", "OPTIONAL_TAIL", "without_empty_tail",
           "without_values"]

CAPTURE_LEVELS = ("none", "summary", "full")
# capture="fault" (``trace.faults``): while a fault recorder is open (``fault_capture``),
# each wrapped-function kernel notes its call's (op, args) here by thread, for the recorder
# to keep if the call goes wrong
fault_capture = 0
held_calls: dict = {}
_seq = itertools.count(1)
next_seq = _seq.__next__


class RunStart(NamedTuple):
    """A ``Session.run`` or function call begins: what it will run."""

    seq: int
    run_id: int
    t_ns: int
    thread: int
    kind: str                 # "session" | "function"
    name: str                 # function name, or "" for a session
    ops: tuple = ()           # names of the ops that will run, in order
    folded: tuple = ()        # ops whose cached (constant-folded) value is reused
    deduplicated: tuple = ()  # (op, op it shares a run with) pairs
    op_types: tuple = ()      # the type of each op in ``ops``
    op: str = ""
    op_type: str = ""
    parent: str | None = None


class OpStart(NamedTuple):
    seq: int
    run_id: int
    t_ns: int
    thread: int
    op: str
    op_type: str
    parent: str | None = None
    source: str = ""
    producers: tuple = ()     # op producing each input (for dataflow arrows)
    worker: str | None = None  # a Dask worker's address, for events that ran there (§3b)
    pid: int | None = None     # that worker's process id


class OpEnd(NamedTuple):
    seq: int
    run_id: int
    t_ns: int
    thread: int
    op: str
    op_type: str
    parent: str | None
    duration_ns: int
    inputs: tuple = ()        # ValueSummary per input (capture >= "summary")
    outputs: tuple = ()       # ValueSummary per output
    worker: str | None = None
    pid: int | None = None


class OpError(NamedTuple):
    seq: int
    run_id: int
    t_ns: int
    thread: int
    op: str
    op_type: str
    parent: str | None
    error_type: str
    message: str
    source: str = ""
    duration_ns: int = 0
    worker: str | None = None
    pid: int | None = None


class RunEnd(NamedTuple):
    seq: int
    run_id: int
    t_ns: int
    thread: int
    duration_ns: int
    ok: bool
    error: str | None = None
    op: str = ""
    op_type: str = ""
    parent: str | None = None


class BreakpointHit(NamedTuple):
    seq: int
    run_id: int
    t_ns: int
    thread: int
    op: str
    op_type: str
    parent: str | None
    when: str                 # "before" | "after" | "error"
    breakpoint: str           # a description of the breakpoint, "" when stepping
    worker: str | None = None
    pid: int | None = None


class Warning(NamedTuple):  # noqa: A001 - the SPEC's event name
    """A diagnostic: something that is likely the root cause of a bug, about ``op``."""

    seq: int
    run_id: int | None
    t_ns: int
    thread: int
    op: str
    op_type: str
    parent: str | None
    message: str
    kind: str = "warning"      # "input_modified", "mutation", "folded", "tout_mismatch", ...
    inputs: tuple = ()         # input_modified: each input's ValueSummary after the op ran
    source: str = ""           # where the op was created (file:line)
    hint: str = ""             # how to fix it
    worker: str | None = None
    pid: int | None = None

    @property
    def category(self) -> str:
        """The name ``kind`` had before (kept for old code)."""
        return self.kind


class Origin(NamedTuple):
    """The process an event ran in, when that is not this one."""

    address: str              # e.g. the Dask worker's "tcp://127.0.0.1:40211"
    pid: int
    thread_name: str

    @property
    def label(self) -> str:
        return f"worker {self.address} pid {self.pid}"


# Remote threads get idents no local thread has (negative), so events stay plain records.
_origins: dict[int, Origin] = {}
_remote_idents: dict[tuple, int] = {}
_origins_lock = threading.Lock()


def remote_thread(address: str, pid: int, ident: int, name: str) -> int:
    """The ``thread`` to give events re-emitted from thread ``ident`` of process ``pid``."""
    key = (address, pid, ident)
    with _origins_lock:
        t = _remote_idents.get(key)
        if t is None:
            t = _remote_idents[key] = -(len(_remote_idents) + 1)
            _origins[t] = Origin(address, pid, name)
        return t


# Names of this process's threads that ran observed ops: noted once per run or loop (not
# per event), so a recorder's callback can be a bare ``list.append``.
thread_names: dict[int, str] = {}


def note_thread(ident: int, framework: str | None = None) -> None:
    """Remember the calling thread's name (``ident`` is its ``threading.get_ident()``).

    A thread Python did not start is named ``Dummy-N`` by ``threading``; when
    ``framework`` (say "tensorflow") made it, it is named for that framework and, on
    Linux, its own name when it was given one (not only the process's, which threads
    inherit): "tensorflow tf_Compute", else "tensorflow thread N" (a trace's track
    then says whose thread it was).
    """
    name = threading.current_thread().name
    if framework is not None and name.startswith("Dummy-"):
        native = _native_name(f"/proc/self/task/{threading.get_native_id()}/comm")
        own = native and native != _native_name("/proc/self/comm")   # not only inherited
        name = f"{framework} {native}" if own else f"{framework} thread {name[len('Dummy-'):]}"
    thread_names[ident] = name


def _native_name(path: str) -> str:
    """A thread's name as the operating system knows it (Linux: ``comm``), or ""."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def thread_name(ident: int) -> str | None:
    """The name of the thread events with this ``thread`` came from, when known."""
    o = origin(ident)
    return o.thread_name if o is not None else thread_names.get(ident)


def origin(thread: int) -> Origin | None:
    """Where events with this ``thread`` ran; ``None`` for this process's threads."""
    return _origins.get(thread) if thread < 0 else None


EVENT_TYPES = {cls.__name__: cls for cls in
               (RunStart, OpStart, OpEnd, OpError, RunEnd, BreakpointHit, Warning)}

# -- the optional ``worker``/``pid`` tail -------------------------------------------
# Only events that ran in a Dask worker hold these two items: every other event ends
# before them (as events did before they existed, so traces and the wire stay as they
# were) and reads them as ``None``. Hot paths build events with ``tuple.__new__`` and
# simply leave them out; the constructor, ``_replace`` and decoding leave out a tail
# that is ``None``.
OPTIONAL_TAIL = ("worker", "pid")
WORKER_EVENTS = (OpStart, OpEnd, OpError, BreakpointHit, Warning)
_tuple_new = tuple.__new__


# where each event type holds value summaries (OpEnd: inputs, outputs; Warning: inputs)
_SUMMARY_AT = {cls: tuple(cls._fields.index(f) for f in ("inputs", "outputs") if f in cls._fields)
               for cls in EVENT_TYPES.values()}
_VALUE = ROW_FIELDS   # a summary's ``value``: the field after its row's


def without_values(event):
    """``event`` with no value copy in its summaries (capture="full" keeps them): the same
    event when none has one. Built without the event's ``_replace`` (Python code): the UI's
    bridge calls it for every op end, on the program's threads."""
    stripped = None
    for i in _SUMMARY_AT[event.__class__]:
        if i < len(event):
            for s in event[i]:
                if (s[_VALUE] if s.__class__ is tuple else s.value) is not None:
                    if stripped is None:
                        stripped = list(event)
                    stripped[i] = tuple([_valueless(s) for s in event[i]])
                    break
    return event if stripped is None else _tuple_new(event.__class__, stripped)


def _valueless(s):
    """Summary ``s`` without its captured value (a plain tuple laid out as one, too)."""
    return (*s[:_VALUE], None) if s.__class__ is tuple else _replace(s, value=None)


def _tail_field(i: int):
    def get(self):
        return self[i] if len(self) > i else None
    return property(get, doc="A Dask worker's address and pid, for events that ran there "
                             "(else None).")


def without_empty_tail(event):
    """``event`` without its worker/pid items when both are ``None`` (the usual form)."""
    if len(event) == len(event._fields) and event[-1] is None and event[-2] is None:
        return _tuple_new(event.__class__, event[:-2])
    return event


def _short_new(cls, new):
    """A constructor like NamedTuple's (same signature and defaults, made the way
    ``collections.namedtuple`` makes its own, at the same cost) that leaves out a
    ``None`` worker/pid tail."""
    head, tail = cls._fields[:-2], cls._fields[-2:]
    source = (f"def __new__(_cls, {', '.join(cls._fields)}):\n"
              f"    if {tail[0]} is None and {tail[1]} is None:\n"
              f"        return _tuple_new(_cls, ({', '.join(head)},))\n"
              f"    return _tuple_new(_cls, ({', '.join(cls._fields)},))\n")
    namespace = {"_tuple_new": _tuple_new}
    exec(source, namespace)  # noqa: S102 - our own field names only, as namedtuple does
    made = namespace["__new__"]
    made.__defaults__, made.__qualname__ = new.__defaults__, f"{cls.__name__}.__new__"
    return staticmethod(made)


def _padded(self):
    cls = self.__class__
    missing = cls._fields[len(self):]
    return _tuple_new(cls, (*self, *(cls._field_defaults[f] for f in missing))) \
        if missing else self


def _make_tolerant(cls) -> None:
    replace, asdict, rep = cls._replace, cls._asdict, cls.__repr__
    n = len(cls._fields)
    for i, name in enumerate(OPTIONAL_TAIL, start=n - len(OPTIONAL_TAIL)):
        assert cls._fields[i] == name, f"{cls.__name__}: {name} must be field {i}"
        setattr(cls, name, _tail_field(i))
    cls.__new__ = _short_new(cls, cls.__new__)
    cls._replace = lambda self, /, **kw: without_empty_tail(replace(_padded(self), **kw))
    cls._asdict = lambda self: asdict(_padded(self))
    cls.__repr__ = lambda self: rep(_padded(self))


for _cls in WORKER_EVENTS:
    _make_tolerant(_cls)
del _cls

# -- the bus ----------------------------------------------------------------------


class Subscription:
    """A subscriber; ``close()`` (or ``with``) ends it."""

    __slots__ = ("callback", "op_callback", "capture", "capture_bytes", "reported", "closed",
                 "records", "settles")

    def __init__(self, callback, capture: str, capture_bytes: int, records=None,
                 op_callback=None, settles=None):
        if capture not in CAPTURE_LEVELS:
            raise ValueError(f"capture must be one of {CAPTURE_LEVELS}, not {capture!r}")
        self.callback = callback
        self.op_callback = callback if op_callback is None else op_callback
        self.capture = capture
        self.capture_bytes = capture_bytes
        self.reported = False
        self.closed = False
        self.records = records
        self.settles = settles

    def close(self) -> None:
        _bus.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _Bus:
    """The subscribers, and the capture level the executor must provide for them."""

    def __init__(self):
        self.subs: tuple[Subscription, ...] = ()
        self.capture = 0          # index into CAPTURE_LEVELS
        self.capture_bytes = 0
        self.records = None       # the one subscriber's record sink, when it takes records
        self.defer = None         # the one subscriber's settling sink (capture "summary"/"full")
        self._lock = threading.Lock()

    def add(self, sub: Subscription) -> None:
        with self._lock:
            self.subs = self.subs + (sub,)
            self._recompute()

    def remove(self, sub: Subscription) -> None:
        with self._lock:
            sub.closed = True
            self.subs = tuple(s for s in self.subs if s is not sub)
            self._recompute()

    def _recompute(self) -> None:
        self.capture = max((CAPTURE_LEVELS.index(s.capture) for s in self.subs), default=0)
        self.capture_bytes = max((s.capture_bytes for s in self.subs if s.capture == "full"),
                                 default=0)
        subs = self.subs
        self.records = subs[0].records if len(subs) == 1 and not self.capture else None
        self.defer = subs[0].settles if len(subs) == 1 and self.capture else None

    def set_records(self, sub: Subscription, records) -> None:
        """Switch ``sub`` to (``records`` a sink) or from (``None``) op records."""
        with self._lock:
            sub.records = records
            self._recompute()

    def emit(self, event) -> None:
        for sub in self.subs:
            try:
                sub.callback(event)
            except Exception as exc:  # a subscriber never breaks the run
                self.failed(sub, event, exc)

    def failed(self, sub, event, exc) -> None:
        """``sub`` raised on ``event``: report it the first time only."""
        if sub is not None and not sub.reported:
            sub.reported = True
            self._report(sub, event, exc)

    def _report(self, sub, event, exc) -> None:
        import time
        msg = (f"event subscriber {getattr(sub.callback, '__qualname__', sub.callback)!r} raised "
               f"{type(exc).__name__}: {exc} (on {type(event).__name__} of op "
               f"'{getattr(event, 'op', '')}'); further errors from it are ignored")
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
        w = Warning(next_seq(), getattr(event, "run_id", None), time.perf_counter_ns(),
                    threading.get_ident(), getattr(event, "op", ""),
                    getattr(event, "op_type", ""), None, msg, "subscriber")
        for other in self.subs:
            if other is not sub:
                try:
                    other.callback(w)
                except Exception:
                    pass


_bus = _Bus()


def subscribe(callback, capture: str = "none", capture_bytes: int = 1 << 20,
              records=None, op_callback=None, settles=None) -> Subscription:
    """Call ``callback(event)`` for every event until ``handle.close()``.

    ``capture`` asks the executor for value summaries ("summary") or summaries
    plus copies of values up to ``capture_bytes`` each ("full").

    ``records`` (internal: the attach server's cheap path) is a
    ``runtime.records.RecordSink``: while this is the only subscriber and
    capture is "none", most ops' ``OpStart``/``OpEnd`` go to it as op records
    instead; every other event still goes to ``callback``.

    ``op_callback`` (internal: a JSONL stream's queue append) takes the place
    of ``callback`` for the ``OpStart``/``OpEnd`` events of a session's run
    loop while this is the only subscriber: the events a trace has most of,
    where a C-level callable saves a Python call each.

    ``settles`` (internal: a trace's writer or its in-memory events, or a reader
    of no ``OpEnd`` summary such as the console's printer; see ``trace.pending``)
    is an object whose ``op_write`` accepts a ``PendingOpEnd``, whose pending
    summaries its readers settle once its ``deferred`` is set: while
    this is the only subscriber and capture is "summary" or "full" (the UI's bridge:
    a pending summary holds its array's bytes, a copy), recorded framework callbacks
    leave their small arrays' summaries to it.
    """
    sub = Subscription(callback, capture, capture_bytes, records, op_callback, settles)
    _bus.add(sub)
    return sub


def listening() -> bool:
    return bool(_bus.subs)


def emit(event) -> None:
    _bus.emit(event)
