"""How an op's source location is shown: relative to the working directory.

``pyfunc-debug run script.py`` runs the script by its absolute path, as
``python script.py`` does (``__file__`` and ``co_filename`` absolute), so ops
record absolute sources; screens show them relative when they lie below the
working directory, as typed.
"""
from __future__ import annotations

import os

__all__ = ["relative_source"]


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
