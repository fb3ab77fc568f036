"""Breakpoint conditions: callables, builtin names, or expressions compiled at creation.

A condition that reads ``outputs`` makes its breakpoint pause *after* the op
(the outputs must exist); otherwise it is checked before the op runs.

Every expression that reads one side only, by constant index (``inputs[0] > 1e30``,
``outputs[1].sum() > 10``), and the builtins also get a ``test``: a pre-filter
over the values alone, run inside the op's kernel wrapper, so no pause object is
made unless it says "maybe". For an expression it is the expression itself
compiled to a function of that side's values (exact; a raise means "maybe");
the common forms (``inputs[0] > 1e30``, ``np.any(outputs[0] > 10)``,
``np.isnan(inputs[0])``) answer a real scalar first with one Python comparison,
and ``.max()``/``.min()`` of a numpy scalar is read as the value itself.
An expression over ``inputs[k]`` and ``outputs[k]`` together (``or``, ``and``, any
form) gets the expression itself over both as a test (``test.both``); an ``and``
that also reads more is pre-filtered by its conjuncts over outputs alone.
So a condition that never holds costs the run loop little on the ops it can match.
"""
from __future__ import annotations

import ast
import builtins
import copy
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Condition", "compile_condition", "BUILTINS", "SCALARS", "scalar_source"]


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

# scalar classes a pre-filter answers exactly (complex, strings, arrays: "maybe")
_REAL_SCALARS = frozenset({float, int, bool, np.float16, np.float32, np.float64, np.int8,
                           np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                           np.uint64, np.bool_})
_isfinite = math.isfinite


def _maybe_non_finite(values) -> bool:
    """False when no value can hold a NaN/Inf (finite real scalars); else maybe."""
    for v in values:
        if v.__class__ not in _REAL_SCALARS or not _isfinite(v):
            return True
    return False


def _maybe_non_finite_one(v) -> bool:
    return v.__class__ not in _REAL_SCALARS or not _isfinite(v)


_maybe_non_finite.one = _maybe_non_finite_one  # the same test on an op's only value
_maybe_non_finite.scalar = "not _isfinite(_o0)"   # see ``scalar_source``


@dataclass(frozen=True)
class Condition:
    """A compiled condition: ``check(pause) -> bool``; ``reads_outputs`` picks when.

    ``test(values) -> bool``, when there is one, is False only where ``check``
    cannot hold, given the op's outputs (``reads_outputs``) or else its inputs;
    ``test.one(value)``, when it has one, is the same test on a single value; a test
    with ``both`` set takes ``(inputs as given, outputs)``. ``test.scalar``, when
    not None, is the test as source over scalars (``scalar_source``).
    """

    check: Callable
    reads_outputs: bool
    label: str
    test: Callable | None = None


_COMPARE = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==",
            ast.NotEq: "!="}


def _indexed(node):
    """(``"inputs"``/``"outputs"``, k) for ``inputs[k]``/``outputs[k]``, else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and node.value.id in ("inputs", "outputs") and isinstance(node.slice, ast.Constant) \
            and type(node.slice.value) is int and node.slice.value >= 0:
        return node.value.id, node.slice.value
    return None


def _number(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        n = _number(node.operand)
        return None if n is None else -n
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _np_call(node, names):
    """The argument of ``np.<name>(arg)`` for a name in ``names``, else None."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and isinstance(node.func, ast.Attribute) and node.func.attr in names \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "np":
        return node.args[0]
    return None


def _scalar_form(tree):
    """(side, k, answer, bound) for the forms the module doc lists: ``answer`` is Python
    source over ``v`` (and ``b``, the bound) that answers exactly for a real scalar
    ``inputs[k]``/``outputs[k]``; else None."""
    arg = _np_call(tree.body, ("any", "all"))
    arg = tree.body if arg is None else arg   # np.any/np.all of one scalar is the value itself
    inner = _np_call(arg, ("isnan", "isinf"))
    if inner is not None:
        where = _indexed(inner)
        return None if where is None else (*where, "nf(v)", None)   # "maybe" on Inf too
    if not (isinstance(arg, ast.Compare) and len(arg.ops) == 1 and type(arg.ops[0]) in _COMPARE):
        return None
    where, bound = _indexed(arg.left), _number(arg.comparators[0])
    if where is None or bound is None:
        return None
    return (*where, f"v {_COMPARE[type(arg.ops[0])]} b", bound)


