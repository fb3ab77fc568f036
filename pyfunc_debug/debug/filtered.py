"""Steps matched only by breakpoints whose condition has a pre-filter.

Such a step runs on the plain loop with its kernel wrapped: the wrapper puts
the inputs or outputs through the conditions' ``test`` (see ``conditions``)
and only on a "maybe" leaves the loop (``_Maybe``, which the loop lets pass
like an interrupt): before the op, the step is handed back to be attended;
after it, the debugger checks its after-breakpoints on the values as they are.
A condition that never holds thus costs a comparison per op, not a pause.
(Observed runs take a generic loop here; their events cost more anyway.)
"""
from __future__ import annotations

from ..runtime.loop import run_steps
from ..runtime.observed import main_items, run_steps_observed, step_info

__all__ = ["compile_filtered", "run_filtered"]


class _Maybe(BaseException):
    """A pre-filter said "maybe": not an error, so the plain loop does not annotate it."""

    def __init__(self, index, args, result=None, before=False):
        super().__init__()
        self.index, self.args_, self.result, self.before = index, args, result, before


def _checked(kernel, i, mode, needs_ctx, single, before, after):
    """``kernel`` with the pre-filters around it (same call signature)."""
    if single and not needs_ctx and not before and len(after) == 1 and hasattr(after[0], "one"):
        one = after[0].one
        if mode == 1:
            def checked_after1(a):  # the commonest: one input, one output, one test after
                r = kernel(a)
                if one(r):
                    raise _Maybe(i, (a,), r)
                return r
            return checked_after1

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
        r = kernel(*args)
        if after:
            results = (r,) if single else (tuple(r) if r is not None else ())
            for test in after:
                if test(results):
                    raise _Maybe(i, values, r)
        return r
    return checked


def compile_filtered(plan, tests: dict) -> tuple:
    """Per step: None (no pre-filter) or its fast step tuple plus (before, after) tests;
    and the fast steps with the pre-filtered kernels wrapped."""
    records = [None] * len(plan.steps)
    fast = list(plan.fast_steps)
    for i, (before, after) in tests.items():
        step = plan.fast_steps[i]
        records[i] = step + (before, after)
        fast[i] = (_checked(step[0], i, step[3], step[5], step[4], before, after),) + step[1:]
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
        if rec is None:  # an unfiltered stretch: one call of the loop
            j = i + 1
            while j < hi and records[j] is None:
                j += 1
            run_steps_observed(main_items(plan, range(i, j)), vals, ctx)
            i = j
            continue
        _, _, _, _, _, _, drop, op, before, after = rec
        args = [vals[s] for s in info[i][4]]
        if any(test(args) for test in before):
            return i, True
        run_steps_observed(main_items(plan, (i,), frees=False), vals, ctx)
        results = [vals[s] for s in info[i][5]]
        asked = any(test(results) for test in after)
        if asked:
            for d in dbgs:
                d._check_after(op, op.name, op.type, args, results, ctx.run_id)
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
        d._check_after(op, op.name, op.type, list(m.args_), list(results), ctx.run_id)
    return i + 1, False
