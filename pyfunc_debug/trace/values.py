"""Captured values beside a ``.jsonl`` trace: one ``.npy`` file per value, by key.

Written crash-safe: to a hidden temporary name, then renamed, so a file under
its final name is always complete (a kill leaves at most a stray ``.tmp``,
which nothing reads). Read defensively: only a referenced key's file, only if
it is a regular file (a FIFO would block ``open`` for ever), never with pickle,
and only after checking that the size its header claims is the file's size (a
200-byte file claiming 745 GiB must not reach an allocation) and that its dtype
is one ``write_value`` writes. Whatever is wrong with a file, reading it raises
``BadValue`` saying what, and nothing else.
"""
from __future__ import annotations

import ast
import math
import os
import re
import stat
import struct
import warnings

import numpy as np
from numpy.lib import format as npy

__all__ = ["values_dir", "write_value", "read_value", "valid_key", "BadValue"]

_KEY = re.compile(r"[0-9A-Za-z_-]{1,64}")  # no dots or separators: a key never leaves the folder
_KINDS = frozenset("biufcS")  # what ``write_value`` writes: numbers, bools and bytes


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


_LENGTH = {(1, 0): "<H", (2, 0): "<I"}  # how each .npy version stores its header's length
MAX_HEADER = 10_000   # numpy's own limit; ours are ~120 bytes


def _check_header(f) -> None:
    """Refuse a file whose header is not what ``write_value`` writes, before numpy reads
    it: parsed by ``ast.literal_eval`` alone (numpy would fall back to tokenizing a
    Python 2 header, and warn), a plain dtype, and exactly the size it claims."""
    version = npy.read_magic(f)
    if version not in _LENGTH:
        raise BadValue(f"unsupported .npy version {version}")
    length, = struct.unpack(_LENGTH[version], f.read(struct.calcsize(_LENGTH[version])))
    if length > MAX_HEADER:
        raise BadValue(f"a header of {length:,} bytes")
    header = f.read(length)
    if len(header) != length:
        raise BadValue("torn header")
    with warnings.catch_warnings():   # a damaged header must not warn (the parser's
        warnings.simplefilter("ignore")   # SyntaxWarnings): it is refused with one reason
        d = ast.literal_eval(header.decode("latin1"))
    if type(d) is not dict or d.keys() != {"descr", "fortran_order", "shape"} or \
            type(d["fortran_order"]) is not bool or type(d["shape"]) is not tuple or \
            not all(type(n) is int and n >= 0 for n in d["shape"]):
        raise BadValue(f"malformed header {header[:80]!r}")
    dtype = npy.descr_to_dtype(d["descr"])
    if dtype.hasobject:
        raise BadValue(f"dtype {dtype} holds Python objects (loading it would need pickle)")
    if dtype.kind not in _KINDS or dtype.names is not None or dtype.subdtype is not None:
        raise BadValue(f"dtype {dtype} is not one a captured value has")
    claimed = f.tell() + math.prod(d["shape"]) * dtype.itemsize
    size = os.fstat(f.fileno()).st_size
    if claimed != size:
        raise BadValue(f"header claims {claimed:,} bytes, the file has {size:,} "
                       f"({'torn' if size < claimed else 'trailing data'})")


def read_value(folder: str, key: str):
    """The array stored under ``key``; ``BadValue`` saying why it cannot be read."""
    if not valid_key(key):
        raise BadValue(f"invalid value key {str(key)[:40]!r}")
    try:
        f = _open_regular(os.path.join(folder, key + ".npy"))
    except OSError as e:  # e.g. no permission, or a symbolic link put there since lstat
        raise BadValue(f"cannot open: {e.strerror or e}") from None
    with f:
        try:
            _check_header(f)
            f.seek(0)
            arr = npy.read_array(f, allow_pickle=False)
            if arr.dtype.kind == "S":
                arr = arr.astype(object)
        except BadValue:
            raise
        except Exception as e:  # noqa: BLE001 - numpy's header parser raises many kinds
            # (TokenError, SyntaxError, RecursionError, OverflowError, ...): all say "corrupt"
            raise BadValue(f"corrupt: {type(e).__name__}: {str(e)[:200]}") from None
    return arr[()] if arr.ndim == 0 else arr
