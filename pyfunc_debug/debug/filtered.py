"""Steps run on the plain loop with their kernel wrapped (see ``watch``).

A step matched only by breakpoints whose condition has a pre-filter runs on
the plain loop with its kernel wrapped: the wrapper puts
the inputs or outputs through the conditions' ``test`` (see ``conditions``)
and only on a "maybe" leaves the loop (``_Maybe``, which the loop lets pass
like an interrupt): before the op, the step is handed back to be attended;
after it, the debugger checks its after-breakpoints on the values as they are.
A one-input, one-output step with one such test gets a wrapper generated with
the condition's scalar form inline (``conditions.scalar_source``). A condition
that never holds thus costs a comparison per op, not a pause.
(Observed runs take a generic loop here; their events cost more anyway.)
A py_func/numpy_function may write into the arrays it is given: with a test
after it, its array inputs are copied first, so the condition and the pause
see them as they were when it started.

Python ops an ``on_error`` breakpoint matches ("kept"): when one fails, its
kernel leaves on the error its inputs as given (see ``kept``).
"""
from __future__ import annotations

import math

import numpy as np

from ..runtime.loop import run_steps
from ..runtime.observed import main_items, run_steps_observed, step_info
from .conditions import SCALARS
from .kept import keeping

__all__ = ["compile_filtered", "run_filtered"]


class _Maybe(BaseException):
    """A pre-filter said "maybe": not an error, so the plain loop does not annotate it."""

    def __init__(self, index, args, result=None, before=False, left=None):
        super().__init__()
        self.index, self.args_, self.result, self.before = index, args, result, before
        self.left = left   # the inputs as the op left them (``args_``: as it was given them)


_ndarray = np.ndarray


def _kept(args) -> tuple:
    if len(args) == 1:   # the common case, without the generic comprehension
        a = args[0]
        return (a.copy(),) if a.__class__ is _ndarray else args
    return tuple([a.copy() if a.__class__ is _ndarray else a for a in args])


def _after(test, given, results) -> bool:
    return test(given, results) if getattr(test, "both", False) else test(results)


# a one-input, one-output step with one test whose scalar source (``conditions.
# scalar_source``) is inlined: no call but the kernel's when the values are scalars
_INLINE_BEFORE = """
def make(kernel, i, exact, Maybe, S, np, _isfinite):
    def checked_before1(_i0):
        try:
            hit = ({scalar}) if _i0.__class__ in S else exact((_i0,))
        except Exception:   # the full check decides, and reports it
            hit = True
        if hit:
            raise Maybe(i, (_i0,), before=True)
        return kernel(_i0)
    return checked_before1
"""
_INLINE_AFTER = """
def make(kernel, i, exact, Maybe, S, np, _isfinite, ndarray):
    def checked_after1(a):
        _i0 = a.copy() if {copies} and a.__class__ is ndarray else a
        _o0 = kernel(a)
        try:
            hit = ({scalar}) if {classes} else {exact}
        except Exception:   # the full check decides, and reports it
            hit = True
        if hit:
            raise Maybe(i, (_i0,), _o0, left=(a,) if {copies} else None)
        return _o0
    return checked_after1
"""


_makers: dict = {}   # one generated code object per form: 1000 copies would miss the caches


def _inlined(kernel, i, before, after, copies):
    """The generated wrapper for one test with a scalar source, else None."""
    test = (before or after)[0]
    src = getattr(test, "scalar", None)
    if src is None or len(before) + len(after) != 1:
        return None
    both = getattr(test, "both", False)
    key = (bool(before), src, bool(copies), both)
    make = _makers.get(key)
    if make is None:
        if before:
            code = _INLINE_BEFORE.format(scalar=src)
        else:
            classes = " and ".join(f"{v}.__class__ in S" for v in ("_i0", "_o0")
                                   if v in src) or "True"
            code = _INLINE_AFTER.format(scalar=src, classes=classes, copies=bool(copies),
                                        exact="exact((_i0,), (_o0,))" if both
                                        else "exact((_o0,))")
        scope: dict = {}
        exec(code, scope)  # noqa: S102 - our own template around the condition's own source
        make = _makers[key] = scope["make"]
    if before:
        return make(kernel, i, test, _Maybe, SCALARS, np, math.isfinite)
    return make(kernel, i, test, _Maybe, SCALARS, np, math.isfinite, _ndarray)


