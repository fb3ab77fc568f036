"""Diagnostics of a framework's callback calls (SPEC §4a, §10a): from their summaries.

``CallbackRun`` (``external_calls``) hands each recorded call's summaries here
after the call, on the call's thread, before the pause check after it (so
``break_on(on_warning=True)`` pauses at that call):

- ``non_finite``: the call made NaN/Inf from finite inputs;
- ``shape_change``: output shapes unlike those of the op's first call on inputs
  of the same shapes, or the same values in another rank;
- ``input_modified``: a ``numpy_function`` wrote into the arrays TF handed it
  (``mark`` before the call, compared after it).

Each message names the call's inputs: with one run per program, the op's row
shows its latest call, so the warning must say which call it was about. Each
kind is reported for at most ``TOLD`` calls of an op per run. Summaries may be
pending (``trace.pending``): they are read by index, and settled only where a
message needs their counts or preview.
"""
from __future__ import annotations

import threading
import time

from . import events as ev
from .runtime.diagnose import HINTS, WATCHED_TYPES
from .runtime.modified import HINT as _MODIFY_HINT
from .trace.pending import settle
from .trace.summary import PREVIEW_ITEMS, SAMPLE, ValueSummary, sample_bytes, summarize

__all__ = ["Diagnostics", "mark", "TOLD"]

_now = time.perf_counter_ns
# a pending summary (``trace.pending``) is a plain tuple laid out as a summary: read by index
_SHAPE, _SIZE, _NAN, _INF = (ValueSummary._fields.index(f)
                             for f in ("shape", "size", "nan", "inf"))
TOLD = 10          # diagnostics of one kind per op and run: a map over 2,000 samples that
                   # all make NaN must not bury the log (the first calls name the samples)
_EXACT_BYTES = 1 << 16   # inputs up to this size are compared whole for a write into them
_HINTS = dict(HINTS, input_modified=_MODIFY_HINT)
_DRIFT_HINT = ("return one shape for every call (pad, or reshape as the first calls did), "
               "or check that what consumes the output accepts each shape")


def mark(a) -> bytes:
    """What a write into array ``a`` would change: its bytes, or for a big one the strided
    sample its summary reads (a write that misses the sample goes unseen)."""
    return a.tobytes() if a.nbytes <= _EXACT_BYTES or a.size <= SAMPLE else sample_bytes(a)


def _called_with(ins) -> str:
    """The call's inputs in a few words (which sample it was: ``in 0 = 1234 (int64)``)."""
    ins = [settle(s) for s in ins]   # a pending summary has no preview yet
    parts = [f"in {j} = {s.preview} ({s.dtype})" if s.size <= PREVIEW_ITEMS and s.preview
             else f"in {j} {s.short()}" for j, s in enumerate(ins[:4])]
    if len(ins) > 4:
        parts.append(f"and {len(ins) - 4} more")
    return "; ".join(parts) if parts else "no inputs"


def _shape_of(s) -> tuple:
    return s[_SHAPE] if s.__class__ is tuple else s.shape


def _get(s, i):
    """Field ``i`` of a summary, pending (a tuple) or settled."""
    return s[i] if s.__class__ is tuple else getattr(s, ValueSummary._fields[i])


