"""Captured values beside a ``.jsonl`` trace: one ``.npy`` file per value, by key.

Written crash-safe: to a hidden temporary name, then renamed, so a file under
its final name is always complete (a kill leaves at most a stray ``.tmp``,
which nothing reads). Read defensively: only a referenced key's file, only if
it is a regular file (a FIFO would block ``open`` for ever), never with pickle,
and only after checking that the size its header claims is the file's size (a
200-byte file claiming 745 GiB must not reach an allocation).
"""
from __future__ import annotations

import math
import os
import re
import stat

import numpy as np
from numpy.lib import format as npy

__all__ = ["values_dir", "write_value", "read_value", "valid_key", "BadValue"]

_KEY = re.compile(r"[0-9A-Za-z_-]{1,64}")  # no dots or separators: a key never leaves the folder


class BadValue(Exception):
    """A value file that cannot be used; the message says why."""


def values_dir(path) -> str:
    return f"{os.fspath(path)}.values"


def valid_key(key) -> bool:
    return type(key) is str and _KEY.fullmatch(key) is not None


def write_value(folder: str, key: str, value) -> None:
    """Store ``value`` as ``<folder>/<key>.npy`` (temporary name, then rename)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "O":
        arr = arr.astype(bytes)  # object arrays would need pickle
    tmp = os.path.join(folder, f".{key}.npy.tmp")
    with open(tmp, "wb") as f:
        npy.write_array(f, arr, allow_pickle=False)
    os.replace(tmp, os.path.join(folder, key + ".npy"))


def _open_regular(path: str):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise BadValue("missing") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadValue("not a regular file")
    # O_NONBLOCK: if a FIFO replaced the file since lstat, open still returns at once
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    f = os.fdopen(os.open(path, flags), "rb")
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        f.close()
        raise BadValue("not a regular file")
    return f


def _check_header(f) -> None:
    version = npy.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = npy.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, _, dtype = npy.read_array_header_2_0(f)
    else:
        raise BadValue(f"unsupported .npy version {version}")
    if dtype.hasobject:
        raise BadValue(f"dtype {dtype} holds Python objects (loading it would need pickle)")
    claimed = f.tell() + math.prod(shape) * dtype.itemsize
    size = os.fstat(f.fileno()).st_size
    if claimed != size:
        raise BadValue(f"header claims {claimed:,} bytes, the file has {size:,} "
                       f"({'torn' if size < claimed else 'trailing data'})")


def read_value(folder: str, key: str):
    """The array stored under ``key``; ``BadValue`` saying why it cannot be read."""
    if not valid_key(key):
        raise BadValue(f"invalid value key {str(key)[:40]!r}")
    f = _open_regular(os.path.join(folder, key + ".npy"))
    with f:
        try:
            _check_header(f)
            f.seek(0)
            arr = npy.read_array(f, allow_pickle=False)
        except BadValue:
            raise
        except (ValueError, OSError, EOFError, TypeError, SyntaxError) as e:
            raise BadValue(f"corrupt: {e}") from None
    if arr.dtype.kind == "S":
        arr = arr.astype(object)
    return arr[()] if arr.ndim == 0 else arr
