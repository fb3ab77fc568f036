"""OpDef: one record per op type — kernel, type/shape rule, gradient, flags.

The executor and autodiff only look ops up here (no ``if op.type == ...``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

__all__ = ["OpDef", "register", "lookup", "REGISTRY"]

REGISTRY: dict[str, "OpDef"] = {}


@dataclass(frozen=True, eq=False)
class OpDef:
    """How one op type behaves.

    ``kernel(attrs)`` returns the function that computes the op on numpy values
    (with the run context first when ``needs_ctx``); it returns one value, or a
    tuple when the op has several outputs. ``infer(attrs, inputs)`` gives the
    (dtype, shape) of each output. ``grad(op, grads)`` builds the input
    gradients from the output gradients with ordinary ops (``None`` when the op
    is not differentiable). ``cse_key(op)`` lets identical stateless ops share
    one execution per run (``None``: never shared). ``bind(op)``, when given,
    replaces ``kernel`` for graph ops whose kernel needs the op itself.
    """

    name: str
    kernel: Callable[[dict], Callable]
    infer: Callable[[dict, tuple], list]
    grad: Callable | None = None
    stateful: bool = False
    needs_ctx: bool = False
    cse_key: Callable | None = None
    bind: Callable | None = None
    extra: dict = field(default_factory=dict)


def register(op_def: OpDef) -> OpDef:
    if op_def.name in REGISTRY:
        raise ValueError(f"op type {op_def.name!r} is already registered")
    REGISTRY[op_def.name] = op_def
    return op_def


def lookup(name: str) -> OpDef:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown op type {name!r}") from None
