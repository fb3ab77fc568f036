"""Summaries taken later, by the trace's writer process: what a recorded callback defers.

In a program whose callbacks run on threads that share the interpreter lock
with the framework (a ``tf.data`` map, a JAX callback), every microsecond a
recorded call spends holding the lock is paid many times over in waiting
(measured: a recorded 64-element call costs about 35 µs in a loop, and about
360 µs of lock-bound time in a ``tf.data`` pipeline). So when the one
subscriber is a summary ``.jsonl`` trace (``jsonl.JsonlWriter``), a callback
keeps each small numeric array's bytes (``DEFER_LIMIT`` elements or fewer)
and, for floats, its sum — one BLAS dot, which is also the NaN/Inf check: it
is finite exactly when no element is NaN or ±Inf — in a ``PendingSummary``.
The writer hands such events to a helper process (``writer_process``), which
takes the summaries, many arrays at once, and writes the lines.

What the call itself needs stays exact and immediate: a pending summary holds
the shape, dtype and size, and NaN/Inf counts of 0, because an array holding a
NaN or Inf is summarised at once (so diagnostics and fault capture see what
they always saw). A settled summary equals ``summarize`` of the same array,
mean included (the same dot gives it).
"""
from __future__ import annotations

import numpy as np

from .. import events as ev
from .summary import _FLOAT_FORMATS, _NAMES, _SMALL_ONES, PREVIEW_ITEMS, ROW_FIELDS, \
    ValueSummary, summarize

__all__ = ["PendingSummary", "PendingOpEnd", "defer", "settle", "settled", "settle_all",
           "wire_row", "from_wire", "MARK", "DEFER_LIMIT"]

DEFER_LIMIT = 1024      # elements: bigger arrays pay passes, not fixed costs; summarised now
MARK = "\x00"           # first item of a pending summary's row on the wire (JSON "\u0000")
_KEPT = ROW_FIELDS      # a pending summary's (bytes, float sum or None)
_new = tuple.__new__
_min, _max, _add = np.minimum.reduce, np.maximum.reduce, np.add.reduce
_FAST_SUM = 1e37        # ``summarize``'s small float path: size * max|x| under this
_INT_SUM = {**{np.dtype(t): float(1 << 62) for t in (np.int8, np.int16, np.int32, np.int64)},
            **{np.dtype(t): float(1 << 63) for t in (np.uint8, np.uint16, np.uint32,
                                                      np.uint64)}}


class PendingSummary(ValueSummary):
    """A summary still to be taken (see the module docstring): shape, dtype and size are
    known, NaN/Inf counts are 0; ``value`` holds the array's bytes and float sum."""

    __slots__ = ()

    @property
    def row(self) -> list:   # a writer that did not settle it first still writes the truth
        return settle(self).row

    def short(self) -> str:
        return settle(self).short()


class PendingOpEnd(ev.OpEnd):
    """An ``OpEnd`` that may hold ``PendingSummary``s: only for a sink that settles it."""

    __slots__ = ()


def defer(a):
    """A ``PendingSummary`` of ndarray ``a``, or None when ``a`` must be summarised now
    (not a small finite int/float array of one or more dimensions)."""
    size = a.size
    if not 0 < size <= DEFER_LIMIT or not a.ndim:
        return None
    dt = a.dtype
    ones = _SMALL_ONES.get(dt)
    if ones is not None:   # float32/float64: the sum now (the NaN/Inf check), as summarize
        total = float(a.reshape(-1).dot(ones[:size]))
        if total - total != 0.0:   # NaN or ±Inf (or an overflow): exact counts, now
            return None
    elif dt in _INT_SUM:
        total = None
    else:
        return None
    return _new(PendingSummary, (a.shape, _NAMES[dt], size, None, None, None, 0, 0, "",
                                 False, (a.tobytes(), total)))


def _array(p):
    return np.frombuffer(p[_KEPT][0], np.dtype(p[1])).reshape(p[0])


