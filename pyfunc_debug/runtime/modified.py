"""Noticing that a wrapped function wrote into its input arrays (cheaply).

A ``py_func``/``numpy_function`` receives the very arrays flowing in the graph
(no defensive copies, TF#49), so a function can change its input in place. When
events carry summaries, each small array input is summarised again after the
call and compared with its summary from before (values too, when both were
captured); a big one (over ``EXACT_LIMIT`` elements) is compared on a strided
sample taken before the call (``input_marks``), which costs what the sample
costs, not a pass over the array — a write that misses the sample goes unseen;
a difference is reported as one ``Warning`` (kind ``input_modified``) whose
``inputs`` hold every input as it is *after* the call — the op's ``OpEnd``
keeps them as they were when it started. An exact check of every element is
``Debugger(guard_mutation=True)``'s job.
"""
from __future__ import annotations

import operator
import threading
import time

import numpy as np

from .. import events as ev
from ..source_text import relative_source
from ..trace.summary import EXACT_LIMIT, sample_bytes as _sample, summarize

__all__ = ["input_marks", "inputs_after", "report_modified"]

# shape .. inf of a ValueSummary: what must not change
_STATS = operator.attrgetter("shape", "dtype", "size", "min", "max", "mean", "nan", "inf")


def _differs(before, after) -> bool:
    if _STATS(before) != _STATS(after):
        return not _same_nan_stats(before, after)
    b, a = before.value, after.value
    if b is not None and a is not None:
        return not np.array_equal(b, a, equal_nan=np.asarray(b).dtype.kind in "fc")
    return False


def _same_nan_stats(before, after) -> bool:
    # NaN != NaN: summaries of all-NaN arrays compare unequal although nothing changed
    for x, y in zip(_STATS(before), _STATS(after)):
        if x != y and not (isinstance(x, float) and isinstance(y, float) and x != x and y != y):
            return False
    return True


def input_marks(args, slots=(), fresh_slot=None, fresh_sample=None):
    """Before the call: a strided sample of each big array input (None when there is none).

    ``fresh_sample`` is the sample the step that ran just before gathered for the
    summary of its output (in ``fresh_slot``), with nothing run since: an input in
    that slot takes it instead of a second gather.
    """
    marks = None
    for j, a in enumerate(args):
        if a.__class__ is np.ndarray and a.size > EXACT_LIMIT:
            if marks is None:
                marks = [None] * len(args)
            marks[j] = (fresh_sample if fresh_sample is not None and slots[j] == fresh_slot
                        else _sample(a))
    return marks


def inputs_after(args, before: tuple, cap: int, marks=None):
    """Summaries of ``args`` now, or ``None`` when no array among them changed.

    ``marks`` (``input_marks`` before the call) spare big arrays a full pass.
    """
    changed = False
    after = list(before)
    for j, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.ndim and j < len(before):
            mark = None if marks is None else marks[j]
            if mark is not None and _sample(a) == mark:
                continue  # the sample is unchanged: taken as not written
            now = summarize(a, cap)
            if _differs(before[j], now):
                after[j] = now
                changed = True
    return tuple(after) if changed else None


def report_modified(run_id, name, typ, src, before: tuple, after: tuple) -> None:
    """One ``Warning`` naming the op and each input it changed, with the values after."""
    which = [j for j, (b, a) in enumerate(zip(before, after)) if a is not b]
    listed = ", ".join(str(j) for j in which)
    message = (f"op '{name}' ({typ}){f' created at {relative_source(src)}' if src else ''} wrote into its "
               f"input{'s' if len(which) > 1 else ''} {listed} in place: the values it was given "
               f"are not the ones it left behind")
    ev.emit(ev.Warning(ev.next_seq(), run_id, time.perf_counter_ns(), threading.get_ident(),
                       name, typ, None, message, "input_modified", after, src, HINT))


HINT = "wrapped functions must not modify their inputs: copy first (x = x.copy())"
