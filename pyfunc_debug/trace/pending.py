"""Summaries taken later, when the trace is read: what a recorded callback defers.

In a program whose callbacks run on threads that share the interpreter lock
with the framework (a ``tf.data`` map, a JAX callback), every microsecond a
recorded call holds the lock is paid several times over in waiting (measured
in a ``tf.data`` pipeline: a call that takes 24 µs of CPU in a loop spent
about 110 µs more in the wrapper than an unrecorded one). So when the one
subscriber is a summary ``.jsonl`` trace (``jsonl.JsonlWriter``), a callback
keeps each small numeric array's bytes (``DEFER_LIMIT`` elements or fewer);
for a float output it also sums the items, which is its NaN/Inf check (the
sum is finite exactly when no element is NaN or ±Inf). The file holds such a
*pending* summary as it is, and whoever reads the lines settles them
(``settle_rows``): ``load_trace``, and the recorder's window of recent events.
Settling once, on reading, costs the program nothing (a helper process that
settled them as they were written cost a ``tf.data`` pipeline about 0.09x:
its start, its pipe and its CPU on a 2-core machine).

A pending summary is a plain tuple laid out as a ``ValueSummary`` (shape,
dtype, size, then no stats, NaN/Inf counts 0, ``MARK`` as its preview and
its bytes as hex as its value): orjson writes it as it is, the
collector stops tracking it, and diagnostics read it by index as they read a
summary. What the call needs stays exact and immediate: an output holding a
NaN or Inf is summarised at once (so diagnostics and fault capture see what
they always saw), and an input's counts, which only matter when an output has
NaN or Inf, are taken then (``settle``). A settled summary is ``summarize``
of the same array.
"""
from __future__ import annotations

import math

import numpy as np

from .. import events as ev
from .settle_group import GROUP, settle_group
from .summary import ROW_FIELDS, summarize

__all__ = ["PendingOpEnd", "pending", "settle", "held_array", "settled", "settle_all", "held_bytes", "from_row", "settle_rows", "settle_lines", "BadPending", "MARK", "MARKED",
           "DEFER_LIMIT", "PREVIEW_AT", "INPUTS_AT", "OUTPUTS_AT"]

DEFER_LIMIT = 1024      # elements: bigger arrays pay passes, not fixed costs; summarised now
MARK = "\x00"           # a pending summary's preview (JSON "\u0000": no summary's preview)
MARKED = b'"\\u0000"'    # how JSON (orjson, json) writes MARK: a line holding none has none
PREVIEW_AT, _KEPT = 8, ROW_FIELDS   # where a pending summary holds MARK and its bytes as hex
# dtype -> (its name, whether it is a float): the dtypes deferred
_KINDS = {np.dtype(t): (np.dtype(t).name, np.dtype(t).kind == "f")
          for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                    np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}
_NAMED = {name: dt for dt, (name, _) in _KINDS.items()}   # what a file may name
INPUTS_AT, OUTPUTS_AT = 9, 10   # an OpEnd row's inputs and outputs (its type name first)


class PendingOpEnd(ev.OpEnd):
    """An ``OpEnd`` that may hold pending summaries: only for a sink that settles it."""

    __slots__ = ()


def pending(a, blob: bytes, checked: bool):
    """A pending summary of ndarray ``a`` (``blob``: its bytes), or None when ``a`` must
    be summarised now: not a small int/float array of one or more dimensions, or
    (``checked``: an output) a float array holding a NaN or Inf. Lock-free: no numpy
    call here releases the interpreter lock (see ``summary``)."""
    size = a.size
    if not 0 < size <= DEFER_LIMIT or not a.ndim:
        return None
    kind = _KINDS.get(a.dtype)
    if kind is None:
        return None
    if checked and kind[1]:
        total = sum(a.ravel().tolist())
        if total - total != 0.0:   # a NaN or ±Inf: exact counts, now
            return None
    return (a.shape, kind[0], size, None, None, None, 0, 0, MARK, False, blob.hex())


def held_array(p):
    """The array pending summary ``p`` holds (read-only)."""
    return np.frombuffer(bytes.fromhex(p[_KEPT]), np.dtype(p[1])).reshape(p[0])


def settle(s):
    """``s`` as a ``ValueSummary``: a pending one summarised, any other unchanged."""
    return summarize(held_array(s)) if s.__class__ is tuple else s


def settle_all(pending: list) -> list:
    """The ``ValueSummary`` of each of ``pending`` (``summarize`` of its array, exactly);
    ``ValueError`` if one's bytes are not hex. Those of one dtype and shape — a
    callback's calls, hundreds a batch — are taken together (``settle_group``)."""
    groups: dict = {}
    for i, p in enumerate(pending):
        groups.setdefault((p[1], p[0]), []).append(i)
    out = [None] * len(pending)
    for where in groups.values():
        items = [pending[i] for i in where]
        made = settle_group(items) if len(items) >= GROUP else \
            [summarize(held_array(p)) for p in items]
        for i, s in zip(where, made):
            out[i] = s
    return out


