"""What the terminal shows after the UI closes: how the program ended and what went wrong.

Like ``python`` after a crash, the UI must not take the failure with it: the
script's traceback (or one line for a run the user aborted), then a short
summary — runs, each failed op with its original exception line, warnings and
where an exported trace went.
"""
from __future__ import annotations

__all__ = ["exit_summary"]

MAX_LISTED = 5


def exit_summary(title: str, model, status: int, report: str = "", exported=(),
                 interrupted: bool = False, unfinished: bool = False) -> str:
    """The text to print; ``report`` is the program's traceback or abort line."""
    lines = [report] if report else []
    runs = f"{model.runs} run{'s' if model.runs != 1 else ''}"
    failed = len(model.failures)
    how = ("interrupted (Ctrl+C)" if interrupted else
           "quit before the script finished" if unfinished else f"exit status {status}")
    head = f"pyfunc-debug: {title}: {runs}"
    if failed:
        head += f", {failed} op error{'s' if failed != 1 else ''}"
    lines.append(f"{head}; {how}")
    for f in model.failures[:MAX_LISTED]:
        where = f", {f.source}" if f.source else ""
        lines.append(f"  run {f.run}: op '{f.op}' ({f.op_type}{where}) failed: {f.line}")
        if f.error_type not in f.line:
            lines[-1] += f"  [{f.error_type}]"
    if failed > MAX_LISTED:
        lines.append(f"  … and {failed - MAX_LISTED} more")
    for w in model.warnings[:MAX_LISTED]:
        lines.append(f"  warning: {w.message}")
    if len(model.warnings) > MAX_LISTED:
        lines.append(f"  … and {len(model.warnings) - MAX_LISTED} more warnings")
    for path, n in exported:
        lines.append(f"  trace: {n:,} events written to {path}")
    return "\n".join(lines)
