"""Math ops: one ``OpDef`` per op (kernel, type/shape rule, gradient), then the public functions."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dtypes import as_dtype, scalar_or_array
from ..graph.shape import UNKNOWN, TensorShape, broadcast_shapes
from .array_ops import ones_like, where, zeros_like
from . import scalar_kernels
from .broadcast_ops import sum_to as _sum_to
from .dispatch import apply1
from .operands import as_tensor as _tensor, pair as _pair
from .registry import (COMPLEX, FLOAT, INEXACT, NUMBER, REAL, OpDef, axis_attr, dtype_attr,
                       register)

# -- type/shape rules -----------------------------------------------------


def same_as_first(attrs, inputs):
    return [(inputs[0].dtype, inputs[0].shape)]


def _broadcast(attrs, inputs, dtype=None):
    try:
        shape = broadcast_shapes(inputs[0].shape, inputs[1].shape)
    except ValueError as e:
        raise ValueError(f"{e} (op inputs {inputs[0]!r}, {inputs[1]!r})") from None
    return [(dtype or inputs[0].dtype, shape)]


def _bool_broadcast(attrs, inputs):
    return _broadcast(attrs, inputs, dtypes.bool)


def _div_dtype(dt):
    if dt.is_floating or dt.is_complex:
        return dt
    return dtypes.float32 if dt.np_dtype.itemsize <= 2 else dtypes.float64


def _no_attrs(op):
    return ()


def _quiet(fn):
    """numpy warnings off for kernels where TF silently gives inf/NaN."""
    def k(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return k


# -- gradient helpers (they build ordinary ops, so they work eagerly and in graphs) --

def _conj(t):
    """TF's complex gradients are conj(df/dz) * upstream; conj is the identity on reals."""
    return apply1(CONJ, [t], {}) if t.dtype.is_complex else t


def _g_add(op, inputs, outputs, grads):
    return [_sum_to(grads[0], inputs[0]), _sum_to(grads[0], inputs[1])]


def _g_sub(op, inputs, outputs, grads):
    return [_sum_to(grads[0], inputs[0]), _sum_to(negative(grads[0]), inputs[1])]


def _g_mul(op, inputs, outputs, grads):
    x, y = inputs
    g = grads[0]
    return [_sum_to(g * _conj(y), x), _sum_to(g * _conj(x), y)]


def _g_div(op, inputs, outputs, grads):
    x, y = inputs
    g = grads[0]
    if not x.dtype.is_differentiable:
        return [None, None]
    return [_sum_to(g / _conj(y), x), _sum_to(negative(g) * _conj(x / (y * y)), y)]


def _g_pow(op, inputs, outputs, grads):
    x, y = inputs
    g, z = grads[0], outputs[0]
    gx = _sum_to(g * _conj(y * pow(x, y - 1)), x)
    if not y.dtype.is_differentiable:
        return [gx, None]
    # d/dy x**y = x**y log x, taken as 0 where log x is not defined (x <= 0; x == 0 complex)
    usable = not_equal(x, 0) if x.dtype.is_complex else greater(x, 0)
    safe_x = where(usable, x, ones_like(x))
    gy = _sum_to(where(usable, g * _conj(z * log(safe_x)), zeros_like(g * z)), y)
    return [gx, gy]


def _g_neg(op, inputs, outputs, grads):
    return [negative(grads[0])]


def _g_abs(op, inputs, outputs, grads):
    x, y = inputs[0], outputs[0]
    if not x.dtype.is_complex:
        return [grads[0] * sign(x)]
    # |z| is real: its gradient is g * z / |z| (0 at z == 0), as TF's ComplexAbs
    safe = where(equal(y, 0), ones_like(y), y)
    return [cast(grads[0], x.dtype) * x / cast(safe, x.dtype)]


def _g_square(op, inputs, outputs, grads):
    return [grads[0] * _conj(2 * inputs[0])]


def _g_sqrt(op, inputs, outputs, grads):
    return [grads[0] * 0.5 / _conj(outputs[0])]


