"""The replayed call beside the recorded one: outputs as ``diff`` compares them, and a verdict.

The verdict's first word says what changed: ``reproduced`` (the same exception
class raised at the same line), ``fixed`` (the recorded fault is gone: "fixed:
0 NaN, was 64"), ``still faulty`` or ``changed``; ``same`` when the outputs
agree with the recording.
"""
from __future__ import annotations

import os

import numpy as np

from .. import events as ev
from ..source_text import is_ours
from ..trace.diff import _compare_ops, _gist, _side_by_side
from ..trace.summary import summarize

__all__ = ["recorded_result", "new_result", "verdict", "side_by_side", "returned_values"]


def recorded_result(events, record):
    """The ``OpEnd``/``OpError`` the trace holds for the captured call (nearest by seq)."""
    best = None
    for e in events:
        if e.__class__ in (ev.OpEnd, ev.OpError) and e.op == record["op"] and \
                e.run_id == record["run_id"] and e.thread == record["thread"] and \
                e.parent is None:
            if best is None or abs(e.seq - record["seq"]) < abs(best.seq - record["seq"]):
                best = e
    return best


def returned_values(ret) -> list:
    """A wrapped function's result as a list of arrays (one per output)."""
    if ret is None:
        return []
    items = list(ret) if isinstance(ret, (list, tuple)) else [ret]
    return [np.asarray(x.numpy() if hasattr(x, "numpy") else x) for x in items]


def new_result(record, outcome, check_error=None):
    """The replayed call as an event like the recorded one (``OpEnd`` or ``OpError``)."""
    if outcome.error is not None or check_error is not None:
        err = outcome.error if outcome.error is not None else check_error
        file, line = outcome.where
        at = f" (at {os.path.basename(file)}:{line})" if file else ""
        return ev.OpError(0, record["run_id"], 0, 0, record["op"], record["op_type"], None,
                          type(err).__name__, f"{type(err).__name__}: {err}{at}")
    sums = tuple(summarize(v, 0) for v in returned_values(outcome.returned))
    return ev.OpEnd(0, record["run_id"], 0, 0, record["op"], record["op_type"], None, 0,
                    (), sums)


def _same_place(record, outcome) -> bool:
    file, line = outcome.where
    rf, rl = record.get("error_file"), record.get("error_line")
    if rf is None or file is None:
        return False
    return rl == line and os.path.basename(rf) == os.path.basename(file)


def _recorded_class(record) -> str:
    text = record.get("original_error") or ""
    head = text.split(":", 1)[0].strip()
    return head.rsplit(".", 1)[-1] if head.replace(".", "").replace("_", "").isalnum() \
        else (record.get("error_type") or "")


def verdict(record, recorded, outcome, check_error=None, wrote=None) -> tuple[str, bool]:
    """(one line, whether the call is still faulty). ``wrote``: the inputs the replayed
    call wrote into (checked for an ``input_modified`` fault)."""
    fault = record["fault"]
    if outcome.error is not None:
        err = outcome.error
        file, line = outcome.where
        here = f"{os.path.basename(file)}:{line}" if file else "?"
        if fault == "error" and type(err).__name__ == _recorded_class(record):
            if _same_place(record, outcome):
                return f"reproduced: {type(err).__name__} at {here}, as recorded", True
            return (f"reproduced: {type(err).__name__}, now at {here} (recorded at "
                    f"{os.path.basename(str(record.get('error_file')))}:"
                    f"{record.get('error_line')})"), True
        was = record.get("original_error") or fault
        return f"still faulty: {type(err).__name__} at {here} (was: {was})", True
    if check_error is not None:
        first = str(check_error).splitlines()[0] if str(check_error) else ""
        return f"still faulty: the result fails the op's output check ({first})", True
    outs = recorded.outputs if type(recorded) is ev.OpEnd else ()
    sums = new_result(record, outcome).outputs
    if fault == "error":
        return (f"fixed: returned {len(sums)} output{'s' if len(sums) != 1 else ''}, was "
                f"{record.get('original_error') or record.get('error_type')}"), False
    if fault == "input_modified" and wrote is not None:
        if wrote:
            return (f"still faulty: it wrote into its input{'s' if len(wrote) > 1 else ''} "
                    f"{', '.join(map(str, wrote))} again"), True
        return "fixed: it no longer writes into its inputs", False
    if fault == "non_finite":
        now = sum(s.nan for s in sums), sum(s.inf for s in sums)
        if type(recorded) is ev.OpEnd:
            was = sum(s.nan for s in outs), sum(s.inf for s in outs)
            text = ", ".join(f"{n} {k}, was {w}" for n, w, k in
                             ((now[0], was[0], "NaN"), (now[1], was[1], "Inf")) if n or w) or \
                f"0 NaN, was {was[0]}"
        else:   # the recorded result is not in the trace (a kill): no "was" to give
            text = ", ".join(f"{n} {k}" for n, k in ((now[0], "NaN"), (now[1], "Inf"))
                             if n) or "0 NaN"
            text += " (the trace holds no recorded result to compare)"
        faulty = bool(now[0] or now[1])
        return f"{'still faulty' if faulty else 'fixed'}: {text}", faulty
    if recorded is None or type(recorded) is not ev.OpEnd:
        return "ran without error (the recording has no outputs to compare)", False
    diff = _compare_ops(recorded, new_result(record, outcome), 1e-5, 1e-8)
    if diff is None:
        return f"same: the outputs agree with the recording (its fault was {fault})", True
    return f"changed: {diff[0]} (the recorded fault was {fault})", False


def side_by_side(recorded, now, record=None) -> list:
    """Lines comparing each output (A: recorded, B: this replay), diff's layout."""
    if recorded is None:
        return ["(the trace holds no result for this call: recorded up to a kill?)"]
    if type(recorded) is ev.OpError and type(now) is ev.OpError:
        at = ""
        if record is not None and record.get("error_file") and \
                not is_ours(os.path.abspath(record["error_file"])):
            at = f" (at {os.path.basename(record['error_file'])}:{record.get('error_line')})"
        return [f"  A  failed: {_gist(recorded.message)}{at}", f"  B  failed: {_gist(now.message)}"]
    lines = []
    ra = recorded.outputs if type(recorded) is ev.OpEnd else ()
    rb = now.outputs if type(now) is ev.OpEnd else ()
    n = max(len(ra), len(rb), 1)
    for i in range(n):
        sa = ra[i] if i < len(ra) else None
        sb = rb[i] if i < len(rb) else None
        if n > 1 or sa is not None or sb is not None:
            lines.append(f"output {i}:" if n > 1 else "output:")
        lines += _side_by_side(sa, sb, (recorded, now), "(did not run)")
    return lines
