"""Hypothesis strategies shared by the fuzz suites: dtypes, shapes, values, JSON junk."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyfunc_debug as tf

NUMERIC = [tf.float16, tf.float32, tf.float64, tf.int8, tf.int16, tf.int32, tf.int64,
           tf.uint8, tf.uint16, tf.uint32, tf.uint64, tf.complex64, tf.complex128]
ALL = NUMERIC + [tf.bool, tf.string]

dtypes = st.sampled_from(ALL)
numeric_dtypes = st.sampled_from(NUMERIC)
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3)


def values(dtype, shape, finite=False):
    """Arrays (numpy scalars for rank 0) of ``dtype`` and ``shape``."""
    if dtype.is_string:
        n = int(np.prod(shape)) if shape else 1
        return st.lists(st.binary(max_size=4), min_size=n, max_size=n).map(
            lambda items: _objects(items, shape))
    np_dtype = dtype.np_dtype
    elements = None
    if dtype.is_floating or dtype.is_complex:
        width = 16 if np_dtype.itemsize <= 2 else 32 if np_dtype.itemsize <= 4 or \
            (dtype.is_complex and np_dtype.itemsize == 8) else 64
        bound = 10.0 if finite else None
        if dtype.is_complex:
            elements = st.complex_numbers(max_magnitude=bound, allow_nan=not finite,
                                          allow_infinity=not finite, width=2 * width)
        else:
            elements = st.floats(min_value=-bound if bound else None, max_value=bound,
                                 allow_nan=not finite, allow_infinity=not finite, width=width)
    return hnp.arrays(np_dtype, shape, elements=elements).map(_scalar)


def _objects(items, shape):
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return _scalar(arr.reshape(shape))


def _scalar(arr):
    return arr[()] if isinstance(arr, np.ndarray) and arr.ndim == 0 else arr


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) |
    st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=6)

feed_values = st.one_of(
    st.integers(-2**70, 2**70), st.floats(), st.complex_numbers(), st.booleans(),
    st.text(max_size=5), st.binary(max_size=5), st.none(), json_values,
    st.lists(st.integers(-300, 300), max_size=4),
    st.lists(st.lists(st.floats(width=32), max_size=2), max_size=3),
    dtypes.flatmap(lambda d: shapes.flatmap(lambda s: values(d, s))),
    st.builds(object),
)