# the scalar forms' tests, generated per form so the comparison is inline (no call per op)
_FAST = """
def make(exact, b, S, nf):
    def test(values):
        v = values[{k}] if {k} < len(values) else None
        if v.__class__ in S:
            return {answer}
        return exact(values)

    def one(v):
        if v.__class__ in S:
            return {answer}
        return exact((v,))
    return test, one
"""


def _not_finite(v) -> bool:
    try:
        return not _isfinite(v)
    except OverflowError:   # a Python int past float range: "maybe"
        return True


def _one_side(tree, side) -> bool:
    """Whether the expression reads only ``side[k]`` (constant k), never the other side,
    ``op``, or ``side`` whole (a list at the pause, a tuple in the test)."""
    indexed = {id(n.value) for n in ast.walk(tree) if _indexed(n) is not None}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in ("inputs", "outputs", "op"):
            if n.id != side or id(n) not in indexed:
                return False
    return True


def _expression_test(tree, when: str, side: str):
    """The condition itself over one side's values, compiled to a function (no pause
    object, no scope dict): exact, with a raise answered "maybe" so the full check reports
    it. The scalar forms answer a real scalar first without evaluating anything."""
    if not _one_side(tree, side):
        return None
    fn = eval(compile(f"lambda {side}: ({when}\n)", "<breakpoint condition>", "eval"),  # noqa: S307
              {"np": np, "__builtins__": builtins})

    def exact(values):
        try:
            return bool(fn(values))
        except Exception:   # the check raises too, and says so in a Warning event
            return True
    form = _scalar_form(tree)
    if form is None:
        test = _scalarized(tree, side, exact) or exact
        test.scalar = scalar_source(tree)
        return test
    k, answer, bound = form[1:]
    scope: dict = {}
    exec(_FAST.format(k=int(k), answer=answer), scope)  # noqa: S102 - our own template
    test, one = scope["make"](exact, bound, _REAL_SCALARS, _not_finite)
    if k == 0:
        test.one = one
    test.scalar = scalar_source(tree)
    return test


# numpy's real scalar classes: ``.max()``/``.min()`` of one is the value itself
_NP_REAL = SCALARS = frozenset(c for c in _REAL_SCALARS if issubclass(c, np.generic))
_REDUCE = ("max", "min", "amax", "amin")


class _Scalarize(ast.NodeTransformer):
    """``side[k].max()``, ``np.max(side[k])`` (and min) -> ``side[k]``: the same value
    when it is a numpy real scalar, without a numpy reduction per op."""

    def __init__(self):
        self.changed = False

    def visit_Call(self, node):
        self.generic_visit(node)
        arg = _np_call(node, _REDUCE)
        if arg is None and isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCE[:2] \
                and not node.args and not node.keywords:
            arg = node.func.value
        if arg is not None and _indexed(arg) is not None:
            self.changed = True
            return arg
        return node