def settle(s):
    """``s`` as a ``ValueSummary``: a pending one summarised, any other unchanged."""
    return summarize(_array(s)) if s.__class__ is PendingSummary else s


def settle_all(pending: list) -> list:
    """The ``ValueSummary`` of each of ``pending``: arrays of one dtype and size in one
    matrix, reduced row-wise (a few numpy calls for thousands of arrays)."""
    groups: dict = {}
    for k, p in enumerate(pending):
        groups.setdefault((p[1], p[2]), []).append(k)
    done = [None] * len(pending)
    for (name, size), members in groups.items():
        dt = np.dtype(name)
        m = np.frombuffer(b"".join([pending[k][_KEPT][0] for k in members]),
                          dt).reshape(len(members), size)
        lows, highs = _min(m, axis=1).tolist(), _max(m, axis=1).tolist()
        heads = m[:, :PREVIEW_ITEMS].tolist()
        if dt.kind == "f":
            totals = [pending[k][_KEPT][1] for k in members]
            bound, fmt = _FAST_SUM, _FLOAT_FORMATS[min(size, PREVIEW_ITEMS)]
        else:
            totals = _add(m, axis=1).tolist()   # exact: int64 (uint64) row sums
            bound, fmt = _INT_SUM[dt], None
        more = ", …]" if size > PREVIEW_ITEMS else "]"
        for k, lo, hi, total, head in zip(members, lows, highs, totals, heads):
            p = pending[k]
            lo, hi = float(lo), float(hi)
            if not size * max(hi, -lo) < bound:   # summarize's other path: exactly it
                done[k] = summarize(_array(p))
                continue
            body = fmt % tuple(head) if fmt is not None else ", ".join(map(str, head))
            done[k] = _new(ValueSummary, (p[0], name, size, lo, hi, float(total) / size, 0, 0,
                                          ("[" + body + more)[:80], False, None))
    return done


_INPUTS, _OUTPUTS = ev.OpEnd._fields.index("inputs"), ev.OpEnd._fields.index("outputs")


def settled(batch) -> None:
    """Make each ``PendingOpEnd`` of ``batch`` (a list or deque of events, changed in
    place) an ``OpEnd`` of settled summaries."""
    at = [i for i, e in enumerate(batch) if e.__class__ is PendingOpEnd]
    if not at:
        return
    pending = [s for i in at for side in (batch[i][_INPUTS], batch[i][_OUTPUTS])
               for s in side if s.__class__ is PendingSummary]
    it = iter(settle_all(pending))
    for i in at:
        e = batch[i]
        ins = tuple([next(it) if s.__class__ is PendingSummary else s for s in e[_INPUTS]])
        outs = tuple([next(it) if s.__class__ is PendingSummary else s for s in e[_OUTPUTS]])
        batch[i] = _new(ev.OpEnd, (*e[:_INPUTS], ins, outs, *e[_OUTPUTS + 1:]))


# -- on the wire: the writer process gets pending summaries inside the JSON lines --------

def wire_row(s):
    """A summary's row as the writer sends it to its process: a pending one as
    ``[MARK, shape, dtype, size, sum, bytes as hex]`` (exact, and made in C), any other
    as its ``row``."""
    if s.__class__ is PendingSummary:
        kept = s[_KEPT]
        return [MARK, s[0], s[1], s[2], kept[1], kept[0].hex()]
    return s.row


def from_wire(item) -> PendingSummary:
    """The ``PendingSummary`` a ``wire_row`` stands for (parsed JSON: lists, numbers)."""
    _, shape, name, size, total, values = item
    blob = bytes.fromhex(values)
    if len(blob) != size * np.dtype(name).itemsize or int(np.prod(shape)) != size:
        raise ValueError(f"a pending {name} summary of {size} elements came with "
                         f"{len(blob)} bytes and shape {shape}")
    return _new(PendingSummary, (tuple(shape), name, size, None, None, None, 0, 0, "", False,
                                 (blob, total)))
