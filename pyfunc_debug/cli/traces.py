"""The commands that read trace files: ``view`` (the UI), ``diff`` and ``export``."""
from __future__ import annotations

import os
import shlex
import sys
import warnings

from .checks import UsageError, input_file, output_file, why
from .terminal import console_only, not_a_tty, tui

__all__ = ["cmd_view", "cmd_diff", "cmd_export", "first_divergence"]


def cmd_view(args) -> int:
    from ..trace.jsonl import TraceFormatError, load_trace
    if args.trace.endswith(".json"):
        raise UsageError(f"{args.trace} is a Chrome trace: open it in https://ui.perfetto.dev; "
                         "view replays .jsonl traces (pyfunc-debug trace -o out.jsonl)")
    input_file(args.trace)
    if args.diff:
        input_file(args.diff)
    _need_terminal(args.trace)
    size = os.path.getsize(args.trace)
    if size > 16 << 20:
        print(f"pyfunc-debug view: loading {args.trace} ({size >> 20} MB)…", file=sys.stderr)
    try:
        with warnings.catch_warnings(record=True) as caught:   # shown in the UI, below
            warnings.simplefilter("always")
            trace = load_trace(args.trace)  # fail here, with the file and line, not in the UI
    except (OSError, TraceFormatError) as e:
        raise UsageError(str(e)) from None
    position, note = None, ""
    if args.diff:
        position, note = first_divergence(args.trace, trace, args.diff)
    # a torn last line (a recording cut short, or still being written): the view's status
    # says it, where it is seen (a line printed now would be under the UI)
    note = "  │  ".join([str(w.message) for w in caught] + ([note] if note else []))
    ui = tui()
    return ui.run_app(ui.view_app(args.trace, trace=trace, position=position, note=note))


def _need_terminal(path: str) -> None:
    """The UI needs a terminal: without one it would write escape codes and wait for keys
    that never come. Say so, and how to read the trace instead."""
    reason = not_a_tty() or console_only()
    if reason is None:
        return
    raise UsageError(
        f"needs a terminal ({reason}); to read the trace without the UI use: "
        f"pyfunc-debug export {shlex.quote(path)} -o - (one CSV row per op call), or "
        f"python -c \"import pyfunc_debug as pfd; print(*pfd.load_trace({path!r}), sep='\\n')\"")


def first_divergence(path, events, other):
    """(position in ``events`` just after the first op that differs from ``other``, a note)."""
    from ..trace.diff import BadTrace, diff_traces
    try:
        found = diff_traces(events, other, labels=(path, other))
    except (BadTrace, OSError, ValueError) as e:
        raise UsageError(str(e)) from None
    if found is None:
        return None, f"no difference from {other}"
    mine = found.events[0] if found.events else None
    runs = [i for i, e in enumerate(events) if type(e).__name__ == "RunStart"]
    position = runs[found.run] + 1 if found.run < len(runs) else len(events)
    if mine is not None:
        position = next((i + 1 for i, e in enumerate(events) if e.seq == mine.seq
                         and type(e) is type(mine)), position)
    where = f"run {found.run + 1}" + (f", op '{found.op}'" if found.op else "")
    return position, f"first difference from {other} at {where}: {found.reason}"


def cmd_diff(args) -> int:
    from ..trace.diff import BadTrace, run_diff
    input_file(args.a)
    input_file(args.b)
    try:
        return run_diff(args.a, args.b, rtol=args.rtol, atol=args.atol)
    except BadTrace as e:
        raise UsageError(str(e)) from None


def cmd_export(args) -> int:
    input_file(args.trace)
    if args.output not in (None, "-"):
        output_file(args.output)
    from ..trace.export import ExportError, export_trace  # pandas/pyarrow only if asked
    try:
        path, rows = export_trace(args.trace, args.format, args.output)
    except ExportError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"cannot write {e.filename or args.output}: {why(e)}") from None
    sys.stdout.flush()
    where = "stdout" if path == "-" else path
    print(f"pyfunc-debug export: wrote {rows} row{'' if rows == 1 else 's'} to {where}",
          file=sys.stderr)
    return 0
