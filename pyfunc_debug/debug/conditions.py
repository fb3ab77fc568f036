"""Breakpoint conditions: callables, builtin names, or expressions compiled at creation.

A condition that reads ``outputs`` makes its breakpoint pause *after* the op
(the outputs must exist); otherwise it is checked before the op runs.
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Condition", "compile_condition", "BUILTINS"]


def _non_finite(values) -> tuple[bool, bool]:
    """(any NaN, any NaN or Inf) over numeric values."""
    nan = bad = False
    for v in values:
        a = np.asarray(v)
        if a.dtype.kind in "fc" and a.size:
            if not np.isfinite(a).all():
                bad = True
                nan = nan or bool(np.isnan(a).any())
    return nan, bad


def has_nan(pause) -> bool:
    return _non_finite(pause.outputs or ())[0]


def has_inf_or_nan(pause) -> bool:
    return _non_finite(pause.outputs or ())[1]


def nan_producer(pause) -> bool:
    """Outputs hold NaN/Inf while the inputs did not: the op that made it."""
    return _non_finite(pause.outputs or ())[1] and not _non_finite(pause.inputs or ())[1]


BUILTINS = {"has_nan": has_nan, "has_inf_or_nan": has_inf_or_nan, "nan_producer": nan_producer}


@dataclass(frozen=True)
class Condition:
    """A compiled condition: ``check(pause) -> bool``; ``reads_outputs`` picks when."""

    check: Callable
    reads_outputs: bool
    label: str


def _reads_outputs(fn) -> bool:
    code = getattr(fn, "__code__", None)
    if code is None:
        code = getattr(getattr(fn, "__call__", None), "__code__", None)
    return code is not None and "outputs" in code.co_names + code.co_varnames


_NAMES = {"inputs", "outputs", "np", "op"} | set(dir(builtins))


def _unknown_names(tree) -> list:
    """Names an expression reads that will not exist when it runs (typos, mostly)."""
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.Lambda) for a in n.args.args}
    read = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return sorted({n for n in read if n not in _NAMES and n not in bound})


def compile_condition(when) -> Condition | None:
    """``when`` as a ``Condition``; a bad expression raises ``ValueError`` now, not at run time."""
    if when is None:
        return None
    if callable(when):
        return Condition(when, _reads_outputs(when), getattr(when, "__name__", repr(when)))
    if not isinstance(when, str):
        raise TypeError(f"when= takes a callable, a builtin name {sorted(BUILTINS)} or an "
                        f"expression string, not {type(when).__name__}")
    if when in BUILTINS:
        return Condition(BUILTINS[when], True, when)
    try:
        tree = ast.parse(when, "<breakpoint condition>", mode="eval")
        code = compile(tree, "<breakpoint condition>", "eval")
    except SyntaxError as e:
        raise ValueError(f"invalid breakpoint condition {when!r}: {e.msg} (column {e.offset})") from None
    unknown = _unknown_names(tree)
    if unknown:
        raise ValueError(f"breakpoint condition {when!r} uses unknown name "
                         f"{', '.join(repr(n) for n in unknown)}: it can read inputs, outputs, "
                         "np and op")

    def check(pause):
        scope = {"inputs": pause.inputs, "outputs": pause.outputs, "np": np,
                 "op": pause.op_name}
        return bool(eval(code, {"__builtins__": __builtins__}, scope))  # noqa: S307 - user's own expression
    return Condition(check, "outputs" in code.co_names, when)
