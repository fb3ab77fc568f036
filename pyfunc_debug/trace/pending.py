"""Summaries taken later, by the trace's writer process: what a recorded callback defers.

In a program whose callbacks run on threads that share the interpreter lock
with the framework (a ``tf.data`` map, a JAX callback), every microsecond a
recorded call holds the lock is paid several times over in waiting (measured
in a ``tf.data`` pipeline: a call that takes 24 µs of CPU in a loop spent
about 110 µs more in the wrapper than an unrecorded one). So when the one
subscriber is a summary ``.jsonl`` trace (``jsonl.JsonlWriter``), a callback
keeps each small numeric array's bytes (``DEFER_LIMIT`` elements or fewer);
for a float output it also sums the items, which is its NaN/Inf check (the
sum is finite exactly when no element is NaN or ±Inf). The writer hands such
events to a helper process (``writer_process``), which takes the summaries on
another core and writes the lines.

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
from .summary import ROW_FIELDS, summarize

__all__ = ["PendingOpEnd", "pending", "settle", "settled", "settle_all", "from_row", "MARK",
           "DEFER_LIMIT"]

DEFER_LIMIT = 1024      # elements: bigger arrays pay passes, not fixed costs; summarised now
MARK = "\x00"           # a pending summary's preview (JSON "\u0000": no summary's preview)
_PREVIEW, _KEPT = 8, ROW_FIELDS   # where a pending summary holds MARK and its bytes as hex
# dtype -> (its name, whether it is a float): the dtypes deferred
_KINDS = {np.dtype(t): (np.dtype(t).name, np.dtype(t).kind == "f")
          for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                    np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}


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


def _array(p):
    return np.frombuffer(bytes.fromhex(p[_KEPT]), np.dtype(p[1])).reshape(p[0])


def settle(s):
    """``s`` as a ``ValueSummary``: a pending one summarised, any other unchanged."""
    return summarize(_array(s)) if s.__class__ is tuple else s


def settle_all(pending: list) -> list:
    """The ``ValueSummary`` of each of ``pending``."""
    return [summarize(_array(p)) for p in pending]


_INPUTS, _OUTPUTS = ev.OpEnd._fields.index("inputs"), ev.OpEnd._fields.index("outputs")


def settled(batch) -> None:
    """Make each ``PendingOpEnd`` of ``batch`` (a list or deque of events, changed in
    place) an ``OpEnd`` of settled summaries."""
    for i, e in enumerate(batch):
        if e.__class__ is PendingOpEnd:
            batch[i] = tuple.__new__(ev.OpEnd, (*e[:_INPUTS], tuple(map(settle, e[_INPUTS])),
                                                tuple(map(settle, e[_OUTPUTS])),
                                                *e[_OUTPUTS + 1:]))


def from_row(row) -> tuple | None:
    """The pending summary a row read back from JSON stands for, or None for a summary's
    row (the writer process finds them by their ``MARK``)."""
    if row[_PREVIEW] != MARK or len(row) != _KEPT + 1:
        return None
    shape, name, size, hexed = row[0], row[1], row[2], row[_KEPT]
    dt = np.dtype(name)
    if len(hexed) != 2 * size * dt.itemsize or math.prod(shape) != size:
        raise ValueError(f"a pending {name} summary of {size} elements came with "
                         f"{len(hexed) // 2} bytes and shape {shape}")
    return (tuple(shape), name, size, None, None, None, 0, 0, MARK, False, hexed)