def _g_exp(op, inputs, outputs, grads):
    return [grads[0] * _conj(outputs[0])]


def _g_log(op, inputs, outputs, grads):
    return [grads[0] / _conj(inputs[0])]


def _g_sinh(op, inputs, outputs, grads):
    return [grads[0] * _conj(cosh(inputs[0]))]


def _g_cosh(op, inputs, outputs, grads):
    return [grads[0] * _conj(sinh(inputs[0]))]


def _g_tanh(op, inputs, outputs, grads):
    y = outputs[0]
    return [grads[0] * _conj(1 - y * y)]


def _g_conj(op, inputs, outputs, grads):
    return [_conj(grads[0])]


def _g_none(op, inputs, outputs, grads):
    return [None] * len(inputs)


def _g_zero(op, inputs, outputs, grads):
    return [zeros_like(inputs[0])]


def _g_minmax(pick):
    def grad(op, inputs, outputs, grads):
        x, y = inputs
        g = grads[0]
        mask = pick(x, y)
        gx = g * cast(mask, g.dtype)
        gy = g * cast(logical_not(mask), g.dtype)
        return [_sum_to(gx, x), _sum_to(gy, y)]
    return grad


def _g_matmul(op, inputs, outputs, grads):
    a, b = _conj(inputs[0]), _conj(inputs[1])  # the adjoint, for complex operands
    g = grads[0]
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return [matmul(g, b, transpose_b=True), matmul(a, g, transpose_a=True)]
    if not ta and tb:
        return [matmul(g, b), matmul(g, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, g, transpose_b=True), matmul(a, g)]
    return [matmul(b, g, transpose_a=True, transpose_b=True),
            matmul(g, a, transpose_a=True, transpose_b=True)]


def _g_reduce(mean):
    def grad(op, inputs, outputs, grads):
        attrs = {"axis": op.attrs["axis"], "keepdims": op.attrs["keepdims"], "mean": mean}
        return [apply1(REDUCE_GRAD, [grads[0], inputs[0]], attrs)]
    return grad


def _g_cast(op, inputs, outputs, grads):
    x = inputs[0]
    if not (x.dtype.is_differentiable and outputs[0].dtype.is_differentiable):
        return [None]
    return [cast(grads[0], x.dtype)]


# -- op definitions -------------------------------------------------------

def _op(name, fn, infer=same_as_first, grad=None, quiet=False, cse_key=_no_attrs, **kw):
    kernel_fn = _quiet(fn) if quiet else fn
    return register(OpDef(name, kernel=lambda attrs: kernel_fn, infer=infer, grad=grad,
                          cse_key=cse_key, **kw))


def _real_of_first(attrs, inputs):
    return [(inputs[0].dtype.real_dtype, inputs[0].shape)]


_ANY = None
_EQUATABLE = NUMBER | {"bool", "string"}


def _div_kernel(attrs):
    out = attrs["T"].np_dtype
    def k(a, b):
        with np.errstate(all="ignore"):
            return np.true_divide(a, b, dtype=out) if np.ndim(a) or np.ndim(b) \
                else out.type(np.true_divide(a, b, dtype=out))
    return k


def _div_infer(attrs, inputs):
    return _broadcast(attrs, inputs, attrs["T"])


# ``allowed``: the dtypes TF registers each op for (others are refused when built)
ADD = _op("AddV2", scalar_kernels.add, _broadcast, _g_add, allowed=NUMBER | {"string"})
SUB = _op("Sub", scalar_kernels.subtract, _broadcast, _g_sub, allowed=NUMBER)
MUL = _op("Mul", scalar_kernels.multiply, _broadcast, _g_mul, allowed=NUMBER)
DIV = register(OpDef("RealDiv", kernel=_div_kernel, infer=_div_infer, grad=_g_div,
                     cse_key=lambda op: (op.attrs["T"].name,), allowed=NUMBER,
                     attr_types={"T": dtype_attr}))
