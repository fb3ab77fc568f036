"""What failed in a recording: the first failing op and the user's exception line.

Shared by the UI (status bar, exit summary) and the pytest plugin's report.
"""
from __future__ import annotations

from .. import events as ev

__all__ = ["STOPPED", "original_line", "first_failure"]

# An op ended by these did not fail: the run was stopped (q, Ctrl+C, sys.exit)
STOPPED = ("CancelledError", "PdbQuit", "KeyboardInterrupt", "SystemExit", "BdbQuit")


def original_line(message: str) -> str:
    """The user's exception line in an op error's message (``KeyError: 2``)."""
    lines = [l for l in message.splitlines() if l.strip()]
    return next((l for l in lines if not l.startswith(
        ("Graph execution", "Detected at", "Function execution", "Traceback", " "))),
        lines[0] if lines else "")


def first_failure(events) -> ev.OpError | None:
    """The first ``OpError`` event that is a failure (not a stopped run), or ``None``.

    Eager ops inside a ``py_function`` report before their parent, so this is
    the op where the error started.
    """
    return next((e for e in events
                 if type(e) is ev.OpError and e.error_type not in STOPPED), None)
