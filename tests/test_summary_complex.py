"""Complex values and warnings (issue 24): summaries describe complex data by the
magnitudes ``|z|``, count NaN/Inf exactly (NaN if either part is NaN, else Inf if either
part is ±Inf), show complex numbers in the preview, and never emit a numpy warning —
a program running with warnings as errors (JAX's tests do) must not see one of ours."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pyfunc_debug.trace.summary import EXACT_LIMIT, ValueSummary, non_finite, summarize

COMPLEX = [np.complex64, np.complex128]


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("dtype", COMPLEX)
def test_min_max_mean_are_those_of_the_magnitudes(dtype):
    z = np.array([3 + 4j, complex(0, -1), 0.5 + 0j, -6 - 8j], dtype)
    s = summarize(z)
    mags = np.abs(z).astype(np.float64)
    assert s.dtype == np.dtype(dtype).name and s.size == 4 and (s.nan, s.inf) == (0, 0)
    assert s.min == pytest.approx(0.5) and s.max == pytest.approx(10.0)
    assert s.mean == pytest.approx(mags.mean(), rel=1e-6)
    assert s.preview == "[3+4j, 0-1j, 0.5+0j, -6-8j]"
    assert type(s) is ValueSummary and s.approx is False


@pytest.mark.parametrize("dtype", COMPLEX)
def test_nan_and_inf_are_counted_once_each_element(dtype):
    nan, inf = np.nan, np.inf
    z = np.array([1 + 1j, complex(nan, 0), complex(0, nan), complex(inf, 0),
                  complex(0, -inf), complex(inf, nan), 2 + 0j], dtype)
    s = summarize(z)
    assert (s.nan, s.inf) == (3, 2)     # (inf, nan) is a NaN, counted once
    assert (s.min, s.max) == (pytest.approx(np.sqrt(2)), pytest.approx(2.0))
    assert "nan" in s.preview and "inf" in s.preview


@pytest.mark.parametrize("dtype", COMPLEX)
def test_a_big_complex_array_with_nan_and_inf(dtype):
    rng = np.random.default_rng(0)
    n = EXACT_LIMIT * 2 + 3
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    z[[7, 70_000]] = complex(np.nan, 1)
    z[100_000] = complex(1, np.inf)
    s = summarize(z)
    assert (s.nan, s.inf) == (2, 1)
    finite = np.abs(z[np.isfinite(z)])
    assert s.min == pytest.approx(float(finite.min()), rel=1e-6)
    assert s.max == pytest.approx(float(finite.max()), rel=1e-6)
    assert s.mean == pytest.approx(float(finite.mean(dtype=np.float64)), rel=1e-5)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_all_nan_complex_and_a_complex_scalar(dtype):
    s = summarize(np.full(3, complex(np.nan, np.nan), dtype))
    assert (s.nan, s.inf) == (3, 0) and non_finite(s)
    assert s.row[3:6] == ["nan", "nan", "nan"]
    s = summarize(np.array(1.5 - 2j, dtype))
    assert s.shape == () and s.preview == "1.5-2j" and s.max == pytest.approx(2.5)
    s = summarize(dtype(3 + 4j))            # a numpy complex scalar, not an array
    assert s.shape == () and s.mean == pytest.approx(5.0) and s.preview == "3+4j"


def test_huge_finite_complex_does_not_warn():
    s = summarize(np.array([1.5e308 + 1.5e308j, 1e308 + 0j]))
    assert (s.nan, s.inf) == (0, 0) and s.max == float("inf")   # |z| overflows: no warning


@pytest.mark.parametrize("values", [
    np.array([1e308, 1e308, -1e308, 1e308]),             # a float64 sum overflowing
    np.full(EXACT_LIMIT + 10, 1e308),                     # the same, big (sampled mean)
    np.full(EXACT_LIMIT * 2, 3e38, np.float32),           # big float32: its one pass overflows
    np.array([np.nan, np.inf, -np.inf], np.float32),
    np.full(5, np.nan, np.float16),
    np.array([np.iinfo(np.int64).max] * 4),               # an int sum that would wrap
])
def test_real_values_never_warn_either(values):
    s = summarize(values)
    assert s.size == values.size


def test_small_int_sums_are_exact():
    big = np.iinfo(np.int64).max
    assert summarize(np.array([big, big])).mean == float(big)
    assert summarize(np.array([255] * 9, np.uint8)).mean == 255.0


def test_ml_dtypes_floats_are_summarised_with_their_nans():
    ml_dtypes = pytest.importorskip("ml_dtypes")   # JAX's bfloat16, float8_*
    s = summarize(np.array([1, 2, np.nan, np.inf], ml_dtypes.bfloat16))
    assert (s.dtype, s.min, s.max, s.mean, s.nan, s.inf) == ("bfloat16", 1.0, 2.0, 1.5, 1, 1)
    assert s.preview == "[1, 2, nan, inf]"
    s = summarize(ml_dtypes.bfloat16(1.5))
    assert (s.shape, s.dtype, s.mean) == ((), "bfloat16", 1.5)


@pytest.mark.parametrize("values", [
    np.arange(64, dtype=np.float32) * np.float32(0.37) - 5, np.array([2.5], np.float64),
    np.array(0.1, np.float32), np.linspace(-1e-5, 1e3, 6), np.ones((4, 4), np.float64),
    np.arange(1024, dtype=np.float32) * np.float32(3e33),   # its dot could overflow: general
])
def test_the_small_float_fast_path_agrees_with_the_general_one(values):
    """Byte-swapped copies take the general path (their dtype is not native)."""
    fast, general = summarize(values), summarize(values.astype(values.dtype.newbyteorder()))
    assert fast[:5] == general[:5] and fast[6:10] == general[6:10]
    assert fast.mean == pytest.approx(general.mean, rel=1e-6)


@pytest.mark.parametrize("size", [2, 64, 512, 513, 1024])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_small_arrays_min_and_max_in_any_order_and_the_array_untouched(size, dtype):
    """Min and max of a small array come from sorting its items (up to 512), beyond from
    min/max: both exact, whatever the order, and the array and its preview as they were."""
    rng = np.random.default_rng(size)
    a = (rng.standard_normal(size) * 50).astype(dtype) if np.dtype(dtype).kind == "f" \
        else rng.integers(0, 200, size).astype(dtype)
    before = a.copy()
    s = summarize(a)
    assert (s.min, s.max) == (float(a.min()), float(a.max()))
    assert s.preview == summarize(a.astype(a.dtype.newbyteorder())).preview   # general path
    assert np.array_equal(a, before)
