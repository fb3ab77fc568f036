"""Reverse-mode differentiation shared by ``gradients`` (graphs) and ``GradientTape``.

Both hand ``backprop`` a list of (op, inputs, outputs) in forward order; each
op's gradient rule (``OpDef.grad``) builds ordinary ops, so the same rules make
symbolic gradient nodes in a graph and compute values eagerly on a tape.
"""
from __future__ import annotations

import warnings

from .eager import tape as _tape
from .runtime.diagnose import warn
from .source_text import relative_source
from .graph.graph import name_scope
from .graph.tensor import SymbolicTensor
from .ops.array_ops import ones_like, zeros_like
from .ops.math_ops import add

__all__ = ["backprop", "gradients"]


def _grad_fn(op):
    return getattr(op, "custom_grad", None) or op.op_def.grad


def _sum(grads):
    if not grads:
        return None
    total = grads[0]
    for g in grads[1:]:
        total = add(total, g)
    return total


def _warn_blocked(op) -> None:
    where = str(getattr(op, "source", ""))
    message = (f"no gradient flows through op '{op.name}' ({op.type}) created at "
               f"{relative_source(where)}: "
               "numpy_function/py_func are not differentiable, so gradients along this path "
               "are None")
    warnings.warn(f"{message}. Use py_function for a differentiable wrapped function.",
                  stacklevel=4)
    warn(None, op.name, op.type, "blocked_gradient", message, where)


def backprop(records, targets, seeds, sources, unconnected="none"):
    """Gradients of ``targets`` w.r.t. ``sources`` over ``records`` (forward order)."""
    grads: dict[int, list] = {}
    for t, s in zip(targets, seeds):
        grads.setdefault(id(t), []).append(ones_like(t) if s is None else s)
    for op, inputs, outputs in reversed(records):
        out_grads = [_sum(grads.get(id(o))) for o in outputs]
        if all(g is None for g in out_grads):
            continue
        fn = _grad_fn(op)
        if fn is None:
            if op.op_def.extra.get("blocks_gradient") and any(x.dtype.is_differentiable
                                                              for x in inputs):
                _warn_blocked(op)
            continue
        out_grads = [zeros_like(o) if g is None else g for g, o in zip(out_grads, outputs)]
        for x, g in zip(inputs, fn(op, inputs, outputs, out_grads)):
            if g is not None and x.dtype.is_differentiable:
                grads.setdefault(id(x), []).append(g)
    result = []
    for s in sources:
        g = _sum(grads.get(id(s)))
        if g is None and unconnected == "zero":
            g = zeros_like(s)
        result.append(g)
    return result


def _between(ys, xs) -> list:
    """Ops on a data path from some x to some y, in creation (= topological) order."""
    back, stack = {}, [y.op for y in ys]
    while stack:
        op = stack.pop()
        if id(op) in back:
            continue
        back[id(op)] = op
        stack.extend(t.op for t in op.inputs)
    reached = {id(x) for x in xs}
    ordered = sorted(back.values(), key=lambda op: op._id)
    records = []
    for op in ordered:
        if any(id(t) in reached for t in op.inputs):
            records.append((op, op.inputs, tuple(op.outputs)))
            reached.update(id(o) for o in op.outputs)
    return records


def _as_symbolic(t):
    """A graph variable stands for the tensor that reads it."""
    return t._pfd_tensor() if getattr(type(t), "_pfd_variable", False) else t


def gradients(ys, xs, grad_ys=None, name="gradients", unconnected_gradients="none"):
    """Symbolic d(sum of ys)/d(xs) in a graph; a list with ``None`` for unconnected xs."""
    ys = [_as_symbolic(y) for y in (ys if isinstance(ys, (list, tuple)) else [ys])]
    xs = [_as_symbolic(x) for x in (xs if isinstance(xs, (list, tuple)) else [xs])]
    for t in ys + xs:
        if not isinstance(t, SymbolicTensor):
            raise TypeError(f"gradients works on symbolic tensors of a graph, got {t!r}; "
                            "in eager code use pfd.GradientTape.")
    seeds = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else \
        ([grad_ys] * len(ys) if grad_ys is not None else [None] * len(ys))
    graph = ys[0].op.graph
    with graph.as_default(), name_scope(name):
        return backprop(_between(ys, xs), ys, seeds, xs,
                        unconnected=str(getattr(unconnected_gradients, "value",
                                                unconnected_gradients)).lower())


_tape.install_backprop(backprop)
