"""The wire format: versioned JSON lines, arrays as ``.npy`` bytes after the line.

A message is one JSON object on one line (strict JSON, UTF-8) with a type
``"t"``. When it carries arrays, its ``"blobs"`` lists their byte lengths and
the raw ``.npy`` bytes follow the newline, in order; the message refers to
them by index. Arrays are saved and loaded with ``allow_pickle=False``:
nothing on the wire is pickled, and nothing read from it is executed.
"""
from __future__ import annotations

import io
import json
import math
import socket
import threading

import numpy as np

__all__ = ["VERSION", "Channel", "ChannelClosed", "to_npy", "from_npy", "MAX_LINE"]

VERSION = 2              # 2: events messages carry op records (event_stream)
MAX_LINE = 64 << 20      # a longer line is a broken or hostile peer
MAX_BLOB = 1 << 30


class ChannelClosed(ConnectionError):
    """The other side closed the connection (or it broke)."""


def to_npy(value) -> bytes | None:
    """``value`` as ``.npy`` bytes; ``None`` when it cannot travel without pickle."""
    arr = np.asarray(value)
    if arr.dtype.kind == "O":
        flat = arr.reshape(-1)
        if not all(isinstance(v, bytes) for v in flat):
            return None
        arr = arr.astype(bytes)   # strings: fixed-width bytes
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def from_npy(data: bytes):
    """The value ``.npy`` bytes hold (a numpy scalar for rank 0; strings as bytes objects)."""
    arr = np.load(io.BytesIO(data), allow_pickle=False)
    if arr.dtype.kind == "S":
        arr = arr.astype(object)
    return arr[()] if arr.ndim == 0 else arr


def _nonfinite(o):
    if isinstance(o, float) and not math.isfinite(o):
        return "nan" if o != o else ("inf" if o > 0 else "-inf")
    if isinstance(o, dict):
        return {k: _nonfinite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_nonfinite(v) for v in o]
    return o


def dumps(msg: dict) -> bytes:
    """One strict-JSON line (non-finite floats spelled "nan"/"inf"/"-inf")."""
    try:
        text = json.dumps(msg, allow_nan=False, separators=(",", ":"))
    except ValueError:
        text = json.dumps(_nonfinite(msg), allow_nan=False, separators=(",", ":"))
    return text.encode() + b"\n"


class Channel:
    """Messages over a connected socket; ``send`` is safe from any thread."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._rfile = sock.makefile("rb")
        self._lock = threading.Lock()
        self.closed = False

    def send(self, msg: dict, blobs=()) -> None:
        if blobs:
            msg = dict(msg, blobs=[len(b) for b in blobs])
        self.send_raw(dumps(msg) + b"".join(blobs))

    def send_raw(self, line: bytes) -> None:
        """An already encoded message (line and blobs: the event batches' way)."""
        with self._lock:
            if self.closed:
                raise ChannelClosed("the connection is closed")
            try:
                self.sock.sendall(line)
            except OSError as e:
                self.closed = True
                raise ChannelClosed(str(e)) from None

    def receive(self) -> tuple[dict, list]:
        """The next (message, blobs); ``ChannelClosed`` at the end or on a malformed message."""
        try:
            line = self._rfile.readline(MAX_LINE + 1)
        except (OSError, ValueError) as e:
            raise ChannelClosed(str(e)) from None
        if not line or not line.endswith(b"\n"):
            raise ChannelClosed("connection closed" if not line else "message too long or cut")
        try:
            msg = json.loads(line)
        except ValueError as e:
            raise ChannelClosed(f"malformed message: {e}") from None
        if type(msg) is not dict or type(msg.get("t")) is not str:
            raise ChannelClosed(f"malformed message: {line[:80]!r}")
        sizes = msg.get("blobs") or []
        if type(sizes) is not list or not all(type(n) is int and 0 <= n <= MAX_BLOB
                                              for n in sizes):
            raise ChannelClosed("malformed message: bad blob sizes")
        blobs = []
        for n in sizes:
            data = self._rfile.read(n)
            if len(data) != n:
                raise ChannelClosed("connection closed inside a message")
            blobs.append(data)
        return msg, blobs

    def close(self) -> None:
        with self._lock:
            self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
