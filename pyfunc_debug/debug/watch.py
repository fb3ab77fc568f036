"""Which steps of a plan a debugger must look at, and how (computed once per plan).

Three kinds of step, besides the ones left alone:

- *watched*: attended one by one (``run_loop._attend``) — a breakpoint may pause
  before or after them, or the debugger steps, guards inputs or watches eager ops;
- *filtered*: their breakpoints all have a condition pre-filter (``conditions``):
  the plain loop runs them with the test wrapped around the kernel (``filtered``);
- *kept*: a Python op an ``on_error`` breakpoint matches, run on the plain loop
  with a kernel that, when the op fails, leaves on the error the inputs as they
  were when it started and the wrapped function's frame (for post-mortem).

A diagnostic may come from any op, so an ``on_warning`` breakpoint with no name
or type watches every step — and, by name, the op a de-duplicated op it names
shares its value with (where that op's pause comes).
"""
from __future__ import annotations

from .breakpoints import Breakpoint
from .filtered import compile_filtered

__all__ = ["watched_steps"]


def watched_steps(dbg, plan) -> tuple:
    """(watched step indices, index -> (before, after, keep), (sorted keys of that, the
    compiled records of ``filtered.compile_filtered``))."""
    bps = [b for b in dbg.breakpoints if not (b.on_error and b.condition is None)]
    bps.append(dbg._op_breakpoint)
    if any(b.enabled and b.on_warning and b.op is None and b.op_type is None for b in bps):
        bps = [Breakpoint()]   # a diagnostic may come from any op: check them all
    errors = [b for b in dbg.breakpoints if b.on_error]
    sharers: dict = {}   # op -> the de-duplicated ops sharing its value
    for alias, first in plan.aliases.items():
        sharers.setdefault(first, []).append(alias)
    eager = dbg.watches_eager
    idx, filters = set(), {}
    for i, step in enumerate(plan.steps):
        op = step.op
        extra = op.op_def.extra
        hands_out = extra.get("hands_out_arrays")
        matched = [b for b in bps if b.matches_op(op.name, op.type) or (b.on_warning and any(
            b.matches_op(a.name, a.type) for a in sharers.get(op, ())))]
        keep = "step_into" in extra and any(b.matches_op(op.name, op.type) for b in errors)
        if (dbg.guard_mutation and hands_out) or (matched and eager and step.needs_ctx):
            idx.add(i)
        elif matched:
            tests = _prefilters(matched)
            if tests is None:
                idx.add(i)
            else:
                filters[i] = tests + (keep,)
        elif keep:
            filters[i] = ((), (), True)
    return frozenset(idx), filters, (sorted(filters), compile_filtered(plan, filters))


def _prefilters(bps):
    """(before, after) tests of breakpoints that all have one, or None when one of them
    must be checked in full (disabled ones count: they may be enabled mid-run)."""
    before, after = [], []
    for b in bps:
        c = b.condition
        if c is None or c.test is None or b.on_error or b.on_warning:
            return None
        (after if b.pauses_after else before).append(c.test)
    return tuple(before), tuple(after)
