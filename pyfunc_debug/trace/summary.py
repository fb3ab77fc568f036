"""ValueSummary: what an event says about an array — shape, dtype, stats, a preview.

Cost is bounded for big arrays: min and max are exact (numpy's min/max also
reveal any NaN/Inf, so exact counts are computed only when some are present);
the mean of an array over ``EXACT_LIMIT`` elements comes from ``SAMPLE`` evenly
strided elements and is flagged ``approx`` (a denser sample would touch every
cache line of the array, costing as much as an exact pass).

A big float32 array — the common payload, where two passes for min and max
cost as much as an op like ``x + 1`` — takes one pass instead: its sum (one
``np.einsum``) is finite exactly when no element is NaN or Inf (else, or
when the sum overflows, the exact path runs) and gives the mean; min/max come
from the sample (``approx``). NaN/Inf counts stay exact everywhere.

Small arrays (up to ``_SMALL`` elements, what callbacks mostly get) are
summarised from their items as Python numbers (``tolist``, ``sum``, and min
and max from sorting them): numpy's ``argmin``, ``argmax`` and BLAS ``dot``
release the interpreter lock even on 64 elements (and its reductions do above
about 500), and in a program whose threads share the lock — every TensorFlow
or JAX callback runs on one — each release lets another thread in for up to a
switch interval: measured, 50–150 µs a release on 64 elements beside one busy
thread. Sums of small float arrays are float64 sums of their items.

Complex values: min, max and mean are those of the magnitudes ``|z|``; an
element counts as NaN when either part is NaN, else as Inf when either part is
±Inf. No summary emits a numpy warning (a program may turn them into errors).

A summary's ``row`` is its fields as a trace row (strict JSON: a NaN or Inf
min/max/mean spelled as a string). A summary holds such a float as ``NonFinite``
(a float subclass; made so however the summary is made), so every summary is
encoded as it is, in C: a JSONL trace encodes thousands of them per batch, and
hands only a ``NonFinite`` back to Python.
"""
from __future__ import annotations

import math
import operator
from typing import ClassVar

import msgspec
import numpy as np

__all__ = ["ValueSummary", "NonFinite", "non_finite", "jsonable", "summarize", "json_number",
           "row_fields", "sample_bytes", "EXACT_LIMIT", "ROW_FIELDS"]

EXACT_LIMIT = 1 << 16
SAMPLE = 4096
PREVIEW_ITEMS = 6


class ValueSummary(msgspec.Struct, frozen=True, gc=False, array_like=True):
    """Plain-data description of one value; ``value`` holds a copy only at capture="full".

    A msgspec struct the garbage collector never tracks (``gc=False``: it holds
    plain data, or a copied array, and is never part of a cycle): a trace keeps
    one per op output, and a tracked one was walked by every collection while
    the trace lived (measured: a third of an in-memory trace's cost an op).
    It reads as the named tuple it was: ``s.min``, ``s[3]``, ``s[:3]``,
    iteration, ``_fields``, ``_replace``, ``_asdict`` (not ``len``: a summary is
    always true, at no cost); it compares equal to another summary of the same
    fields (not to a plain tuple).
    """

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

    _fields: ClassVar[tuple] = ()

    def __post_init__(self):
        # a NaN or Inf among min/max/mean is held as ``NonFinite`` (see the module
        # docstring); the common case, all finite, is one sum
        lo = self.min
        if lo.__class__ is float:
            try:
                t = lo + self.max + self.mean
                if t - t == 0.0:
                    return
            except (TypeError, OverflowError):   # made by hand: None or a huge int among them
                pass
        elif lo is None and self.max is None and self.mean is None:
            return
        _mark_non_finite(self)

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

    @property
    def row(self) -> list:
        """The fields as a strict-JSON trace row (``value`` left out; a NaN or Inf
        spelled as a string)."""
        return [json_number(v) for v in _ROW(self)]

    # -- the named tuple's ways, kept: code that read summaries so still does --------
    def __getitem__(self, i):
        return _ALL(self)[i]

    def __iter__(self):
        return iter(_ALL(self))

    def _replace(self, **changes) -> "ValueSummary":
        return _replace(self, **changes)

    def _asdict(self) -> dict:
        return dict(zip(self._fields, _ALL(self)))

    @classmethod
    def _make(cls, fields) -> "ValueSummary":
        return cls(*fields)


