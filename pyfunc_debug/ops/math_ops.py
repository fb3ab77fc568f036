"""Math ops: one ``OpDef`` per op (kernel, type/shape rule, gradient), then the public functions."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dtypes import as_dtype
from ..graph.shape import UNKNOWN, TensorShape, broadcast_shapes
from ..graph.tensor import TensorBase
from .convert import convert_to_tensor, scalar_or_array
from .dispatch import apply1
from .registry import OpDef, register

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
    if dt.is_floating:
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

def _sum_to(g, x):
    if g.shape.is_fully_defined() and g.shape == x.shape:
        return g
    return apply1(SUM_TO_SHAPE, [g, x], {})


def _g_add(op, inputs, outputs, grads):
    return [_sum_to(grads[0], inputs[0]), _sum_to(grads[0], inputs[1])]


def _g_sub(op, inputs, outputs, grads):
    return [_sum_to(grads[0], inputs[0]), _sum_to(negative(grads[0]), inputs[1])]


def _g_mul(op, inputs, outputs, grads):
    x, y = inputs
    g = grads[0]
    return [_sum_to(g * y, x), _sum_to(g * x, y)]


def _g_div(op, inputs, outputs, grads):
    x, y = inputs
    g = grads[0]
    if not x.dtype.is_floating:
        return [None, None]
    return [_sum_to(g / y, x), _sum_to(negative(g) * x / (y * y), y)]


def _g_pow(op, inputs, outputs, grads):
    x, y = inputs
    g, z = grads[0], outputs[0]
    gx = _sum_to(g * y * pow(x, y - 1), x)
    if not y.dtype.is_floating:
        return [gx, None]
    positive = greater(x, 0)
    safe_x = where(positive, x, ones_like(x))
    gy = _sum_to(where(positive, g * z * log(safe_x), zeros_like(g * z)), y)
    return [gx, gy]


def _g_neg(op, inputs, outputs, grads):
    return [negative(grads[0])]


def _g_abs(op, inputs, outputs, grads):
    return [grads[0] * sign(inputs[0])]


def _g_square(op, inputs, outputs, grads):
    return [grads[0] * (2 * inputs[0])]


def _g_sqrt(op, inputs, outputs, grads):
    return [grads[0] * 0.5 / outputs[0]]


def _g_exp(op, inputs, outputs, grads):
    return [grads[0] * outputs[0]]


def _g_log(op, inputs, outputs, grads):
    return [grads[0] / inputs[0]]


def _g_sinh(op, inputs, outputs, grads):
    return [grads[0] * cosh(inputs[0])]


def _g_cosh(op, inputs, outputs, grads):
    return [grads[0] * sinh(inputs[0])]


def _g_tanh(op, inputs, outputs, grads):
    y = outputs[0]
    return [grads[0] * (1 - y * y)]


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
    a, b = inputs
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
    if not (x.dtype.is_floating and outputs[0].dtype.is_floating):
        return [None]
    return [cast(grads[0], x.dtype)]


# -- op definitions -------------------------------------------------------

def _op(name, fn, infer=same_as_first, grad=None, quiet=False, cse_key=_no_attrs, **kw):
    kernel_fn = _quiet(fn) if quiet else fn
    return register(OpDef(name, kernel=lambda attrs: kernel_fn, infer=infer, grad=grad,
                          cse_key=cse_key, **kw))


def _div_kernel(attrs):
    out = attrs["T"].np_dtype
    def k(a, b):
        with np.errstate(all="ignore"):
            return np.true_divide(a, b, dtype=out) if np.ndim(a) or np.ndim(b) \
                else out.type(np.true_divide(a, b, dtype=out))
    return k


def _div_infer(attrs, inputs):
    return _broadcast(attrs, inputs, attrs["T"])


ADD = _op("AddV2", np.add, _broadcast, _g_add)
SUB = _op("Sub", np.subtract, _broadcast, _g_sub)
MUL = _op("Mul", np.multiply, _broadcast, _g_mul)
DIV = register(OpDef("RealDiv", kernel=_div_kernel, infer=_div_infer, grad=_g_div,
                     cse_key=lambda op: (op.attrs["T"].name,)))
POW = _op("Pow", np.power, _broadcast, _g_pow, quiet=True)
MAXIMUM = _op("Maximum", np.maximum, _broadcast, _g_minmax(lambda x, y: greater_equal(x, y)))
MINIMUM = _op("Minimum", np.minimum, _broadcast, _g_minmax(lambda x, y: less_equal(x, y)))
NEG = _op("Neg", np.negative, grad=_g_neg)
ABS = _op("Abs", np.abs, grad=_g_abs)
SQUARE = _op("Square", np.square, grad=_g_square)
SQRT = _op("Sqrt", np.sqrt, grad=_g_sqrt, quiet=True)
EXP = _op("Exp", np.exp, grad=_g_exp, quiet=True)
LOG = _op("Log", np.log, grad=_g_log, quiet=True)
SINH = _op("Sinh", np.sinh, grad=_g_sinh, quiet=True)
COSH = _op("Cosh", np.cosh, grad=_g_cosh, quiet=True)
TANH = _op("Tanh", np.tanh, grad=_g_tanh)
SIGN = _op("Sign", np.sign, grad=_g_zero)
LESS = _op("Less", np.less, _bool_broadcast, _g_none)
LESS_EQUAL = _op("LessEqual", np.less_equal, _bool_broadcast, _g_none)
GREATER = _op("Greater", np.greater, _bool_broadcast, _g_none)
GREATER_EQUAL = _op("GreaterEqual", np.greater_equal, _bool_broadcast, _g_none)
EQUAL = _op("Equal", np.equal, _bool_broadcast, _g_none)
NOT_EQUAL = _op("NotEqual", np.not_equal, _bool_broadcast, _g_none)
LOGICAL_NOT = _op("LogicalNot", np.logical_not, grad=_g_none)
IS_NAN = _op("IsNan", np.isnan, lambda a, i: [(dtypes.bool, i[0].shape)], _g_none)
IS_INF = _op("IsInf", np.isinf, lambda a, i: [(dtypes.bool, i[0].shape)], _g_none)


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
                        cse_key=lambda op: (op.attrs["transpose_a"], op.attrs["transpose_b"])))


def _reduce_kernel(np_fn, mean=False):
    def make(attrs):
        axis, keepdims = attrs["axis"], attrs["keepdims"]
        def k(x):
            r = np_fn(x, axis=axis, keepdims=keepdims)
            if mean and np.asarray(x).dtype.kind in "iu":
                r = r.astype(np.asarray(x).dtype)
            return scalar_or_array(np.asarray(r)) if np.ndim(r) == 0 else r
        return k
    return make


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


SUM = register(OpDef("Sum", kernel=_reduce_kernel(np.sum), infer=_reduce_infer,
                     grad=_g_reduce(False), cse_key=_reduce_key))
MEAN = register(OpDef("Mean", kernel=_reduce_kernel(np.mean, mean=True), infer=_reduce_infer,
                      grad=_g_reduce(True), cse_key=_reduce_key))
MAX = register(OpDef("Max", kernel=_reduce_kernel(np.max), infer=_reduce_infer,
                     grad=None, cse_key=_reduce_key))


def _sum_to_kernel(attrs):
    def k(g, x):
        gs, xs = np.shape(g), np.shape(x)
        if gs == xs:
            return g
        lead = len(gs) - len(xs)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, d in enumerate(xs) if d == 1 and gs[i + lead] != 1)
        r = np.sum(g, axis=axes, keepdims=True) if axes else g
        return scalar_or_array(np.reshape(r, xs))
    return k


def _g_sum_to(op, inputs, outputs, grads):
    return [apply1(BROADCAST_LIKE, [grads[0], inputs[0]], {}), None]


def _broadcast_like_kernel(attrs):
    return lambda u, g: scalar_or_array(np.array(np.broadcast_to(u, np.shape(g))))


def _g_broadcast_like(op, inputs, outputs, grads):
    return [_sum_to(grads[0], inputs[0]), None]


SUM_TO_SHAPE = register(OpDef("SumToShapeOf", kernel=_sum_to_kernel,
                              infer=lambda a, i: [(i[0].dtype, i[1].shape)], grad=_g_sum_to,
                              cse_key=_no_attrs))
BROADCAST_LIKE = register(OpDef("BroadcastToShapeOf", kernel=_broadcast_like_kernel,
                                infer=lambda a, i: [(i[0].dtype, i[1].shape)],
                                grad=_g_broadcast_like, cse_key=_no_attrs))


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
                                                 op.attrs["mean"])))


def _cast_kernel(attrs):
    dst = attrs["DstT"].np_dtype
    def k(x):
        return x.astype(dst) if hasattr(x, "astype") else dst.type(x)
    return k


CAST = register(OpDef("Cast", kernel=_cast_kernel,
                      infer=lambda a, i: [(a["DstT"], i[0].shape)], grad=_g_cast,
                      cse_key=lambda op: (op.attrs["DstT"].name,)))

# -- public functions -----------------------------------------------------


def _tensor(x, dtype=None):
    return x if isinstance(x, TensorBase) else convert_to_tensor(x, dtype)


def _pair(x, y, op_name):
    """Convert the operands of a binary op to one dtype, as TF does for Python values."""
    if isinstance(x, TensorBase) and not isinstance(y, TensorBase):
        y = _convert_operand(y, x.dtype)
    elif isinstance(y, TensorBase) and not isinstance(x, TensorBase):
        x = _convert_operand(x, y.dtype)
    else:
        x, y = _tensor(x), _tensor(y)
    if x.dtype is not y.dtype:
        raise TypeError(f"Input 'y' of '{op_name}' Op has type {y.dtype.name} that does not "
                        f"match type {x.dtype.name} of argument 'x'.")
    return x, y


def _convert_operand(value, dtype):
    if isinstance(value, (np.ndarray, np.generic)):
        return convert_to_tensor(value)
    return convert_to_tensor(value, dtype)


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


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    return apply1(SUM, [_tensor(input_tensor)], {"axis": _axis(axis), "keepdims": bool(keepdims)}, name)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    return apply1(MEAN, [_tensor(input_tensor)], {"axis": _axis(axis), "keepdims": bool(keepdims)}, name)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    return apply1(MAX, [_tensor(input_tensor)], {"axis": _axis(axis), "keepdims": bool(keepdims)}, name)


def cast(x, dtype, name=None):
    dtype = as_dtype(dtype)
    x = _tensor(x)
    return apply1(CAST, [x], {"DstT": dtype}, name)


def sigmoid(x, name=None):
    """1 / (1 + exp(-x)), composed from the ops above (so it differentiates)."""
    x = _tensor(x)
    return divide(1, 1 + exp(negative(x)), name=name)


def relu(x, name=None):
    return maximum(_tensor(x), 0, name=name)


from .array_ops import ones_like, where, zeros_like  # noqa: E402  (grads use them)
