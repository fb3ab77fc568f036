"""Usage errors, and the file checks that raise them before anything starts.

A file the command cannot read or write is one line naming the path (exit 2),
found before the script runs or the UI opens, not a traceback halfway through.
"""
from __future__ import annotations

import errno
import os
import tempfile

__all__ = ["UsageError", "input_file", "output_file", "why"]


class UsageError(Exception):
    """Bad command-line input: ``main`` prints it after the command's name and exits 2."""


def why(error: OSError) -> str:
    """An ``OSError``'s reason in words, without the ``[Errno N]`` and the repeated path."""
    return error.strerror or errno.errorcode.get(error.errno or 0, "") or str(error)


def input_file(path: str, what: str = "trace") -> str:
    """``path`` if it is a readable regular file, else a ``UsageError`` naming it."""
    if not os.path.exists(path):
        raise UsageError(f"{path}: No such file or directory")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory, not a {what} file")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise UsageError(f"cannot read {path}: {why(e)}") from None
    return path


def output_file(path: str) -> str:
    """``path`` if a file can be written there, else a ``UsageError`` naming it.

    Probed by creating a scratch file beside it (the trace writers write a
    temporary file in the same folder and rename it into place); nothing is
    left behind, so a command that then fails to start leaves no file.
    """
    folder = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory; -o wants a file name inside it")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise UsageError(f"{path} exists and is not a regular file")
    if not os.path.isdir(folder):
        problem = (f"{folder} is not a directory" if os.path.exists(folder) else
                   f"no such directory {folder}")
        raise UsageError(f"cannot write {path}: {problem}")
    try:
        fd, scratch = tempfile.mkstemp(prefix=".pyfunc-debug-", suffix=".tmp", dir=folder)
    except OSError as e:
        raise UsageError(f"cannot write {path}: cannot create a file in {folder} "
                         f"({why(e)})") from None
    os.close(fd)
    os.unlink(scratch)
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise UsageError(f"cannot write {path}: permission denied")
    return path