ValueSummary._fields = ValueSummary.__struct_fields__
ROW_FIELDS = 10  # a summary's row: every field but ``value`` (stored apart from the event)
_ALL = operator.attrgetter(*ValueSummary._fields)           # every field, as a tuple (C)
_ROW = operator.attrgetter(*ValueSummary._fields[:ROW_FIELDS])
row_fields = _ROW   # ``row_fields(s)``: a summary's row fields as they are, a tuple (C)
_replace = msgspec.structs.replace
_force = msgspec.structs.force_setattr
# ``jsonable(o)`` (C): what an encoder that knows neither a summary nor a ``NonFinite``
# (orjson, as its ``default``) writes for one: a summary's row fields, a NaN's string
jsonable = operator.attrgetter("_jsonable")
ValueSummary._jsonable = property(_ROW)


class NonFinite(float):
    """A summary's NaN or ±Inf min, max or mean: a float in every way but its type, which
    tells an encoder of whole batches (``lines.encode_batch``: msgspec hands it back to
    us, as any type it does not know exactly) to spell it as a string (``json_number``)."""

    __slots__ = ()

    @property
    def _jsonable(self) -> str:
        return json_number(self)


_FLOATS = (float, NonFinite)


def json_number(v):
    """A float JSON cannot hold (NaN, ±Inf), as its string; other values unchanged."""
    if v.__class__ in _FLOATS and not math.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    return v


def _mark_non_finite(s) -> None:
    """Hold ``s``'s NaN and ±Inf among min, max and mean as ``NonFinite``."""
    for name in ("min", "max", "mean"):
        v = getattr(s, name)
        if v.__class__ is float and v - v != 0.0:
            _force(s, name, NonFinite(v))


def non_finite(s) -> bool:
    """Whether summary ``s`` holds a NaN or ±Inf among its min, max and mean."""
    return NonFinite in (s.min.__class__, s.max.__class__, s.mean.__class__)


# "%.4g, %.4g, ..." for k items: one format operation instead of one per item
_FLOAT_FORMATS = [", ".join(["%.4g"] * k) for k in range(PREVIEW_ITEMS + 1)]


def _preview(flat, kind: str) -> str:
    """The first few values as text; a complex one as ``1.5+2j``."""
    if flat.ndim == 0:
        item = flat.item()
        return (_complex_text(item) if kind == "c" else str(item))[:80]
    items = flat[:PREVIEW_ITEMS].tolist()
    if kind == "f":
        body = _FLOAT_FORMATS[len(items)] % tuple(items)
    elif kind in "OSU":
        body = ", ".join(repr(x)[:20] for x in items)
    elif kind == "c":
        body = ", ".join(map(_complex_text, items))
    else:
        body = ", ".join(map(str, items))
    more = ", …" if flat.size > PREVIEW_ITEMS else ""
    return f"[{body}{more}]"[:80]


def _complex_text(z: complex) -> str:
    return "%.4g%+.4gj" % (z.real, z.imag)


# numpy scalar type -> dtype name (``value.dtype.name`` costs over a microsecond)
_SCALAR_NAMES = {t: np.dtype(t).name for t in (
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64)}


def _scalar_summary(value, name, capture_bytes):
    """Fast path for numpy scalars, the common case in op chains."""
    v = float(value)
    kept = value if capture_bytes else None
    if v != v:
        return ValueSummary((), name, 1, None, None, None, 1, 0, "nan", False, kept)
    if v == _INF or v == -_INF:
        return ValueSummary((), name, 1, None, None, None, 0, 1, str(v), False, kept)
    # "%.6g" % v: the f-string's format spec would be parsed on every call
    return ValueSummary((), name, 1, v, v, v, 0, 0, "%.6g" % v, False, kept)




_INF = float("inf")
_F32 = np.dtype(np.float32)
_add, _min, _max = np.add.reduce, np.minimum.reduce, np.maximum.reduce
_einsum = np.einsum


def _total(flat) -> float:
    """The sum of the float32 vector ``flat``: finite exactly when no element is NaN or
    ±Inf and no partial sum overflowed (then the caller counts exactly).

    One ``np.einsum`` pass: its SIMD loop with many partial sums (relative error
    1e-7 to 5e-6 on a million elements, against a float64 sum) reads 4 MB in a third of the time of
    ``np.add.reduce``'s pairwise loop, and runs in this thread (a threaded BLAS
    ``gemv`` was as fast on an idle 2-core machine but up to twice slower on a busy
    one, where its helper thread waits for a core). A NaN or Inf makes the sum NaN
    or Inf.
    """
    # inf - inf, an overflow: what this pass looks for, not a warning for the user
    with np.errstate(invalid="ignore", over="ignore"):
        return float(_einsum("i->", flat))


