"""ValueSummary: what an event says about an array — shape, dtype, stats, a preview.

Cost is bounded for big arrays: min and max are exact (numpy's min/max also
reveal any NaN/Inf, so exact counts are computed only when some are present);
the mean of an array over ``EXACT_LIMIT`` elements comes from ``SAMPLE`` evenly
strided elements and is flagged ``approx`` (a denser sample would touch every
cache line of the array, costing as much as an exact pass).

A big float32 array — the common payload, where two passes for min and max
cost as much as an op like ``x + 1`` — takes one pass instead: its row sums
(one BLAS matrix-vector product, which OpenBLAS spreads over the free cores)
are all finite exactly when no element is NaN or Inf (else, or when a sum
overflows, the exact path runs) and give the mean; min/max come from the
sample (``approx``). NaN/Inf counts stay exact everywhere.

A summary's ``row`` is its fields as a trace row (strict JSON: a NaN or Inf
min/max/mean spelled as a string). Summaries holding such a float are made as
``NonFiniteSummary``, so the row of every other summary is a plain slice taken
in C: a JSONL trace encodes thousands of them per batch.
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

__all__ = ["ValueSummary", "NonFiniteSummary", "summarize", "summary_class", "json_number",
           "sample_bytes", "EXACT_LIMIT", "ROW_FIELDS"]

EXACT_LIMIT = 1 << 16
SAMPLE = 4096
PREVIEW_ITEMS = 6


class ValueSummary(NamedTuple):
    """Plain-data description of one value; ``value`` holds a copy only at capture="full"."""

    shape: tuple
    dtype: str
    size: int
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    nan: int = 0
    inf: int = 0
    preview: str = ""
    approx: bool = False
    value: object = None

    def short(self) -> str:
        """One line for logs: ``float32[3] min=.. max=.. mean=.. nan=1``."""
        dims = ",".join(str(d) for d in self.shape)
        text = f"{self.dtype}[{dims}]"
        if self.min is not None:
            text += f" min={self.min:.4g} max={self.max:.4g} mean={self.mean:.4g}"
        if self.nan:
            text += f" nan={self.nan}"
        if self.inf:
            text += f" inf={self.inf}"
        return text


ROW_FIELDS = 10  # a summary's row: every field but ``value`` (stored apart from the event)
# ``s.row``: a C slice, no Python frame (the JSONL writer's hot path)
ValueSummary.row = property(operator.itemgetter(slice(0, ROW_FIELDS)),
                            doc="The fields as a strict-JSON trace row (``value`` left out).")


def json_number(v):
    """A float JSON cannot hold (NaN, ±Inf), as its string; other values unchanged."""
    if type(v) is float and not math.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    return v


class NonFiniteSummary(ValueSummary):
    """A summary whose min, max or mean is NaN or ±Inf (an all-NaN array, a mean that
    overflowed); its ``row`` spells them as strings."""

    __slots__ = ()

    @property
    def row(self) -> list:
        return [json_number(v) for v in self[:ROW_FIELDS]]


def summary_class(lo, hi, mean):
    """``ValueSummary``, or ``NonFiniteSummary`` when a float among these is not finite."""
    for v in (lo, hi, mean):
        if type(v) is float and v - v != 0.0:
            return NonFiniteSummary
    return ValueSummary


def _classified(make):
    """``make`` (a constructor of ``ValueSummary``) returning a ``NonFiniteSummary`` when
    the summary holds a NaN or Inf: so ``ValueSummary(...)`` and ``_replace`` keep ``row``
    strict. (``summarize`` picks the class itself, building tuples directly.)"""
    def checked(cls, *args, **kwargs):
        s = make(cls, *args, **kwargs)
        if cls is ValueSummary and summary_class(s[3], s[4], s[5]) is not ValueSummary:
            return tuple.__new__(NonFiniteSummary, s)
        return s
    return checked


ValueSummary.__new__ = _classified(ValueSummary.__new__)
ValueSummary._make = classmethod(_classified(ValueSummary._make.__func__))


def _preview(flat) -> str:
    if flat.ndim == 0:
        return str(flat.item())[:80]
    items = flat[:PREVIEW_ITEMS].tolist()
    if flat.dtype.kind in "OSU":
        body = ", ".join(repr(x)[:20] for x in items)
    elif flat.dtype.kind == "f":
        body = ", ".join(["%.4g" % x for x in items])
    else:
        body = ", ".join(str(x) for x in items)
    more = ", …" if flat.size > PREVIEW_ITEMS else ""
    return f"[{body}{more}]"[:80]


# numpy scalar type -> dtype name (``value.dtype.name`` costs over a microsecond)
_SCALAR_NAMES = {t: np.dtype(t).name for t in (
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64)}


def _scalar_summary(value, name, capture_bytes):
    """Fast path for numpy scalars, the common case in op chains."""
    v = float(value)
    kept = value if capture_bytes else None
    if v != v:
        return _new(ValueSummary, ((), name, 1, None, None, None, 1, 0, "nan", False, kept))
    if v == _INF or v == -_INF:
        return _new(ValueSummary, ((), name, 1, None, None, None, 0, 1, str(v), False, kept))
    # "%.6g" % v: the f-string's format spec would be parsed on every call
    return _new(ValueSummary, ((), name, 1, v, v, v, 0, 0, "%.6g" % v, False, kept))


_new = tuple.__new__  # all fields given: skip NamedTuple's Python-level __new__


_INF = float("inf")
_F32 = np.dtype(np.float32)
_add, _min, _max = np.add.reduce, np.minimum.reduce, np.maximum.reduce
_matmul = np.matmul
_COLS = 4096                          # row length of the NaN/Inf check's matrix view
_ONES = np.ones(_COLS, np.float32)


def _total(flat) -> float:
    """The sum of the float32 vector ``flat``: finite exactly when no element is NaN or
    ±Inf and no partial sum overflowed (then the caller counts exactly).

    A NaN or Inf makes its row's sum NaN or Inf, and any of those makes the total
    so. One threaded BLAS ``gemv`` over the array viewed as rows of ``_COLS``: on
    this 2-core machine about half the time of a single-threaded ``dot``. The
    row sums are float32, added up in float64.
    """
    rows = flat.size // _COLS
    head = flat[:rows * _COLS].reshape(rows, _COLS)
    tail = flat[rows * _COLS:]
    # inf - inf, an overflow: what this pass looks for, not a warning for the user
    with np.errstate(invalid="ignore", over="ignore"):
        return (float(_add(_matmul(head, _ONES), dtype=np.float64))
                + float(_add(tail, dtype=np.float64)))


def _dtype_name(arr) -> str:
    kind = arr.dtype.kind
    if kind in "OSU":
        return "string"
    return "bool" if kind == "b" else arr.dtype.name


def sample_bytes(arr) -> bytes:
    """The bytes of ``arr``'s evenly strided sample (the elements a big summary's min/max
    come from): compared with one ``memcmp``, bitwise, so a NaN equals itself."""
    flat = arr.reshape(-1)
    return flat[::flat.size // SAMPLE].tobytes()


def _big_float32(arr, flat, kept, sample_out):
    """A big float32 array's summary from one pass, or None when it holds a NaN or Inf.

    ``_total`` reads the array once and gives the mean; if it finds a NaN or
    Inf (or a sum overflowed) the caller's exact path counts them. min/max
    come from an evenly strided sample (hence ``approx``), reduced with the
    ufuncs directly (the ``ndarray`` methods add Python-level wrappers that
    cost more than reducing 4,096 elements).
    """
    total = _total(flat)
    if not total - total == 0.0:   # NaN for a NaN or either Inf
        return None
    mean = total / flat.size
    sample = flat[::flat.size // SAMPLE].copy()  # gathered once, reduced in cache
    if sample_out is not None:
        sample_out.append(sample.tobytes())  # == sample_bytes(arr)
    return _new(ValueSummary, (arr.shape, "float32", arr.size, float(_min(sample)),
                               float(_max(sample)), mean, 0, 0, _preview(flat), True, kept))


def summarize(value, capture_bytes: int = 0, sample_out: list | None = None) -> ValueSummary:
    """Summarise ``value``; with ``capture_bytes`` > 0 keep a copy if it fits.

    ``sample_out`` (a list) receives ``sample_bytes(value)`` when the summary was
    taken from that sample (a big float32 array), sparing an in-place-write check
    that starts right away a second gather.
    """
    name = _SCALAR_NAMES.get(value.__class__)
    if name is not None:   # a numpy scalar, the common case in op chains: inline
        v = float(value)
        if v - v == 0.0:   # finite (NaN and ±Inf give NaN)
            return _new(ValueSummary, ((), name, 1, v, v, v, 0, 0, "%.6g" % v, False,
                                       value if capture_bytes else None))
        return _scalar_summary(value, name, capture_bytes)
    if value is None:
        return ValueSummary((), "none", 0)
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    flat = arr.reshape(-1)
    kind = arr.dtype.kind
    kept = arr.copy() if capture_bytes and arr.nbytes <= capture_bytes else None
    if arr.size == 0:
        return ValueSummary(arr.shape, _dtype_name(arr), 0, preview="[]", value=kept)
    if kind in "OSU":
        if arr.ndim == 0:
            item = arr[()]
            preview = repr(bytes(item) if isinstance(item, bytes) else item)[:80]
        else:
            preview = _preview(flat)
        return ValueSummary(arr.shape, "string", arr.size, preview=preview, value=kept)
    if kind == "b":
        frac = float(np.count_nonzero(flat)) / flat.size
        return ValueSummary(arr.shape, "bool", arr.size, float(flat.min()), float(flat.max()),
                            frac, preview=_preview(arr if arr.ndim == 0 else flat), value=kept)
    if arr.dtype == _F32 and flat.size > EXACT_LIMIT:
        found = _big_float32(arr, flat, kept, sample_out)
        if found is not None:
            return found
    lo, hi = flat.min(), flat.max()
    nan = inf = 0
    if kind in "fc" and not (np.isfinite(lo) and np.isfinite(hi)):
        nan = int(np.count_nonzero(np.isnan(flat)))
        inf = int(np.count_nonzero(np.isinf(flat)))
        finite = flat[np.isfinite(flat)]
        lo, hi = (finite.min(), finite.max()) if finite.size else (np.nan, np.nan)
        mean = float(finite.mean()) if finite.size else float("nan")
        approx = False
    elif flat.size > EXACT_LIMIT:
        step = flat.size // SAMPLE
        mean, approx = float(flat[::step].copy().mean(dtype=np.float64)), True
    else:
        mean, approx = float(flat.mean(dtype=np.float64)), False
    return ValueSummary(arr.shape, _dtype_name(arr), arr.size, float(lo), float(hi), mean,
                        nan, inf, _preview(arr if arr.ndim == 0 else flat), approx, kept)
