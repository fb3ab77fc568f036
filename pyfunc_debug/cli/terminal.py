"""Whether this terminal can show the UI, and the UI package, imported only on demand."""
from __future__ import annotations

import importlib
import os
import sys

__all__ = ["console_only", "not_a_tty", "tui"]


def tui():
    """The TUI's launcher, imported only here: the core never depends on Textual."""
    return importlib.import_module("pyfunc_debug.tui.launch")


def not_a_tty() -> str | None:
    """Which of stdin/stdout is not a terminal (``"stdin is not a tty"``), or None."""
    bad = [name for name, f in (("stdin", sys.stdin), ("stdout", sys.stdout))
           if f is None or not f.isatty()]
    if not bad:
        return None
    return f"{bad[0]} is not a tty" if len(bad) == 1 else "stdin and stdout are not ttys"


def console_only() -> str | None:
    """Why the UI cannot run in this terminal (then the console frontend is used), or None."""
    if not_a_tty():
        return "not a terminal"
    if os.environ.get("TERM", "") in ("dumb", "unknown", ""):
        return f"TERM={os.environ.get('TERM', '')!r} cannot show the UI"
    return None
