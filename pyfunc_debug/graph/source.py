"""Where an op was created: the first stack frame outside this package."""
from __future__ import annotations

import os
import sys

from ..source_text import PACKAGE_DIR, USER_LIKE

__all__ = ["SourceLocation", "user_frame"]

_SKIP = (PACKAGE_DIR, os.path.dirname(os.__file__) + os.sep + "contextlib.py", "<frozen ")


class SourceLocation:
    """A (file, line, function) triple, formatted as ``file:line``."""

    __slots__ = ("filename", "lineno", "function")

    def __init__(self, filename: str, lineno: int, function: str):
        self.filename = filename
        self.lineno = lineno
        self.function = function

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"

    def __repr__(self) -> str:
        return f"SourceLocation({self.filename!r}, {self.lineno}, {self.function!r})"

    def to_json(self) -> list:
        return [self.filename, self.lineno, self.function]


UNKNOWN_SOURCE = SourceLocation("<unknown>", 0, "")


def user_frame(depth: int = 2) -> SourceLocation:
    """The innermost frame whose file is not part of pyfunc_debug."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return UNKNOWN_SOURCE
    while frame is not None:
        code = frame.f_code
        name = code.co_filename
        if not name.startswith(_SKIP) or name.startswith(USER_LIKE):
            return SourceLocation(name, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return UNKNOWN_SOURCE
