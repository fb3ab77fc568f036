"""What the terminal shows after the UI closes: how the program ended and what went wrong.

Like ``python`` after a crash, the UI must not take the failure with it: the
script's traceback (or one line for a run the user aborted), then a short
summary — runs, each failed op with its original exception line, each distinct
warning once (with the number of runs it came up in) and where an exported
trace went.
"""
from __future__ import annotations

from pyfunc_debug.errors import OpError
from pyfunc_debug.source_text import relative_source
from pyfunc_debug.trace.failures import original_line

__all__ = ["exit_summary", "exit_status", "ending", "distinct_warnings"]

MAX_LISTED = 5


def exit_status(result) -> int:
    """The exit status of what a target returned (an int, or a script's ``Outcome``)."""
    status = getattr(result, "status", result)
    return status if isinstance(status, int) else 0


def ending(result, model=None) -> str:
    """How a script ended, in a few words: the user's own exception line, not ours."""
    error = getattr(result, "error", None)
    from pyfunc_debug.script import abort_line   # not needed to import the UI
    if error is not None and abort_line(error):
        return abort_line(error)
    if error is not None:
        return f"{_original(error, model)} (exit status {exit_status(result)})"
    return f"exit status {exit_status(result)}"


def _original(error: BaseException, model) -> str:
    """``KeyError: 2 (op 'lr')`` for the op error that wraps it (ours chain the user's
    exception; a framework's keeps only its text, which the op's failure event had)."""
    cause = error
    while isinstance(cause, OpError) and cause.__cause__ is not None:
        cause = cause.__cause__
    op = getattr(error, "op", None)
    where = f" (op '{op.name}')" if getattr(op, "name", None) else ""
    if cause is not error:
        return f"{type(cause).__name__}: {cause}".splitlines()[0] + where
    failures = getattr(model, "failures", ())
    text = str(error)
    named = [f for f in failures if f"'{f.op}'" in text or f"node {f.op}" in text]
    # the failure the error is about: its own line is in the text (a framework op may
    # fail in several calls, the script sees one of them), else the last of that op
    said = next((f for f in reversed(named) if f.line and f.line in text),
                named[-1] if named else None)
    if said is not None:
        return f"{said.line} (op '{said.op}')"
    line = original_line(str(error))
    return f"{type(error).__name__}: {line}" if not line.startswith(type(error).__name__) \
        else line


def distinct_warnings(warnings) -> list:
    """(warning, runs it came up in) for each distinct (op, kind), in order of first
    appearance; the warning kept is the latest (its message is the most recent)."""
    seen: dict = {}
    for w in warnings:
        key = (w.op, w.kind, "" if w.op else w.message)
        runs = seen.get(key, (w, set()))[1]
        runs.add(w.run_id)
        seen[key] = (w, runs)
    return [(w, len(runs)) for w, runs in seen.values()]


def exit_summary(title: str, model, status: int, report: str = "", exported=(),
                 interrupted: bool = False, unfinished: bool = False,
                 target_status: int | None = None, notes=(), detached: bool = False) -> str:
    """The text to print; ``report`` is the program's traceback or abort line;
    ``target_status``: attached, the exit status the target's process gave; ``notes``:
    breakpoints that matched no op."""
    lines = [report] if report else []
    runs = f"{model.runs} run{'s' if model.runs != 1 else ''}"
    failed = len(model.failures)
    how = ("interrupted (Ctrl+C)" if interrupted else
           "quit before the script finished" if unfinished else
           f"the target's exit status {target_status}" if target_status is not None else
           "detached: the target runs on" if detached else   # this client's status is no one's
           f"exit status {status}")
    head = f"pyfunc-debug: {title}: {runs}"
    if failed:
        head += f", {failed} op error{'s' if failed != 1 else ''}"
    lines.append(f"{head}; {how}")
    for f in model.failures[:MAX_LISTED]:
        where = f", {relative_source(f.source)}" if f.source else ""   # as the UI showed it
        lines.append(f"  run {f.run}: op '{f.op}' ({f.op_type}{where}) failed: {f.line}")
        if f.error_type not in f.line:
            lines[-1] += f"  [{f.error_type}]"
    if failed > MAX_LISTED:
        lines.append(f"  … and {failed - MAX_LISTED} more")
    warnings = distinct_warnings(model.warnings)
    for w, n in warnings[:MAX_LISTED]:
        times = f" ({n} runs)" if n > 1 else ""
        lines.append(f"  warning{times}: {w.message}")
    if len(warnings) > MAX_LISTED:
        lines.append(f"  … and {len(warnings) - MAX_LISTED} more distinct warnings")
    for note in notes:
        lines.append(f"  note: {note}")
    for path, n in exported:
        lines.append(f"  trace: {n:,} events written to {path}")
    return "\n".join(lines)
