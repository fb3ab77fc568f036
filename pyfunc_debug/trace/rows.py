"""One row per op call of a trace (SPEC §3b): the rows CSV, Parquet and pandas share.

``op_rows(events)`` pairs each ``OpStart`` with the ``OpEnd`` or ``OpError``
that closes it and yields one dict per op call, as it goes: memory holds only
the ops still open, so a long trace streams. ``to_pandas(events)`` makes them
a DataFrame (``LoadedTrace.to_pandas()``, ``Trace.to_pandas()``); ``export``
writes them as CSV or Parquet. Apart from ``export`` so that ``jsonl`` (whose
``LoadedTrace`` has ``to_pandas``) and ``export`` (which loads traces) do not
import each other.
"""
from __future__ import annotations

import operator

from .. import events as ev
from ..events import OpEnd, OpError, OpStart, RunEnd, RunStart, Warning
from .bulk import paused_gc

__all__ = ["COLUMNS", "VALUE_FIELDS", "STATUSES", "op_rows", "columns_for", "column_kind",
           "to_pandas"]

COLUMNS = ("run", "op", "op_type", "thread", "worker", "pid", "start_ns", "duration_ns",
           "status", "parent", "source", "error_type", "message")
VALUE_FIELDS = ("shape", "dtype", "min", "max", "mean", "nan", "inf")
STATUSES = ("ok", "error", "interrupted", "folded", "deduplicated", "unfinished")
INT, FLOAT, STR = "int", "float", "str"   # what column_kind says
_KINDS = {"run": INT, "thread": INT, "pid": INT, "start_ns": INT, "duration_ns": INT,
          "min": FLOAT, "max": FLOAT, "mean": FLOAT, "nan": INT, "inf": INT}
_STATS = operator.attrgetter("dtype", "min", "max", "mean", "nan", "inf")   # a summary's, by name
_INTERRUPTED = "interrupted by "   # how every interrupted op's OpError message begins


def _value_names(prefix: str, count: int) -> list:
    """``in0_shape, in0_dtype, ...`` for ``count`` values: a tuple of names per value."""
    return [tuple(f"{prefix}{i}_{f}" for f in VALUE_FIELDS) for i in range(count)]


def columns_for(events) -> list:
    """The column names of ``op_rows(events)``: ``COLUMNS``, then per input ``in{i}_*``
    and per output ``out{j}_*`` (``VALUE_FIELDS``), as many as the op with most has."""
    n_in = n_out = 0
    for e in events:
        if e.__class__ is OpEnd:
            if len(e.inputs) > n_in:
                n_in = len(e.inputs)
            if len(e.outputs) > n_out:
                n_out = len(e.outputs)
    names = list(COLUMNS)
    for group in _value_names("in", n_in) + _value_names("out", n_out):
        names.extend(group)
    return names


def column_kind(column: str) -> str:
    """``int``, ``float`` or ``str``: the type of a column's values."""
    return _KINDS.get(column if column in COLUMNS else column.rpartition("_")[2], STR)


_WORKER_FIELDS: dict = {}


def _carries_worker(cls) -> bool:
    """Whether events of ``cls`` have ``worker`` and ``pid`` fields of their own."""
    found = _WORKER_FIELDS.get(cls)
    if found is None:
        found = _WORKER_FIELDS[cls] = {"worker", "pid"} <= set(cls._fields)
    return found


class _Rows:
    """The state of one pass of ``op_rows``: open ops, where threads ran, op types."""

    def __init__(self, pid):
        self.pid = pid if type(pid) is int else None   # a header's, unchecked by load_trace
        self.open: dict = {}        # (thread, op) -> stack of OpStart not yet closed
        self.where: dict = {}       # thread -> (worker, pid)
        self.types: dict = {}       # op name -> op type, for ops a RunStart says did not run
        self.skipped: dict = {}     # run_id -> RunStart with folded or de-duplicated ops
        self.names: dict = {}       # (inputs, outputs) -> the row's column names
        self.shapes: dict = {}      # shape tuple -> its string (a few shapes recur)

    def place(self, e) -> tuple:
        """(worker, pid) of the process ``e`` ran in: its own fields when it has them
        (SPEC §3b), else the origin of its thread (a Dask worker's), else the trace's."""
        if _carries_worker(e.__class__) and e.worker:
            return e.worker, e.pid
        t = e.thread
        found = self.where.get(t)
        if found is None:
            o = ev.origin(t)
            found = self.where[t] = (o.address, o.pid) if o is not None else (None, self.pid)
        return found

    def row(self, e, start_ns, duration_ns, status, source, error_type=None, message=None):
        """The ``COLUMNS`` values of a row about ``e``, as a list."""
        worker, pid = self.place(e)
        return [e.run_id, e.op, e.op_type, e.thread, worker, pid, start_ns, duration_ns,
                status, e.parent, source or None, error_type, message]

    def with_values(self, row: list, ins, outs) -> dict:
        """``row`` and the ``VALUE_FIELDS`` of each summary in ``ins`` and ``outs``, by name."""
        key = (len(ins), len(outs))
        names = self.names.get(key)
        if names is None:
            names = self.names[key] = tuple(COLUMNS) + sum(
                _value_names("in", key[0]) + _value_names("out", key[1]), ())
        shapes = self.shapes
        for s in ins + outs:   # one dict at the end: cheaper than updating one per value
            shape = shapes.get(s.shape)
            if shape is None:
                if len(shapes) > 4096:   # many distinct shapes: forget the old ones
                    shapes.clear()
                shape = shapes[s.shape] = str(s.shape)
            row += (shape, *_STATS(s))   # all but size and preview
        return dict(zip(names, row))

    def start_of(self, e):
        """The ``OpStart`` that ``e`` closes (None when the trace lacks it)."""
        key = (e.thread, e.op)
        stack = self.open.get(key)
        if not stack:
            return None
        start = stack.pop()
        if not stack:
            del self.open[key]
        return start

    def skipped_rows(self, run: RunStart):
        """Rows for the ops ``run`` reused (folded) or shared (de-duplicated) instead of running."""
        notes = [(name, "folded", "value reused from an earlier run") for name in run.folded]
        notes += [(name, "deduplicated", f"same call as '{first}', which ran")
                  for name, first in run.deduplicated]
        for name, status, note in notes:
            e = run._replace(op=name, op_type=self.types.get(name, ""))
            yield dict(zip(COLUMNS, self.row(e, run.t_ns, 0, status, None, None, note)))


