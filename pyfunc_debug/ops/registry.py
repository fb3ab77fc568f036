"""OpDef: one record per op type — kernel, type/shape rule, gradient, flags.

The executor and autodiff only look ops up here (no ``if op.type == ...``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import InvalidArgumentError

__all__ = ["OpDef", "register", "lookup", "REGISTRY", "check_types", "FLOAT", "COMPLEX",
           "INTEGER", "REAL", "NUMBER", "INEXACT"]

# dtype groups for ``OpDef.allowed`` (names, as TF's op registrations list them)
FLOAT = frozenset({"float16", "float32", "float64"})
COMPLEX = frozenset({"complex64", "complex128"})
INTEGER = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
REAL = FLOAT | INTEGER
NUMBER = REAL | COMPLEX
INEXACT = FLOAT | COMPLEX

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
    ``allowed`` lists the dtype names the inputs at ``typed`` may have (``None``:
    any); other dtypes are refused when the op is built, as TF's op registry does.
    ``attr_types`` maps each attribute the kernel reads to its type(s) (a type,
    a tuple of types, or a predicate): ``import_graph_def`` checks them.
    """

    name: str
    kernel: Callable[[dict], Callable]
    infer: Callable[[dict, tuple], list]
    grad: Callable | None = None
    stateful: bool = False
    needs_ctx: bool = False
    cse_key: Callable | None = None
    bind: Callable | None = None
    allowed: frozenset | None = None
    typed: tuple = (0,)
    attr_types: dict = field(default_factory=dict)
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


def dtype_attr(value) -> bool:
    return type(value).__name__ == "DType"


def dtype_tuple_attr(value) -> bool:
    return isinstance(value, tuple) and all(dtype_attr(v) for v in value)


def axis_attr(value) -> bool:
    return value is None or type(value) is int or (
        isinstance(value, tuple) and all(type(v) is int for v in value))


def check_types(op_def: OpDef, inputs, eager: bool) -> None:
    """Refuse input dtypes the op does not accept, with TF's wording.

    Building: ``TypeError``; eagerly: ``InvalidArgumentError`` (what TF raises).
    """
    allowed = op_def.allowed
    if allowed is None:
        return
    for i in op_def.typed:
        if i >= len(inputs):
            continue
        dt = getattr(inputs[i], "dtype", None)
        if dt is None or dt.name in allowed:
            continue
        names = ", ".join(sorted(allowed, key=_ORDER.index))
        if eager:
            raise InvalidArgumentError(None, None, f"Value for attr 'T' of {dt.name} is not in "
                                       f"the list of allowed values: {names} [Op:{op_def.name}]")
        raise TypeError(f"Value passed to parameter {i} of '{op_def.name}' Op has DataType "
                        f"{dt.name} not in list of allowed values: {names}")


_ORDER = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "complex64", "complex128", "bool", "string"]


def check_attrs(op_def: OpDef, attrs: dict) -> None:
    """``TypeError`` for a missing or mistyped attribute (graph definitions from files)."""
    for key, want in op_def.attr_types.items():
        if key not in attrs:
            raise TypeError(f"missing attribute {key!r}")
        value = attrs[key]
        ok = want(value) if callable(want) and not isinstance(want, type) else \
            isinstance(value, want)
        if not ok:
            raise TypeError(f"attribute {key!r} has an invalid value {value!r}")