POW = _op("Pow", np.power, _broadcast, _g_pow, quiet=True, allowed=NUMBER)
MAXIMUM = _op("Maximum", np.maximum, _broadcast, _g_minmax(lambda x, y: greater_equal(x, y)),
              allowed=REAL)
MINIMUM = _op("Minimum", np.minimum, _broadcast, _g_minmax(lambda x, y: less_equal(x, y)),
              allowed=REAL)
NEG = _op("Neg", np.negative, grad=_g_neg, allowed=NUMBER)
ABS = _op("Abs", np.abs, _real_of_first, grad=_g_abs, allowed=NUMBER)
SQUARE = _op("Square", np.square, grad=_g_square, allowed=NUMBER)
SQRT = _op("Sqrt", np.sqrt, grad=_g_sqrt, quiet=True, allowed=INEXACT)
EXP = _op("Exp", np.exp, grad=_g_exp, quiet=True, allowed=INEXACT)
LOG = _op("Log", np.log, grad=_g_log, quiet=True, allowed=INEXACT)
SINH = _op("Sinh", np.sinh, grad=_g_sinh, quiet=True, allowed=INEXACT)
COSH = _op("Cosh", np.cosh, grad=_g_cosh, quiet=True, allowed=INEXACT)
TANH = _op("Tanh", np.tanh, grad=_g_tanh, allowed=INEXACT)
SIGN = _op("Sign", np.sign, grad=_g_zero, allowed=NUMBER)
CONJ = _op("Conj", np.conjugate, grad=_g_conj, allowed=COMPLEX)
LESS = _op("Less", np.less, _bool_broadcast, _g_none, allowed=REAL)
LESS_EQUAL = _op("LessEqual", np.less_equal, _bool_broadcast, _g_none, allowed=REAL)
GREATER = _op("Greater", np.greater, _bool_broadcast, _g_none, allowed=REAL)
GREATER_EQUAL = _op("GreaterEqual", np.greater_equal, _bool_broadcast, _g_none, allowed=REAL)
EQUAL = _op("Equal", np.equal, _bool_broadcast, _g_none, allowed=_EQUATABLE)
NOT_EQUAL = _op("NotEqual", np.not_equal, _bool_broadcast, _g_none, allowed=_EQUATABLE)
LOGICAL_NOT = _op("LogicalNot", np.logical_not, grad=_g_none, allowed=frozenset({"bool"}))
IS_NAN = _op("IsNan", np.isnan, lambda a, i: [(dtypes.bool, i[0].shape)], _g_none, allowed=FLOAT)
IS_INF = _op("IsInf", np.isinf, lambda a, i: [(dtypes.bool, i[0].shape)], _g_none, allowed=FLOAT)


def _matmul_kernel(attrs):
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if not ta and not tb:
        return np.matmul
    def k(a, b):
        return np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
    return k


def _matmul_infer(attrs, inputs):
    a, b = inputs[0].shape, inputs[1].shape
    if a.rank == 2 and b.rank == 2:
        m = a[1] if attrs["transpose_a"] else a[0]
        n = b[0] if attrs["transpose_b"] else b[1]
        return [(inputs[0].dtype, TensorShape((m, n)))]
    return [(inputs[0].dtype, UNKNOWN)]


MATMUL = register(OpDef("MatMul", kernel=_matmul_kernel, infer=_matmul_infer, grad=_g_matmul,
                        cse_key=lambda op: (op.attrs["transpose_a"], op.attrs["transpose_b"]),
                        allowed=NUMBER, attr_types={"transpose_a": bool, "transpose_b": bool}))


def _reduce_kernel(np_fn, mean=False):
    """A reduction whose result keeps the input's dtype (numpy sums int32 as int64)."""
    def make(attrs):
        axis, keepdims = attrs["axis"], attrs["keepdims"]
        def k(x):
            x = np.asarray(x)
            with np.errstate(all="ignore"):
                r = np_fn(x, axis=axis, keepdims=keepdims)
            if r.dtype != x.dtype:
                r = np.asarray(r).astype(x.dtype)
            return scalar_or_array(np.asarray(r)) if np.ndim(r) == 0 else r
        return k
    return make


