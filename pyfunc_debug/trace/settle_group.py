"""Many pending summaries of one dtype and shape taken at once, each equal to ``summarize``.

A recorded callback's calls leave hundreds of pending summaries of one shape
per batch (``trace.pending``). ``summarize`` of each costs about 7 µs, mostly
``tolist`` (a Python number per element), the sum of those numbers and the
sort that gives min and max. Here the group is one array, one row per summary:
one ``fromhex``, min and max reduced along the rows, and the sum of each row
computed in numpy *as this Python's* ``sum`` adds the items — one element at a
time, in order, from ``0 + first``; from Python 3.12 on with its Neumaier
compensation (``sum`` of floats changed then) — so the mean is the very float
``summarize`` gives. Only the preview, six items formatted, is per row.

A row ``summarize`` might not give alike is left to it: a NaN or ±Inf or an
overflowed sum, a zero min or max (the sign of a zero that ``summarize``'s
sort picks), and 64-bit integers (their sum may not fit in 64 bits).
"""
from __future__ import annotations

import sys

import numpy as np

from .summary import _FLOAT_FORMATS, PREVIEW_ITEMS, ROW_FIELDS, ValueSummary, summarize

__all__ = ["settle_group", "GROUP"]

GROUP = 8   # pending summaries of one dtype and shape worth taking together
_COMPENSATED = sys.version_info >= (3, 12)   # sum() of floats: Neumaier from 3.12 on
_WIDE = {np.dtype(t) for t in (np.int64, np.uint64)}
_min, _max = np.minimum.reduce, np.maximum.reduce


def _row_sums(block) -> np.ndarray:
    """``sum(row.tolist())`` of each row of the 2-d real ``block``, as this Python gives it
    (bit for bit, finite or not): a column a step, from ``0 + first``."""
    cols = np.ascontiguousarray(block.T, dtype=np.float64)
    f = 0.0 + cols[0]
    with np.errstate(over="ignore", invalid="ignore"):   # Inf - Inf: no warning (a NaN)
        if not _COMPENSATED:
            for x in cols[1:]:
                f = f + x
            return f
        c = np.zeros_like(f)
        for x in cols[1:]:   # CPython's: c += (f - t) + x if |f| >= |x| else (x - t) + f
            t = f + x
            c += np.where(np.abs(f) >= np.abs(x), f - t + x, x - t + f)
            f = t
        return np.where((c != 0.0) & np.isfinite(c), f + c, f)


def settle_group(items: list) -> list:
    """``summarize`` of the array each pending summary in ``items`` holds (all of one dtype
    and shape; ``ValueError`` for bytes that are not hex)."""
    shape, name, size = items[0][0], items[0][1], items[0][2]
    dt = np.dtype(name)
    block = np.frombuffer(bytes.fromhex("".join([p[ROW_FIELDS] for p in items])), dt)
    block = block.reshape(len(items), size)
    if dt in _WIDE:
        return [summarize(row.reshape(shape)) for row in block]
    floats = dt.kind == "f"
    totals = _row_sums(block) if floats else np.add.reduce(block, axis=1, dtype=np.int64)
    los, his = _min(block, axis=1), _max(block, axis=1)
    # a row summarize might not give alike is summarised alone (the module docstring)
    alone = (~np.isfinite(totals) | (los == 0) | (his == 0)) if floats else None
    with np.errstate(invalid="ignore", over="ignore"):
        # Python's int / int and float / int are IEEE divisions of these same numbers
        means = (totals / size).tolist()
    los, his = los.astype(np.float64).tolist(), his.astype(np.float64).tolist()
    heads = block[:, :PREVIEW_ITEMS].tolist()
    more = ", …]" if size > PREVIEW_ITEMS else "]"
    if floats:
        fmt = "[" + _FLOAT_FORMATS[min(size, PREVIEW_ITEMS)] + more
        previews = [(fmt % tuple(h))[:80] for h in heads]
    else:
        previews = [("[" + ", ".join(map(str, h)) + more)[:80] for h in heads]
    summary = ValueSummary
    out = [summary(shape, name, size, lo, hi, mean, 0, 0, preview, False, None)
           for lo, hi, mean, preview in zip(los, his, means, previews)]
    if alone is not None and alone.any():
        for k in np.flatnonzero(alone).tolist():
            out[k] = summarize(block[k].reshape(shape))
    return out