def op_rows(events, pid: int | None = None):
    """One dict per op call of ``events`` (in the order the calls ended), keyed by
    ``columns_for(events)``; a value an op lacks is absent (or ``None``).

    An op's status is ``ok`` (an ``OpEnd``), ``error`` or ``interrupted`` (an
    ``OpError``; interrupted: by KeyboardInterrupt, a debugger's quit or abort),
    ``folded`` / ``deduplicated`` (the run's ``RunStart`` says it reused a
    value instead of running it: a row per run, listed at the run's end,
    starting at the run's start and lasting 0 ns) or ``unfinished`` (an
    ``OpStart`` nothing closes: the trace ends while it runs; no duration).
    ``pid`` is the recording process's (a loaded trace's header has it), given
    to every event not from a Dask worker.
    """
    st = _Rows(pid)
    open_ops, types = st.open, st.types
    for e in events:
        cls = e.__class__
        if cls is OpStart:
            open_ops.setdefault((e.thread, e.op), []).append(e)
        elif cls is OpEnd:
            start = st.start_of(e)
            types[e.op] = e.op_type
            yield st.with_values(st.row(e, e.t_ns - e.duration_ns, e.duration_ns, "ok",
                                        start.source if start is not None else None),
                                 e.inputs, e.outputs)
        elif cls is OpError:
            st.start_of(e)
            types[e.op] = e.op_type
            status = "interrupted" if e.message.startswith(_INTERRUPTED) else "error"
            yield dict(zip(COLUMNS, st.row(e, e.t_ns - e.duration_ns, e.duration_ns, status,
                                           e.source, e.error_type, e.message)))
        elif cls is RunStart:
            if e.folded or e.deduplicated:
                st.skipped[e.run_id] = e
                types.update(zip(e.ops, e.op_types))
        elif cls is RunEnd:
            run = st.skipped.pop(e.run_id, None)
            if run is not None:   # after the run's Warnings, which name the skipped ops' types
                yield from st.skipped_rows(run)
        elif cls is Warning and e.kind in ("folded", "deduplicated"):
            types[e.op] = e.op_type
    for run in st.skipped.values():   # runs the trace ends in
        yield from st.skipped_rows(run)
    for stack in open_ops.values():
        for start in stack:
            yield dict(zip(COLUMNS, st.row(start, start.t_ns, None, "unfinished", start.source)))


def to_pandas(events, pid: int | None = None):
    """``op_rows(events)`` as a pandas DataFrame with ``columns_for(events)``: counts and
    times as int64 (pandas' nullable ``Int64`` where some are missing), stats as float64
    (a NaN min stays NaN), text as pandas infers strings (missing: NA)."""
    try:
        import numpy as np
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas needs pandas: pip install pandas") from None
    columns = columns_for(events)
    # as objects first: letting pandas infer would turn an int column with a gap into floats
    with paused_gc():
        raw = pd.DataFrame(list(op_rows(events, pid)), columns=columns, dtype=object)
    data = {}
    for name in columns:
        values, kind = raw[name].to_numpy(), column_kind(name)
        if kind is INT:
            data[name] = (pd.array(values, dtype="Int64") if pd.isna(values).any()
                          else values.astype(np.int64))
        elif kind is FLOAT:
            data[name] = values.astype(np.float64)   # None -> NaN
        else:
            data[name] = pd.Series(values).infer_objects()
    return pd.DataFrame(data, columns=columns)