def _reduce_validate(axis, x):
    rank = x.shape.rank
    if axis is None or rank is None:
        return
    for a in axis if isinstance(axis, tuple) else (axis,):
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} "
                             f"dimensions ('{getattr(x, 'name', 'input')}').")


def _reduce_infer(attrs, inputs):
    x = inputs[0]
    axis, keepdims = attrs["axis"], attrs["keepdims"]
    if x.shape.rank is None:
        return [(x.dtype, UNKNOWN)]
    rank = x.shape.rank
    axes = range(rank) if axis is None else [a % rank for a in (axis if isinstance(axis, tuple) else (axis,))]
    dims = [1 if i in axes else d for i, d in enumerate(x.shape.dims)] if keepdims \
        else [d for i, d in enumerate(x.shape.dims) if i not in axes]
    return [(x.dtype, TensorShape(dims))]


def _reduce_key(op):
    return (op.attrs["axis"], op.attrs["keepdims"])


_REDUCE_ATTRS = {"axis": axis_attr, "keepdims": bool}


SUM = register(OpDef("Sum", kernel=_reduce_kernel(np.sum), infer=_reduce_infer,
                     grad=_g_reduce(False), cse_key=_reduce_key, allowed=NUMBER,
                     attr_types=_REDUCE_ATTRS))
MEAN = register(OpDef("Mean", kernel=_reduce_kernel(np.mean, mean=True), infer=_reduce_infer,
                      grad=_g_reduce(True), cse_key=_reduce_key, allowed=NUMBER,
                     attr_types=_REDUCE_ATTRS))
MAX = register(OpDef("Max", kernel=_reduce_kernel(np.max), infer=_reduce_infer,
                     grad=None, cse_key=_reduce_key, allowed=REAL,
                     attr_types=_REDUCE_ATTRS))


def _reduce_grad_kernel(attrs):
    axis, keepdims, mean = attrs["axis"], attrs["keepdims"], attrs["mean"]
    def k(g, x):
        xs = np.shape(x)
        axes = tuple(range(len(xs))) if axis is None else tuple(
            a % len(xs) for a in (axis if isinstance(axis, tuple) else (axis,)))
        g = np.asarray(g)
        if not keepdims:
            g = np.expand_dims(g, axes) if axes else g
        out = np.broadcast_to(g, xs)
        if mean:
            count = int(np.prod([xs[a] for a in axes])) if axes else 1
            out = out / np.asarray(max(count, 1), dtype=out.dtype)
        return scalar_or_array(np.array(out))
    return k


def _g_reduce_grad(op, inputs, outputs, grads):
    """ReduceGrad broadcasts g back over the reduced axes; its gradient reduces again."""
    a = op.attrs
    reduce = reduce_mean if a["mean"] else reduce_sum
    return [reduce(grads[0], axis=a["axis"], keepdims=a["keepdims"]), None]


REDUCE_GRAD = register(OpDef("ReduceGrad", kernel=_reduce_grad_kernel,
                             infer=lambda a, i: [(i[0].dtype, i[1].shape)], grad=_g_reduce_grad,
                             cse_key=lambda op: (op.attrs["axis"], op.attrs["keepdims"],
                                                 op.attrs["mean"]),
                             attr_types=dict(_REDUCE_ATTRS, mean=bool)))


def _cast_kernel(attrs):
    dst = attrs["DstT"].np_dtype
    to_real = dst.kind != "c"
    def k(x):
        if to_real and np.iscomplexobj(x):
            x = np.real(x)  # TF keeps the real part; numpy would warn
        with np.errstate(all="ignore"):
            return x.astype(dst) if hasattr(x, "astype") else dst.type(x)
    return k


