"""Source locations: which files are ours, and how an op's is shown.

``is_ours``: pyfunc-debug's own code, whose frames a user is not shown (an op's
"created at", pdb's stack, a traceback); the demo and the shipped examples are in the
package but written as users write (``USER_LIKE``), so their lines are the user's.

``relative_source``: ``pyfunc-debug run script.py`` runs the script by its absolute
path, as ``python script.py`` does (``__file__`` and ``co_filename`` absolute), so ops
record absolute sources; screens show them relative when they lie below the
working directory, as typed.
"""
from __future__ import annotations

import os

__all__ = ["relative_source", "is_ours", "PACKAGE_DIR", "USER_LIKE"]

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# ours, written as users write (installed, the examples are pyfunc_debug/examples)
USER_LIKE = (PACKAGE_DIR + "demo.py", os.path.join(PACKAGE_DIR + "examples", ""))


def is_ours(filename: str) -> bool:
    """Whether ``filename`` (absolute, as ``co_filename`` is) is pyfunc-debug's own code."""
    return filename.startswith(PACKAGE_DIR) and not filename.startswith(USER_LIKE)


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
