"""An event as the log's one line of text (``format_event``), and what the log may leave
to format until it shows the line (``holds_values``)."""
from __future__ import annotations

import re

from pyfunc_debug import events as ev
from pyfunc_debug.trace.failures import STOPPED, original_line
from pyfunc_debug.trace.pending import settled

from .timing import duration_text

__all__ = ["format_event", "stopped_text", "as_settled", "holds_values"]


# What our abort says, also inside a framework's error that kept only its text (--tf)
_ABORT_TEXTS = ("aborted from pdb (quit) in op", "aborted from the debugger at op")
_ABORTED_AT = re.compile(r"aborted from (?:pdb \(quit\) in|the debugger at) op '([^']*)'")


def stopped_text(e) -> str | None:
    """For an ``OpError`` that is the user's stop (q in pdb, Ctrl+C, exit), its one line
    ("run aborted at op 'x' (q in pdb)"), never a traceback; else ``None``."""
    if e.error_type == "SystemExit":
        return original_line(e.message) or "SystemExit"
    if e.error_type == "KeyboardInterrupt":
        return f"run aborted at op '{e.op}' (Ctrl+C)"
    if e.error_type in STOPPED or any(t in e.message for t in _ABORT_TEXTS):
        how = " (q in pdb)" if "pdb (quit)" in e.message or "Quit" in e.error_type else ""
        named = _ABORTED_AT.search(e.message)   # a cancelled sibling names the op paused at
        return f"run aborted at op '{named.group(1) if named else e.op}'{how}"
    return None


def format_event(e, timings: bool = True, duration: str | None = None,
                 ending: str | None = None) -> str:
    """One log line per event (``timings=False``: no durations, for stable screens).

    ``duration`` replaces the event's wall time (the model's, without pauses);
    ``ending`` a failed run's error (the user's original exception line)."""
    cls = type(e)

    def dur(ns):
        return ((duration if duration is not None else duration_text(ns)) + " ") \
            if timings else ""
    indent = "    " if e.parent else "  "
    if cls is ev.OpEnd:
        out = e.outputs[0].short() if e.outputs else ""
        return f"{e.seq:>8} run {e.run_id:<4}{indent}done  {e.op} ({e.op_type}) {dur(e.duration_ns)}{out}"
    if cls is ev.OpStart:
        return f"{e.seq:>8} run {e.run_id:<4}{indent}start {e.op} ({e.op_type})"
    if cls is ev.OpError:
        stopped = stopped_text(e)
        word = "ABORTED" if stopped is not None else "ERROR"
        first = stopped if stopped is not None else original_line(e.message)
        return f"{e.seq:>8} run {e.run_id:<4}  {word} {e.op} ({e.op_type}): {first[:120]}"
    if cls is ev.RunStart:
        what = f"{e.kind} {e.name}".strip()
        count = f": {len(e.ops)} ops" if e.ops else ""
        return f"{e.seq:>8} run {e.run_id:<4}start {what}{count}"
    if cls is ev.RunEnd:
        error = ending if ending is not None else (e.error or "")
        return (f"{e.seq:>8} run {e.run_id:<4}end   {'ok' if e.ok else 'FAILED'} "
                f"{dur(e.duration_ns)}" + ("" if e.ok else error))
    if cls is ev.BreakpointHit:
        return f"{e.seq:>8} run {e.run_id!s:<4}  PAUSE {e.when} {e.op} ({e.op_type}) {e.breakpoint}"
    if cls is ev.Warning:
        return f"{e.seq:>8} WARNING {e.op}: {e.message[:160]}"
    return f"{getattr(e, 'seq', '?'):>8} {cls.__name__}"


def holds_values(e) -> bool:
    """An op end holds a captured value (the log keeps no array for a line unshown)."""
    for s in e.inputs + e.outputs:
        if s.__class__ is not tuple and s.value is not None:
            return True
    return False


def as_settled(e):
    """``e``, a ``PendingOpEnd`` made an ``OpEnd`` (its summaries taken)."""
    one = [e]
    settled(one)
    return one[0]