def _dtype_name(arr) -> str:
    kind = arr.dtype.kind
    if kind in "OSU":
        return "string"
    return "bool" if kind == "b" else arr.dtype.name


# dtype -> its name, for the common numeric ones (``dtype.name`` runs Python code)
_NAMES = {np.dtype(t): np.dtype(t).name for t in _SCALAR_NAMES}


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
    return ValueSummary(arr.shape, "float32", arr.size, float(_min(sample)),
                        float(_max(sample)), mean, 0, 0, _preview(flat, "f"), True, kept)


def summarize(value, capture_bytes: int = 0, sample_out: list | None = None) -> ValueSummary:
    """Summarise ``value``; with ``capture_bytes`` > 0 keep a copy if it fits.

    ``sample_out`` (a list) receives ``sample_bytes(value)`` when the summary was
    taken from that sample (a big float32 array), sparing an in-place-write check
    that starts right away a second gather.

    Written for the small arrays callbacks get (every call of every op pays it):
    ufuncs reduce directly (the ``ndarray`` methods and ``dtype.name`` run Python
    code costing more than reducing 64 elements); min and max come first, since
    a NaN or Inf shows in them, and only then does the exact NaN/Inf count run.
    No warning of ours reaches the user's program (it may turn them into errors).
    """
    name = _SCALAR_NAMES.get(value.__class__)
    if name is not None:   # a numpy scalar, the common case in op chains: inline
        v = float(value)
        if v - v == 0.0:   # finite (NaN and ±Inf give NaN)
            return ValueSummary((), name, 1, v, v, v, 0, 0, "%.6g" % v, False,
                                value if capture_bytes else None)
        return _scalar_summary(value, name, capture_bytes)
    if value is None:
        return ValueSummary((), "none", 0)
    arr = value if value.__class__ is _ndarray else np.asarray(value)
    dt = arr.dtype
    size = arr.size
    kept = arr.copy() if capture_bytes and arr.nbytes <= capture_bytes else None
    kind = dt.kind
    if size and kind in "fiu":
        flat = arr.reshape(-1)
        if dt is _F32 and size > EXACT_LIMIT:
            found = _big_float32(arr, flat, kept, sample_out)
            if found is not None:
                return found
        if size <= _SMALL:   # the callbacks' common case, inline and lock-free (above)
            items = flat.tolist()
            total = sum(items)
            if total - total != 0.0:   # a NaN or ±Inf (or a float64 sum's overflow)
                return _non_finite(arr, flat, kept)
            head = items[:PREVIEW_ITEMS]
            if arr.ndim == 0:
                preview = str(head[0])[:80]
            elif kind == "f":   # one format operation for the shown items
                preview = ("[" + _FLOAT_FORMATS[len(head)] % tuple(head) +
                           (", …]" if size > PREVIEW_ITEMS else "]"))[:80]
            else:
                preview = ("[" + ", ".join(map(str, head)) +
                           (", …]" if size > PREVIEW_ITEMS else "]"))[:80]
            if size <= _SORTED:   # sorting compares floats without rich comparison
                items.sort()
                lo, hi = items[0], items[-1]
            else:
                lo, hi = min(items), max(items)
            return ValueSummary(arr.shape, _NAMES.get(dt) or dt.name, size,
                                float(lo), float(hi), total / size, 0, 0, preview, False, kept)
        else:
            lo, hi = float(_min(flat)), float(_max(flat))
        if lo - lo == 0.0 and hi - hi == 0.0:   # no NaN/Inf
            name = _NAMES.get(dt) or _dtype_name(arr)
            preview = _preview(arr if arr.ndim == 0 else flat, kind)
            if size > EXACT_LIMIT:   # the mean of the strided sample, gathered in cache
                sample = flat[::size // SAMPLE].copy()
                mean = _sum(sample, lo, hi) / sample.size
                approx = True
            else:
                mean = _sum(flat, lo, hi) / size
                approx = False
            # (a mean that overflowed is held as NonFinite)
            return ValueSummary(arr.shape, name, size, lo, hi, mean, 0, 0, preview, approx, kept)
        return _non_finite(arr, flat, kept)
    if size == 0:
        return ValueSummary(arr.shape, _dtype_name(arr), 0, preview="[]", value=kept)
    flat = arr.reshape(-1)
    if kind in "OSU":
        if arr.ndim == 0:
            item = arr[()]
            preview = repr(bytes(item) if isinstance(item, bytes) else item)[:80]
        else:
            preview = _preview(flat, kind)
        return ValueSummary(arr.shape, "string", size, preview=preview, value=kept)
    if kind == "b":
        frac = float(np.count_nonzero(flat)) / size
        return ValueSummary(arr.shape, "bool", size, float(_min(flat)), float(_max(flat)),
                            frac, preview=_preview(arr if arr.ndim == 0 else flat, kind),
                            value=kept)
    if kind == "c":
        return _complex(arr, flat, kept)
    if kind == "V" and dt.names is None:   # ml_dtypes' bfloat16, float8_*, int4: via float32
        try:
            wide = arr.astype(_F32)
        except (TypeError, ValueError):
            wide = None
        if wide is not None:
            s = summarize(wide)
            return _replace(s, shape=arr.shape, dtype=dt.name, size=size, value=kept)
    # anything else numpy holds (datetime, records, ...): its min/max as text would mislead
    return ValueSummary(arr.shape, _dtype_name(arr), size,
                        preview=_preview(arr if arr.ndim == 0 else flat, "O"), value=kept)


_F64 = np.dtype(np.float64)
_ndarray = np.ndarray


def _sum(flat, lo: float, hi: float) -> float:
    """The sum of real ``flat`` (no NaN/Inf), whose values lie in [lo, hi], as a float.

    A small one (``_SMALL`` elements or fewer): the sum of its items, lock-free
    (see the module docstring). A bigger one: in the array's own dtype when no
    partial sum can overflow (``size * max|x|`` under the dtype's bound; numpy sums
    floats pairwise, ints exactly), which costs half of a float64 sum (a cast runs
    buffered); else in float64 — an overflow there (float64 values near the top of
    the range) gives ±Inf, no warning.
    """
    size = flat.size
    if size <= _SMALL:   # the items' sum, as for a small array's summary (lock-free)
        return float(sum(flat.tolist()))
    bound = _NATIVE_SUM.get(flat.dtype)
    if bound is not None and size * max(hi, -lo) < bound:
        return float(_add(flat))
    with np.errstate(over="ignore", invalid="ignore"):
        return float(_add(flat, dtype=_F64))


_SMALL = 1024   # arrays up to this size take the small-array path: fixed costs dominate
# up to this size the items' min and max come from sorting them: ``list.sort`` compares
# floats (and small ints) directly, ``min``/``max`` by rich comparison (64 float32:
# 2.8 µs for sum and sort, 4.1 µs for sum, min and max; sorting loses above ~600)
_SORTED = 512
# dtype -> the bound under which its own sum cannot overflow (numpy sums small ints as int64)
_NATIVE_SUM = {np.dtype(np.float32): 1e37, np.dtype(np.float64): 1e306}
_NATIVE_SUM.update({np.dtype(t): float(1 << 62) for t in (np.int8, np.int16, np.int32,
                                                            np.int64)})
_NATIVE_SUM.update({np.dtype(t): float(1 << 63) for t in (np.uint8, np.uint16, np.uint32,
                                                            np.uint64)})


def _non_finite(arr, flat, kept):
    """A real array holding NaN or ±Inf: exact counts; min/max/mean of the finite rest."""
    nan = int(np.count_nonzero(np.isnan(flat)))
    inf = int(np.count_nonzero(np.isinf(flat)))
    finite = flat[np.isfinite(flat)]
    return _of_finite(arr, flat, finite, nan, inf, kept, arr.dtype.kind)


def _of_finite(arr, flat, finite, nan, inf, kept, kind):
    """The summary from ``finite`` (the real values min/max/mean describe), exact."""
    if finite.size:
        lo, hi = float(_min(finite)), float(_max(finite))
        mean = _sum(finite, lo, hi) / finite.size
    else:
        lo = hi = mean = float("nan")
    return ValueSummary(arr.shape, _dtype_name(arr), arr.size, lo, hi, mean, nan, inf,
                        _preview(arr if arr.ndim == 0 else flat, kind), False, kept)


def _complex(arr, flat, kept):
    """A complex array: min, max and mean are those of the magnitudes ``|z|`` (exact, over
    the finite elements); an element counts as NaN when either part is NaN, else as Inf
    when either part is ±Inf (each element counted once)."""
    finite = np.isfinite(flat)
    count = int(np.count_nonzero(finite))
    nan = inf = 0
    if count != flat.size:
        nan = int(np.count_nonzero(np.isnan(flat)))
        inf = flat.size - count - nan
    with np.errstate(over="ignore", invalid="ignore"):   # |z| of a huge z: Inf, no warning
        mags = np.abs(flat if count == flat.size else flat[finite])
    return _of_finite(arr, flat, mags, nan, inf, kept, "c")
