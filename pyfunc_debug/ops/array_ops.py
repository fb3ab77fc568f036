"""Array ops: constants, placeholders, identity, shapes, selection."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dtypes import as_dtype, scalar_or_array
from ..errors import InvalidArgumentError
from ..graph.graph import building_graph, control_dependencies, get_default_graph
from ..graph.shape import UNKNOWN, TensorShape, as_shape, broadcast_shapes
from ..graph.tensor import TensorBase
from .broadcast_ops import sum_to
from .convert import CONST, convert_to_tensor
from .dispatch import apply1
from .operands import pair
from .registry import OpDef, dtype_attr, register

__all__ = ["CONST", "PLACEHOLDER", "placeholder", "identity", "reshape", "shape", "ones_like",
           "zeros_like", "ones", "zeros", "where", "transpose", "no_op", "group"]


def _placeholder_kernel(attrs):
    def k():
        raise InvalidArgumentError(None, None, "You must feed a value for placeholder tensor "
                                   f"with dtype {attrs['dtype'].name}")
    return k


PLACEHOLDER = register(OpDef("Placeholder", kernel=_placeholder_kernel,
                             infer=lambda a, i: [(a["dtype"], a["shape"])],
                             attr_types={"dtype": dtype_attr, "shape": TensorShape}))


def _same(attrs, inputs):
    return [(inputs[0].dtype, inputs[0].shape)]


IDENTITY = register(OpDef("Identity", kernel=lambda a: (lambda x: x), infer=_same,
                          grad=lambda op, i, o, g: [g[0]], cse_key=lambda op: ()))
NO_OP = register(OpDef("NoOp", kernel=lambda a: (lambda *xs: None), infer=lambda a, i: []))


def _reshape_kernel(attrs):
    def k(x, shape):
        return scalar_or_array(np.reshape(x, tuple(int(d) for d in np.reshape(shape, -1))))
    return k


def _reshape_infer(attrs, inputs):
    return [(inputs[0].dtype, attrs.get("static_shape", UNKNOWN))]


def _g_reshape(op, inputs, outputs, grads):
    return [reshape(grads[0], shape(inputs[0])), None]


RESHAPE = register(OpDef("Reshape", kernel=_reshape_kernel, infer=_reshape_infer,
                         grad=_g_reshape, cse_key=lambda op: ()))


def _shape_kernel(attrs):
    out = attrs["out_type"].np_dtype
    return lambda x: np.asarray(np.shape(x), dtype=out)


SHAPE = register(OpDef("Shape", kernel=_shape_kernel,
                       infer=lambda a, i: [(a["out_type"], TensorShape(
                           (i[0].shape.rank,)) if i[0].shape.rank is not None else TensorShape((None,)))],
                       grad=lambda op, i, o, g: [None], cse_key=lambda op: (),
                       attr_types={"out_type": dtype_attr}))


def _fill_like(value):
    def make(attrs):
        return lambda x: scalar_or_array(np.full(np.shape(x), value, dtype=np.asarray(x).dtype))
    return make


ONES_LIKE = register(OpDef("OnesLike", kernel=_fill_like(1), infer=_same,
                           grad=lambda op, i, o, g: [None], cse_key=lambda op: ()))
ZEROS_LIKE = register(OpDef("ZerosLike", kernel=_fill_like(0), infer=_same,
                            grad=lambda op, i, o, g: [None], cse_key=lambda op: ()))


def _select_kernel(attrs):
    return lambda c, x, y: scalar_or_array(np.where(c, x, y))


def _select_infer(attrs, inputs):
    c, x, y = inputs
    try:
        shape = broadcast_shapes(broadcast_shapes(c.shape, x.shape), y.shape)
    except ValueError:
        shape = UNKNOWN
    return [(x.dtype, shape)]


def _g_select(op, inputs, outputs, grads):
    c, x, y = inputs
    g = grads[0]
    zeros = zeros_like(g)
    return [None, sum_to(where(c, g, zeros), x), sum_to(where(c, zeros, g), y)]


SELECT = register(OpDef("SelectV2", kernel=_select_kernel, infer=_select_infer,
                        grad=_g_select, cse_key=lambda op: ()))
WHERE_INDICES = register(OpDef("Where", kernel=lambda a: (lambda c: np.argwhere(c).astype(np.int64)),
                               infer=lambda a, i: [(dtypes.int64, TensorShape((None, i[0].shape.rank)))
                                                   if i[0].shape.rank is not None else (dtypes.int64, UNKNOWN)],
                               grad=lambda op, i, o, g: [None], cse_key=lambda op: ()))


def _transpose_kernel(attrs):
    perm = attrs["perm"]
    return lambda x: np.transpose(x, perm)


def _g_transpose(op, inputs, outputs, grads):
    perm = op.attrs["perm"]
    inverse = None if perm is None else tuple(int(i) for i in np.argsort(perm))
    return [apply1(TRANSPOSE, [grads[0]], {"perm": inverse})]


def _transpose_infer(attrs, inputs):
    s = inputs[0].shape
    if s.rank is None:
        return [(inputs[0].dtype, UNKNOWN)]
    perm = attrs["perm"] or tuple(reversed(range(s.rank)))
    return [(inputs[0].dtype, TensorShape([s.dims[p] for p in perm]))]


TRANSPOSE = register(OpDef("Transpose", kernel=_transpose_kernel, infer=_transpose_infer,
                           grad=_g_transpose, cse_key=lambda op: (op.attrs["perm"],),
                           attr_types={"perm": lambda v: v is None or (isinstance(v, tuple) and
                                                                       all(type(i) is int
                                                                           for i in v))}))

# -- public functions -----------------------------------------------------


def _tensor(x):
    return x if isinstance(x, TensorBase) else convert_to_tensor(x)


def placeholder(dtype, shape=None, name=None):
    """A value fed at ``Session.run``; always built into the default graph."""
    dtype = as_dtype(dtype)
    graph = get_default_graph()
    op = graph.create_op(PLACEHOLDER, (), {"dtype": dtype, "shape": as_shape(shape)},
                         name=name or "Placeholder", out_specs=[(dtype, as_shape(shape))])
    return op.outputs[0]


def identity(input, name=None):  # noqa: A002 - TF's parameter name
    return apply1(IDENTITY, [_tensor(input)], {}, name)


def reshape(tensor, shape, name=None):
    static = UNKNOWN
    if not isinstance(shape, TensorBase):
        dims = [int(d) for d in np.reshape(np.asarray(shape), -1)]
        static = TensorShape(dims)
        shape = convert_to_tensor(np.asarray(dims, dtype=np.int32))
    elif hasattr(shape, "_value"):
        static = TensorShape([int(d) for d in np.reshape(shape._value, -1)])
    return apply1(RESHAPE, [_tensor(tensor), shape], {"static_shape": static}, name)


def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    return apply1(SHAPE, [_tensor(input)], {"out_type": as_dtype(out_type)}, name)


def ones_like(input, name=None):  # noqa: A002
    return apply1(ONES_LIKE, [_tensor(input)], {}, name)


def zeros_like(input, name=None):  # noqa: A002
    return apply1(ZEROS_LIKE, [_tensor(input)], {}, name)


def ones(shape, dtype=dtypes.float32, name=None):
    return convert_to_tensor(np.ones(shape, dtype=as_dtype(dtype).np_dtype), name=name)


def zeros(shape, dtype=dtypes.float32, name=None):
    return convert_to_tensor(np.zeros(shape, dtype=as_dtype(dtype).np_dtype), name=name)


def where(condition, x=None, y=None, name=None):
    """``where(c, x, y)`` picks elementwise; ``where(c)`` gives the indices of true values."""
    condition = _tensor(condition)
    if x is None and y is None:
        return apply1(WHERE_INDICES, [condition], {}, name)
    if x is None or y is None:
        raise ValueError("x and y must both be given, or neither.")
    x, y = pair(x, y, "SelectV2")
    if condition.dtype is not dtypes.bool:
        raise TypeError(f"where: condition must be bool, not {condition.dtype.name}")
    return apply1(SELECT, [condition, x, y], {}, name)


def transpose(a, perm=None, name=None):
    return apply1(TRANSPOSE, [_tensor(a)], {"perm": None if perm is None else tuple(perm)}, name)


def no_op(name=None):
    graph = building_graph()
    if graph is None:
        return None
    return graph.create_op(NO_OP, (), {}, name=name or "NoOp", out_specs=[])


def group(*inputs, name=None):
    """An op that runs after all ``inputs`` (control dependencies only)."""
    with control_dependencies(list(inputs)):
        return no_op(name=name or "group_deps")