def _shape(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _dims(shapes) -> str:
    return ", ".join(map(_shape, shapes)) or "nothing"


class Diagnostics:
    """The diagnostics of one run of callbacks: ``diagnose`` after each recorded call,
    ``written`` when it was handed writable inputs. A new run gets a new one (the counts
    of what was told start again)."""

    def __init__(self):
        self._told: dict = {}      # (kind, op name) -> diagnostics emitted this run

    def diagnose(self, op, run_id, ins, outs) -> None:
        """Written for speed (every call of every callback): the common case, one value in
        and one out, costs a few comparisons. A pending summary (a plain tuple) is read by
        index, a settled one (a struct, whose fields are slots) by name."""
        o = outs[0]
        if o.__class__ is tuple:
            bad, b = o[_NAN] or o[_INF], o[_SHAPE]
        else:
            bad, b = o.nan or o.inf, o.shape
        if bad or len(outs) > 1:
            self._non_finite(op, run_id, ins, outs)
        if len(ins) == 1 and len(outs) == 1:
            i = ins[0]
            a = i[_SHAPE] if i.__class__ is tuple else i.shape
            shapes = ((a,), (b,))
        else:
            a = _shape_of(ins[0]) if ins else b
            shapes = (tuple(map(_shape_of, ins)), tuple(map(_shape_of, outs)))
        if b != a and op.type in WATCHED_TYPES:
            self._rank(op, run_id, ins[0], o)
        memo = op.memo    # [run id, (input shapes, output shapes) of its first call on those]
        if not memo or memo[1] != shapes or memo[0] != run_id:
            self._drift(op, run_id, memo, shapes, ins)

    def _non_finite(self, op, run_id, ins, outs) -> None:
        for i, s in enumerate(outs):
            if _get(s, _NAN) or _get(s, _INF):   # (a pending one holds neither)
                ins = [settle(x) for x in ins]   # a pending input's counts: taken now
                if not any(x.nan or x.inf for x in ins):
                    what = ", ".join(f"{n} {k}" for n, k in ((s.nan, "NaN"), (s.inf, "Inf")) if n)
                    self._warn(op, run_id, "non_finite", f"op '{op.name}' ({op.type}) made "
                               f"{what} in output {i} from finite inputs, in its call with "
                               f"{_called_with(ins)}")
                return

    def _drift(self, op, run_id, memo, shapes, ins) -> None:
        """Output shapes unlike those of the op's first call in this run on inputs of the
        same shapes; a new input shape (e.g. a function traced again) may well give a new
        output shape: it starts anew."""
        if not memo or memo[0] != run_id or memo[1][0] != shapes[0]:
            memo[:] = [run_id, shapes]
            return
        self._warn(op, run_id, "shape_change", f"op '{op.name}' ({op.type}) returned shape "
                   f"{_dims(shapes[1])} in its call with {_called_with(ins)}, where its earlier "
                   f"calls on inputs of the same shapes returned {_dims(memo[1][1])}",
                   hint=_DRIFT_HINT)

    def _rank(self, op, run_id, a, b) -> None:
        """As for our own ops: the same values in another rank than the input's."""
        size, before = _get(a, _SIZE), _get(a, _SHAPE)
        shape = _get(b, _SHAPE)
        if _get(b, _SIZE) == size and len(shape) != len(before) and size > 1:
            self._warn(op, run_id, "shape_change", f"op '{op.name}' ({op.type}) returned shape "
                       f"{_shape(shape)} for input shape {_shape(before)}: the same values "
                       f"in another rank, which broadcasting downstream can silently enlarge "
                       f"(e.g. to {_shape((size, size))})")

    def written(self, op, run_id, ins, inputs, marks, cap) -> None:
        """``input_modified`` when the call wrote into an input (``marks`` before it)."""
        written = [j for j, m in enumerate(marks) if m is not None and mark(inputs[j]) != m]
        if not written:
            return
        after = [settle(s) for s in ins]
        for j in written:
            after[j] = summarize(inputs[j], cap)
        which = ", ".join(map(str, written))
        self._warn(op, run_id, "input_modified", f"op '{op.name}' ({op.type}) wrote into its "
                   f"input{'s' if len(written) > 1 else ''} {which} in place, in its call with "
                   f"{_called_with(ins)}: the values it was given are not the ones it left "
                   "behind", tuple(after))

    def _warn(self, op, run_id, kind, message, inputs=(), hint=None) -> None:
        key = (kind, op.name)
        told = self._told.get(key, 0) + 1
        if told > TOLD:
            return
        self._told[key] = told
        if told == TOLD:
            message += f" (its {TOLD}th such call: later ones are not reported)"
        ev.emit(ev.Warning(ev.next_seq(), run_id, _now(), threading.get_ident(), op.name,
                           op.type, None, message, kind, inputs, op.source,
                           _HINTS.get(kind, "") if hint is None else hint))