def _scalarized(tree, side, exact):
    """A test that, when every value the expression reads is a numpy real scalar,
    evaluates it with its reductions of one value dropped (``_Scalarize``); else ``exact``."""
    rewriter = _Scalarize()
    body = rewriter.visit(copy.deepcopy(tree.body))
    if not rewriter.changed:
        return None
    lam = ast.Expression(ast.Lambda(ast.arguments([], [ast.arg(side)], None, [], [], None, []),
                                    body))
    fn = eval(compile(ast.fix_missing_locations(lam), "<breakpoint condition>", "eval"),  # noqa: S307
              {"np": np, "__builtins__": builtins})
    ks = sorted({_indexed(n)[1] for n in ast.walk(tree) if _indexed(n) is not None})
    scalars = _NP_REAL

    def test(values):
        try:
            for k in ks:
                if values[k].__class__ not in scalars:
                    return exact(values)
            return bool(fn(values))
        except Exception:   # the full check decides, and reports it
            return True
    return test


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
        return Condition(BUILTINS[when], True, when, _maybe_non_finite)
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
    reads_outputs = "outputs" in code.co_names
    test = _expression_test(tree, when, "outputs" if reads_outputs else "inputs")
    if test is None and reads_outputs:
        test = _both_test(tree, when) or _conjunct_test(tree)
    return Condition(check, reads_outputs, when, test)


def _both_test(tree, when: str):
    """For an expression over ``inputs[k]`` and ``outputs[k]`` (constant k) alone, of any
    form (``inputs[0] > 1e30 or outputs[0] > 1e30``): the expression itself as
    ``test(inputs, outputs)``, with ``test.both`` set; exact, a raise answered "maybe"."""
    indexed = {id(n.value) for n in ast.walk(tree) if _indexed(n) is not None}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in ("inputs", "outputs", "op") \
                and id(n) not in indexed:
            return None
    fn = eval(compile(f"lambda inputs, outputs: ({when}\n)", "<breakpoint condition>",  # noqa: S307
                      "eval"), {"np": np, "__builtins__": builtins})

    def test(inputs, outputs):
        try:
            return bool(fn(inputs, outputs))
        except Exception:   # the check raises too, and says so in a Warning event
            return True
    test.both = True
    test.scalar = scalar_source(tree)
    return test


class _ToScalars(ast.NodeTransformer):
    """``inputs[0]`` -> ``_i0``, ``outputs[0]`` -> ``_o0``; ``np.any``/``np.all`` of
    anything and reductions of those two dropped (the same truth for numpy real
    scalars); any other read of the sides or ``op`` clears ``ok``."""

    def __init__(self):
        self.ok = True

    def visit_Subscript(self, node):
        where = _indexed(node)
        if where is None:
            return self.generic_visit(node)
        if where[1] != 0:
            self.ok = False
            return node
        return ast.Name("_i0" if where[0] == "inputs" else "_o0", ast.Load())

    def visit_Name(self, node):
        if node.id in ("inputs", "outputs", "op"):
            self.ok = False
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        arg = _np_call(node, ("any", "all"))
        if arg is not None:
            return arg
        arg = _np_call(node, _REDUCE)
        if arg is None and isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCE[:2] \
                and not node.args and not node.keywords:
            arg = node.func.value
        if isinstance(arg, ast.Name) and arg.id in ("_i0", "_o0"):
            return arg
        return node


def scalar_source(tree) -> str | None:
    """The expression as Python source over ``_i0`` (``inputs[0]``) and ``_o0``
    (``outputs[0]``), which gives the expression's truth when each of them it reads is
    a numpy real scalar (``SCALARS``; ``np`` in scope) — a raise means "maybe" — or
    None when it reads anything else. The kernel wrappers of ``filtered`` inline it."""
    rewriter = _ToScalars()
    body = rewriter.visit(copy.deepcopy(tree.body))
    return ast.unparse(body) if rewriter.ok else None


def _conjunct_test(tree):
    """For ``A and B`` over both sides: the conjuncts over outputs alone pre-filter it
    (when they are false, so is the whole), e.g. ``inputs[0] > 0 and outputs[0] < 0``."""
    body = tree.body
    if not (isinstance(body, ast.BoolOp) and isinstance(body.op, ast.And)):
        return None
    parts = [v for v in body.values if _one_side(v, "outputs")
             and any(_indexed(n) is not None for n in ast.walk(v))]
    if not parts:
        return None
    sub = ast.Expression(parts[0] if len(parts) == 1 else ast.BoolOp(ast.And(), parts))
    return _expression_test(sub, ast.unparse(sub.body), "outputs")