def _checked(kernel, i, mode, needs_ctx, single, before, after, copies=False):
    """``kernel`` with the pre-filters around it (same call signature)."""
    if single and not needs_ctx and mode == 1:
        inlined = _inlined(kernel, i, before, after, copies)
        if inlined is not None:
            return inlined
    if single and not needs_ctx and not before and len(after) == 1 and mode == 1:
        test = after[0]
        both, one = getattr(test, "both", False), getattr(test, "one", None)
        if both or one is not None:
            def checked_after1(a):  # the commonest: one input, one output, one test after
                given = a.copy() if copies and a.__class__ is _ndarray else a
                r = kernel(a)
                if test((given,), (r,)) if both else one(r):
                    raise _Maybe(i, (given,), r, left=(a,) if copies else None)
                return r
            return checked_after1
    if single and not needs_ctx and not before and len(after) == 1 and hasattr(after[0], "one") \
            and not copies:
        one = after[0].one

        def checked_after(*args):  # the common step: one test on its one output
            r = kernel(*args)
            if one(r):
                raise _Maybe(i, args, r)
            return r
        return checked_after
    if not needs_ctx and not after and len(before) == 1 and hasattr(before[0], "one"):
        first = before[0].one
        if mode == 1:
            def checked_before1(a):  # one input, one test on it before the op
                if first(a):
                    raise _Maybe(i, (a,), before=True)
                return kernel(a)
            return checked_before1

        def checked_before(*args):  # one test on its first input
            if not args or first(args[0]):
                raise _Maybe(i, args, before=True)
            return kernel(*args)
        return checked_before

    def checked(*args):
        values = args[1:] if needs_ctx else args
        for test in before:
            if test(values):
                raise _Maybe(i, values, before=True)
        given = _kept(values) if copies and after else values
        r = kernel(*args)
        if after:
            results = (r,) if single else (tuple(r) if r is not None else ())
            for test in after:
                if _after(test, given, results):
                    raise _Maybe(i, given, r, left=values)
        return r
    return checked


def compile_filtered(plan, tests: dict) -> tuple:
    """Per step: None (not wrapped) or its fast step tuple (its kernel kept, see
    ``keeping``) plus (before, after) tests; and the fast steps with the kernels wrapped.
    ``tests``: step index -> (before, after, keep)."""
    records = [None] * len(plan.steps)
    fast = list(plan.fast_steps)
    for i, (before, after, keep) in tests.items():
        step = plan.fast_steps[i]
        copies = bool(step[7].op_def.extra.get("hands_out_arrays"))
        if keep:
            step = (keeping(step[0], step[7], step[5], copies, step[3] == 1),) + step[1:]
        records[i] = step + (before, after)
        fast[i] = step if not (before or after) else \
            (_checked(step[0], i, step[3], step[5], step[4], before, after, copies),) + step[1:]
    return records, fast


def run_filtered(plan, lo, hi, vals, ctx, compiled, dbgs, observed) -> tuple:
    """Run steps ``lo``..``hi``-1, pre-filtering those ``compiled`` (``compile_filtered``) names.

    Returns (index to go on from, whether that step must be attended first).
    """
    records, fast = compiled
    if not observed:
        try:
            run_steps(fast[lo:hi], vals, ctx)
            return hi, False
        except _Maybe as m:
            return _after_maybe(plan, m, vals, ctx, dbgs)
    info = step_info(plan)
    i = lo
    while i < hi:
        rec = records[i]
        if rec is None or not (rec[8] or rec[9]):   # no tests: a stretch, one call of the loop
            j = i + 1
            while j < hi and (records[j] is None or not (records[j][8] or records[j][9])):
                j += 1
            run_steps_observed(main_items(plan, range(i, j), steps=fast), vals, ctx)
            i = j
            continue
        _, _, _, _, _, _, drop, op, before, after = rec
        args = [vals[s] for s in info[i][4]]
        if any(test(args) for test in before):
            return i, True
        given = list(_kept(args)) if after and op.op_def.extra.get("hands_out_arrays") else args
        run_steps_observed([(rec[:6] + ((), op), info[i])], vals, ctx)   # its kernel, kept
        results = [vals[s] for s in info[i][5]]
        asked = any(_after(test, given, results) for test in after)
        if asked:
            for d in dbgs:
                d._check_after(op, op.name, op.type, given, results, ctx.run_id,
                               inputs_after=args)
        for s in drop:  # the step's last uses, dropped as the loop would
            vals[s] = None
        i += 1
        if asked:  # it may have paused: the caller looks at stepping again
            return i, False
    return hi, False


def _after_maybe(plan, m, vals, ctx, dbgs) -> tuple:
    i = m.index
    if m.before:
        return i, True
    _, _, out, _, single, _, drop, op = plan.fast_steps[i]
    results = (m.result,) if single else (tuple(m.result) if out else ())
    if single:
        vals[out] = m.result
    else:
        for s, v in zip(out, results):
            vals[s] = v
    for s in drop:
        vals[s] = None
    for d in dbgs:
        d._check_after(op, op.name, op.type, list(m.args_), list(results), ctx.run_id,
                       inputs_after=None if m.left is None else list(m.left))
    return i + 1, False
