"""Summaries taken later, by the trace's writer process: what a recorded callback defers.

In a program whose callbacks run on threads that share the interpreter lock
with the framework (a ``tf.data`` map, a JAX callback), every microsecond a
recorded call spends holding the lock is paid many times over in waiting
(measured: a recorded 64-element call costs about 35 µs in a loop, and about
360 µs of lock-bound time in a ``tf.data`` pipeline). So when the one
subscriber is a summary ``.jsonl`` trace (``jsonl.JsonlWriter``), a callback
keeps each small numeric array's bytes (``DEFER_LIMIT`` elements or fewer)
and, for a float output, its sum — one BLAS dot, which is also the NaN/Inf
check: it is finite exactly when no element is NaN or ±Inf.
The writer hands such events to a helper process (``writer_process``), which
takes the summaries, many arrays at once, and writes the lines.

A pending summary is a plain tuple laid out as a ``ValueSummary`` (shape,
dtype, size, then no stats, NaN/Inf counts 0, ``MARK`` as its preview and
``(bytes as hex, sum or None)`` as its value): orjson writes it as it is, the
collector stops tracking it, and diagnostics read it by index as they read a
summary. What the call needs stays exact and immediate: an output holding a
NaN or Inf is summarised at once (so diagnostics and fault capture see what
they always saw), and an input's counts, which only matter when an output has
NaN or Inf, are taken then (``settle``). A settled summary equals
``summarize`` of the same array, mean included (the same dot gives it).
"""
from __future__ import annotations

import math

import numpy as np

from .. import events as ev
from .summary import _FLOAT_FORMATS, _SMALL_ONES, PREVIEW_ITEMS, ROW_FIELDS, ValueSummary, \
    summarize

__all__ = ["PendingOpEnd", "pending", "is_pending", "settle", "settled", "settle_all",
           "from_row", "MARK", "DEFER_LIMIT"]

DEFER_LIMIT = 1024      # elements: bigger arrays pay passes, not fixed costs; summarised now
MARK = "\x00"           # a pending summary's preview (JSON "\u0000": no summary's preview)
_PREVIEW, _KEPT = 8, ROW_FIELDS   # where a pending summary holds MARK and (hex, sum)
_new = tuple.__new__
_min, _max, _add = np.minimum.reduce, np.maximum.reduce, np.add.reduce
_FAST_SUM = 1e37        # ``summarize``'s small float path: size * max|x| under this
_INT_SUM = {**{np.dtype(t): float(1 << 62) for t in (np.int8, np.int16, np.int32, np.int64)},
            **{np.dtype(t): float(1 << 63) for t in (np.uint8, np.uint16, np.uint32,
                                                      np.uint64)}}


class PendingOpEnd(ev.OpEnd):
    """An ``OpEnd`` that may hold pending summaries: only for a sink that settles it."""

    __slots__ = ()


# dtype -> (its name, the ones its BLAS dot sums with, for floats): the dtypes deferred
_KINDS = {np.dtype(t): (np.dtype(t).name, _SMALL_ONES.get(np.dtype(t)))
          for t in (np.float32, np.float64, *_INT_SUM)}


def pending(a, blob: bytes, checked: bool):
    """A pending summary of ndarray ``a`` (``blob``: its bytes), or None when ``a`` must
    be summarised now: not a small int/float array of one or more dimensions, or
    (``checked``: an output) a float array holding a NaN or Inf."""
    size = a.size
    if not 0 < size <= DEFER_LIMIT or not a.ndim:
        return None
    kind = _KINDS.get(a.dtype)
    if kind is None:
        return None
    total = None
    if checked and kind[1] is not None:   # the sum now (the NaN/Inf check), as summarize
        total = float(a.ravel().dot(kind[1][:size]))
        if total - total != 0.0:   # NaN or ±Inf (or an overflow): exact counts, now
            return None
    return (a.shape, kind[0], size, None, None, None, 0, 0, MARK, False, (blob.hex(), total))


def is_pending(s) -> bool:
    return s.__class__ is tuple


def _array(p):
    return np.frombuffer(bytes.fromhex(p[_KEPT][0]), np.dtype(p[1])).reshape(p[0])


def settle(s):
    """``s`` as a ``ValueSummary``: a pending one summarised, any other unchanged."""
    return summarize(_array(s)) if s.__class__ is tuple else s


def settle_all(pending: list) -> list:
    """The ``ValueSummary`` of each of ``pending``: arrays of one dtype and size in one
    matrix, reduced row-wise (a few numpy calls for thousands of arrays). An array
    holding a NaN or Inf (an input, unchecked) is summarised alone, exactly."""
    groups: dict = {}
    for k, p in enumerate(pending):
        groups.setdefault((p[1], p[2]), []).append(k)
    done = [None] * len(pending)
    for (name, size), members in groups.items():
        dt = np.dtype(name)
        m = np.frombuffer(bytes.fromhex("".join([pending[k][_KEPT][0] for k in members])),
                          dt).reshape(len(members), size)
        with np.errstate(invalid="ignore"):
            lows, highs = _min(m, axis=1).tolist(), _max(m, axis=1).tolist()
        heads = m[:, :PREVIEW_ITEMS].tolist()
        ones = _SMALL_ONES.get(dt)
        if ones is not None:   # the dot summarize takes, row by row where not taken yet
            totals = [pending[k][_KEPT][1] for k in members]
            totals = [float(m[i].dot(ones[:size])) if t is None else t
                      for i, t in enumerate(totals)]
            bound, fmt = _FAST_SUM, _FLOAT_FORMATS[min(size, PREVIEW_ITEMS)]
        else:
            totals = _add(m, axis=1).tolist()   # exact: int64 (uint64) row sums
            bound, fmt = _INT_SUM[dt], None
        more = ", …]" if size > PREVIEW_ITEMS else "]"
        for k, lo, hi, total, head in zip(members, lows, highs, totals, heads):
            p = pending[k]
            lo, hi = float(lo), float(hi)
            # NaN/Inf, or summarize's other path for the mean: exactly summarize
            if not size * max(hi, -lo) < bound or total - total != 0.0:
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
    todo = [s for i in at for side in (batch[i][_INPUTS], batch[i][_OUTPUTS])
            for s in side if s.__class__ is tuple]
    it = iter(settle_all(todo))
    for i in at:
        e = batch[i]
        ins = tuple([next(it) if s.__class__ is tuple else s for s in e[_INPUTS]])
        outs = tuple([next(it) if s.__class__ is tuple else s for s in e[_OUTPUTS]])
        batch[i] = _new(ev.OpEnd, (*e[:_INPUTS], ins, outs, *e[_OUTPUTS + 1:]))


def from_row(row) -> tuple | None:
    """The pending summary a row read back from JSON stands for, or None for a summary's
    row (the writer process finds them by their ``MARK``)."""
    if row[_PREVIEW] != MARK or len(row) != _KEPT + 1:
        return None
    shape, name, size = row[0], row[1], row[2]
    hexed, total = row[_KEPT]
    dt = np.dtype(name)
    if len(hexed) != 2 * size * dt.itemsize or math.prod(shape) != size:
        raise ValueError(f"a pending {name} summary of {size} elements came with "
                         f"{len(hexed) // 2} bytes and shape {shape}")
    return (tuple(shape), name, size, None, None, None, 0, 0, MARK, False, (hexed, total))