_INPUTS, _OUTPUTS = ev.OpEnd._fields.index("inputs"), ev.OpEnd._fields.index("outputs")


def settled(events: list, start: int = 0) -> int:
    """Make each ``PendingOpEnd`` of ``events[start:]`` (changed in place) an ``OpEnd`` of
    settled summaries; events appended meanwhile by other threads are left for the next
    call. Returns where that call starts. The pending summaries are settled together
    (``settle_all``)."""
    end = len(events)
    at = [i for i in range(start, end) if events[i].__class__ is PendingOpEnd]
    if not at:
        return end
    kept = [s for i in at for field in (_INPUTS, _OUTPUTS) for s in events[i][field]
            if s.__class__ is tuple]
    made = iter(settle_all(kept))
    for i in at:
        e = events[i]
        events[i] = tuple.__new__(ev.OpEnd, (
            *e[:_INPUTS], tuple([next(made) if s.__class__ is tuple else s
                                 for s in e[_INPUTS]]),
            tuple([next(made) if s.__class__ is tuple else s for s in e[_OUTPUTS]]),
            *e[_OUTPUTS + 1:]))
    return end


def held_bytes(events: list) -> int:
    """The bytes the op ends of ``events`` hold in their summaries: pending ones' (as hex)
    and captured values."""
    n = 0
    for e in events:
        if e.__class__ is PendingOpEnd or e.__class__ is ev.OpEnd:
            for s in e[_INPUTS] + e[_OUTPUTS]:
                v = s[_KEPT] if s.__class__ is tuple else s.value   # hex, or a captured value
                if v is not None:
                    n += len(v) if v.__class__ is str else getattr(v, "nbytes", 64)
    return n


class BadPending(ValueError):
    """A pending summary in a file that cannot be one; ``index``: its line among those
    given to ``settle_rows``."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index


def from_row(row) -> tuple | None:
    """The pending summary a row read back from JSON stands for, or None for a summary's
    row (found by its ``MARK``). Raises ``ValueError`` for one no writer makes (bytes
    that are not hex are found when settled, ``settle_all``)."""
    if type(row) is not list or len(row) != _KEPT + 1 or row[PREVIEW_AT] != MARK:
        return None
    shape, name, size, hexed = row[0], row[1], row[2], row[_KEPT]
    dt = _NAMED.get(name) if type(name) is str else None
    if dt is None:
        raise ValueError(f"a pending summary of dtype {name!r}, which is never deferred")
    if type(shape) is not list or not all(type(d) is int and d >= 0 for d in shape):
        raise ValueError(f"a pending {name} summary with shape {shape!r}")
    shape = tuple(shape)
    if type(size) is not int or type(hexed) is not str or math.prod(shape) != size \
            or len(hexed) != 2 * size * dt.itemsize:
        raise ValueError(f"a pending {name} summary of {size!r} elements came with "
                         f"{len(hexed) // 2 if type(hexed) is str else 'no'} bytes and shape "
                         f"{list(shape)}")
    return (shape, name, size, None, None, None, 0, 0, MARK, False, hexed)


def settle_rows(lines: list, first: int = 0) -> None:
    """Make every pending summary in ``lines[first:]`` (JSON rows as bytes; changed in
    place) its summary's row: the lines then read as if summarised at the call. A line
    that is not JSON is left as it is, for the reader to report (or skip, torn); one whose
    pending summary is malformed raises ``BadPending``."""
    import orjson   # only a reader of pending lines needs it here

    parsed, spots, kept = {}, [], []
    for i in range(first, len(lines)):
        line = lines[i]
        if MARKED not in line:
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if type(row) is not list or len(row) <= OUTPUTS_AT or row[0] != "OpEnd":
            continue   # only an OpEnd's inputs and outputs are ever left pending
        parsed[i] = row
        for field in (row[INPUTS_AT], row[OUTPUTS_AT]):
            if type(field) is not list:
                continue
            for j, item in enumerate(field):
                try:
                    p = from_row(item)
                except ValueError as e:
                    where = "inputs" if field is row[INPUTS_AT] else "outputs"
                    raise BadPending(i, f"{e} (in {where} {j})") from None
                if p is not None:
                    spots.append((field, j, i))
                    kept.append(p)
    try:
        summaries = settle_all(kept)
    except ValueError:   # bytes that are not hex: which line?
        for (field, j, i), p in zip(spots, kept):
            try:
                bytes.fromhex(p[_KEPT])
            except ValueError:
                where = "inputs" if field is parsed[i][INPUTS_AT] else "outputs"
                raise BadPending(i, "a pending summary whose bytes are not hex "
                                    f"(in {where} {j})") from None
        raise
    for (field, j, _), summary in zip(spots, summaries):
        field[j] = summary.row
    for i, row in parsed.items():
        lines[i] = orjson.dumps(row)


def settle_lines(data: bytes) -> bytes:
    """``data`` (whole JSON lines) with every pending summary settled (``settle_rows``)."""
    if MARKED not in data:
        return data
    lines = data.split(b"\n")
    settle_rows(lines)
    return b"\n".join(lines)