def _cast_check(x, dtype):
    if x.dtype.is_string != dtype.is_string:
        raise TypeError(f"Cast from {x.dtype.name} to {dtype.name} is not supported "
                        f"('{getattr(x, 'name', 'input')}').")


CAST = register(OpDef("Cast", kernel=_cast_kernel,
                      infer=lambda a, i: [(a["DstT"], i[0].shape)], grad=_g_cast,
                      cse_key=lambda op: (op.attrs["DstT"].name,),
                      attr_types={"DstT": dtype_attr}))

# -- public functions -----------------------------------------------------


def _binary(op_def):
    def fn(x, y, name=None):
        x, y = _pair(x, y, op_def.name)
        return apply1(op_def, [x, y], {}, name)
    fn.__name__ = op_def.name.lower()
    return fn


def _unary(op_def):
    def fn(x, name=None):
        return apply1(op_def, [_tensor(x)], {}, name)
    fn.__name__ = op_def.name.lower()
    return fn


add = _binary(ADD)
subtract = _binary(SUB)
multiply = _binary(MUL)
maximum = _binary(MAXIMUM)
minimum = _binary(MINIMUM)
less = _binary(LESS)
less_equal = _binary(LESS_EQUAL)
greater = _binary(GREATER)
greater_equal = _binary(GREATER_EQUAL)
equal = _binary(EQUAL)
not_equal = _binary(NOT_EQUAL)
negative = _unary(NEG)
abs = _unary(ABS)  # noqa: A001 - TF's public name
square = _unary(SQUARE)
sqrt = _unary(SQRT)
exp = _unary(EXP)
log = _unary(LOG)
sinh = _unary(SINH)
cosh = _unary(COSH)
tanh = _unary(TANH)
sign = _unary(SIGN)
logical_not = _unary(LOGICAL_NOT)
is_nan = _unary(IS_NAN)
is_inf = _unary(IS_INF)


def pow(x, y, name=None):  # noqa: A001 - TF's public name
    x, y = _pair(x, y, "Pow")
    return apply1(POW, [x, y], {}, name)


def divide(x, y, name=None):
    """``x / y``; integer inputs give floats, as TF's ``truediv``."""
    x, y = _pair(x, y, "RealDiv")
    return apply1(DIV, [x, y], {"T": _div_dtype(x.dtype)}, name)


truediv = divide


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    a, b = _pair(a, b, "MatMul")
    return apply1(MATMUL, [a, b], {"transpose_a": bool(transpose_a),
                                   "transpose_b": bool(transpose_b)}, name)


def _axis(axis):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return int(axis)


def _reduce(op_def, input_tensor, axis, keepdims, name):
    x = _tensor(input_tensor)
    axis = _axis(axis)
    _reduce_validate(axis, x)
    return apply1(op_def, [x], {"axis": axis, "keepdims": bool(keepdims)}, name)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over ``axis`` (all axes when ``None``); the result keeps the input's dtype."""
    return _reduce(SUM, input_tensor, axis, keepdims, name)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over ``axis``; integer inputs give integer (truncated) means, as in TF."""
    return _reduce(MEAN, input_tensor, axis, keepdims, name)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce(MAX, input_tensor, axis, keepdims, name)


def cast(x, dtype, name=None):
    """``x`` as ``dtype`` (complex to real keeps the real part, as TF does)."""
    dtype = as_dtype(dtype)
    x = _tensor(x)
    _cast_check(x, dtype)
    return apply1(CAST, [x], {"DstT": dtype}, name)


def conj(x, name=None):
    """The complex conjugate; the identity on real tensors (as ``tf.math.conj``)."""
    x = _tensor(x)
    return apply1(CONJ, [x], {}, name) if x.dtype.is_complex else x


def sigmoid(x, name=None):
    """1 / (1 + exp(-x)), composed from the ops above (so it differentiates)."""
    x = _tensor(x)
    return divide(1, 1 + exp(negative(x)), name=name)


def relu(x, name=None):
    return maximum(_tensor(x), 0, name=name)

