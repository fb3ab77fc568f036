"""Source locations: which files are ours, and how an op's is shown.

``is_ours``: pyfunc-debug's own code, whose frames a user is not shown (an op's
"created at", pdb's stack, a traceback); the demo and the shipped examples are in the
package but written as users write (``USER_LIKE``), so their lines are the user's.

``is_users``: the user's own code, neither ours nor a library's (the standard
library, an installed package): where an error's line of the user's is looked for.

``launcher_files`` and ``without_frames_of``: under our command, the frames that
launched the program (the console script, runpy) are not the program's either; a
framework's error that quotes the whole stack in its message (JAX's
``JaxRuntimeError``) is shown without them, as the program run by python alone.

``relative_source``: ``pyfunc-debug run script.py`` runs the script by its absolute
path, as ``python script.py`` does (``__file__`` and ``co_filename`` absolute), so ops
record absolute sources; screens show them relative when they lie below the
working directory, as typed.
"""
from __future__ import annotations

import os
import re
import sys
import sysconfig

__all__ = ["relative_source", "is_ours", "is_users", "PACKAGE_DIR", "USER_LIKE",
           "launcher_files", "without_frames_of"]

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# ours, written as users write (installed, the examples are pyfunc_debug/examples)
USER_LIKE = (PACKAGE_DIR + "demo.py", os.path.join(PACKAGE_DIR + "examples", ""))


def is_ours(filename: str) -> bool:
    """Whether ``filename`` (absolute, as ``co_filename`` is) is pyfunc-debug's own code."""
    return filename.startswith(PACKAGE_DIR) and not filename.startswith(USER_LIKE)


_LIBRARY = (sysconfig.get_path("stdlib") + os.sep, "<frozen")
_INSTALLED = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def is_users(filename: str) -> bool:
    """Whether ``filename`` (absolute) is the user's own code: not ours (the demo and the
    examples are the user's), not the standard library's, not an installed package's."""
    if filename.startswith(USER_LIKE):
        return True
    if filename.startswith(PACKAGE_DIR) or filename.startswith(_LIBRARY):
        return False
    return not any(part in filename for part in _INSTALLED)


def launcher_files() -> frozenset:
    """Under our command (its frames on the stack now), the files of the frames that
    launched the program and are not its own: runpy's, and the console script (or
    ``python -m pyfunc_debug``'s runpy) that started the command. Else none."""
    import runpy
    frame, outermost, ours = sys._getframe(), None, False
    cli = os.path.join(PACKAGE_DIR, "cli", "")
    while frame is not None:
        ours = ours or frame.f_code.co_filename.startswith(cli)
        outermost, frame = frame, frame.f_back
    if not ours:
        return frozenset()
    return frozenset({"<frozen runpy>", runpy.__file__, outermost.f_code.co_filename})


# a stack entry as Python's tracebacks write it, and the source line that may follow it
_FRAME_LINE = re.compile(r'^ *File "([^"]+)", line \d+, in .*\n(?: {4,}\S.*\n)?', re.M)


def without_frames_of(text: str, files: frozenset) -> str:
    """``text`` (a formatted traceback, a message quoting one) without its stack entries
    in our files or ``files``."""
    def keep(m):
        name = m.group(1)
        return "" if name in files or is_ours(os.path.abspath(name)) else m.group(0)
    return _FRAME_LINE.sub(keep, text)


def relative_source(source: str) -> str:
    """``file:line`` relative to the working directory when it is below it."""
    path, sep, where = source.partition(" (on ")  # "(on worker ADDRESS pid N)": a remote op
    file, _, line = path.rpartition(":")
    if not os.path.isabs(file):
        return source
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return source
    return (f"{rel}:{line}" if not rel.startswith("..") else path) + sep + where
