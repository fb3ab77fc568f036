"""An op's error as its user reads it: their exception line and frame first, ours after.

An op error's text wraps the user's exception in ours ("Graph execution error",
"Detected at node", our kernel's frames); the line that explains the bug
(``KeyError: 2``) and the line of the user's code that raised it come first.
"""
from __future__ import annotations

import os
import re
import traceback
from typing import NamedTuple

from pyfunc_debug.source_text import is_ours, is_users
from pyfunc_debug.trace.failures import original_line

__all__ = ["UserError", "user_error", "error_text"]

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\s*$')
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep   # the UI (from a clone: tui/)


class UserError(NamedTuple):
    """``line``: the user's exception line; ``frame``: ``file:line in func(): source`` of
    the user's innermost frame in the traceback ("" when it holds none); ``text``: all."""

    line: str
    frame: str
    text: str


def error_text(error: BaseException | None) -> str:
    """The text of an error a pause holds: an op error's message (it already holds the
    user's traceback), else the exception with its traceback (a framework's callback)."""
    if error is None:
        return ""
    from pyfunc_debug.script import abort_line   # not needed to import the UI
    aborted = abort_line(error)   # q in pdb, Ctrl+C: the user's act, not a failure to explain
    if aborted is not None:
        return aborted
    message = getattr(error, "message", None)
    if isinstance(message, str) and message:
        return message
    remote = getattr(error, "type_name", None)   # an attached process's error: text only
    if remote is not None:
        text = str(error)
        return text if "\n" in text.strip() else f"{remote}: {text}"
    if error.__traceback__ is not None:   # the framework's and the user's frames, not ours
        from pyfunc_debug.external_calls import traceback_without
        shown = traceback_without(error.__traceback__, is_ours)
        return "".join(traceback.format_exception(type(error), error, shown)).rstrip()
    return "".join(traceback.format_exception_only(error)).rstrip()


def user_error(text: str) -> UserError:
    """The user's exception line and innermost frame of ``text`` (an op error's message
    or a formatted traceback)."""
    text = text.strip()
    line = original_line(text)
    frame = ""
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        m = _FRAME.match(raw)
        if m is None or not _is_users(m["file"]):
            continue
        source = next((s.strip() for s in lines[i + 1:i + 3] if s.strip()
                       and not set(s.strip()) <= set("^~") and not _FRAME.match(s)), "")
        frame = f"{_short(m['file'])}:{m['line']} in {m['func']}()" + \
            (f": {source}" if source else "")
    return UserError(line, frame, text)


def _is_users(path: str) -> bool:
    """A file of the user's code: not ours (bar the demo and examples), not a library's."""
    if path.startswith("<"):
        return False
    path = os.path.abspath(path)
    return not path.startswith(_HERE) and is_users(path)


def _short(path: str) -> str:
    """``path`` relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
