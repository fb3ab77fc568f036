"""The wire format: versioned JSON lines, arrays as ``.npy`` bytes after the line.

A message is one JSON object on one line (UTF-8) with a type ``"t"``. When it
carries arrays, its ``"blobs"`` lists their byte lengths and the raw ``.npy``
bytes follow the newline, in order; the message refers to them by index.
Arrays are saved with ``allow_pickle=False`` and read back by our own header
check (``from_npy``): nothing on the wire is pickled, and nothing read from it
is executed.

Decoding never trusts the peer: any malformed input raises ``WireError`` (a
``ValueError``) naming what is wrong, lines are capped (``MAX_LINE``, less
where the caller says), and a declared blob is read in chunks as it arrives,
so a peer makes us allocate no more than it actually sends (``MAX_BLOB`` per
message at most).
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import socket
import struct
import threading
import time

import numpy as np
from numpy.lib import format as npy_format

__all__ = ["VERSION", "Channel", "ChannelClosed", "WireError", "to_npy", "from_npy",
           "parse_line", "decoding", "MAX_LINE", "MAX_BLOB"]

VERSION = 2              # 2: events messages carry op records (event_stream)
MAX_LINE = 64 << 20      # a longer line is a broken or hostile peer
MAX_BLOB = 1 << 30       # bytes of blobs one message may declare, all together
CHUNK = 1 << 20          # blobs are read this much at a time: memory follows what arrived
MAX_NPY_HEADER = 10_000  # numpy's own default bound for a header
SEND_SLICE = 0.25        # a send deadline is checked this often while the peer reads nothing


class ChannelClosed(ConnectionError):
    """The other side closed the connection (or it broke)."""


class WireError(ChannelClosed, ValueError):
    """A malformed message (the text names the field); the channel is unusable after it."""


@contextlib.contextmanager
def decoding(kind: str, field: str):
    """Any exception decoding ``field`` of a ``kind`` message becomes a ``WireError`` naming
    it: a hostile peer can make a decoder raise almost anything (RecursionError,
    MemoryError, OverflowError, tokenize.TokenError, ...)."""
    try:
        yield
    except WireError:
        raise
    except Exception as e:  # noqa: BLE001 - see above
        raise WireError(f"malformed {kind} message: field {field!r}: "
                        f"{type(e).__name__}: {_short(e)}") from None


def _short(e: BaseException, n: int = 120) -> str:
    text = str(e).replace("\n", " ")
    return text if len(text) <= n else text[:n] + "..."


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


def from_npy(data, field: str = "value"):
    """The value ``.npy`` bytes hold (a numpy scalar for rank 0; strings as bytes objects).

    The header must describe exactly the bytes that follow it, so nothing is allocated
    beyond their size; object dtypes are refused. ``WireError`` names ``field`` otherwise.
    """
    with decoding("array", field):
        arr = _read_npy(data)
        if arr.dtype.kind == "S":
            arr = arr.astype(object)
        return arr[()] if arr.ndim == 0 else arr


def _read_npy(data) -> np.ndarray:
    fp = io.BytesIO(data)
    version = npy_format.read_magic(fp)
    if version == (1, 0):
        shape, fortran, dtype = npy_format.read_array_header_1_0(fp, MAX_NPY_HEADER)
    elif version == (2, 0):
        shape, fortran, dtype = npy_format.read_array_header_2_0(fp, MAX_NPY_HEADER)
    else:
        raise ValueError(f".npy version {version} is not accepted")
    if dtype.hasobject:
        raise ValueError("object arrays are not accepted (they would need pickle)")
    count, offset = math.prod(shape), fp.tell()
    size = len(data) - offset
    if count * dtype.itemsize != size:   # Python ints: a shape beyond int64 cannot overflow
        raise ValueError(f"the header says {shape} {dtype}, but {size} bytes follow")
    if count == 0:
        return np.empty(shape, dtype)
    flat = np.frombuffer(data, dtype, count, offset)
    if fortran:
        return flat.reshape(shape[::-1]).transpose().copy(order="F")
    return flat.reshape(shape).copy()   # writable, as np.load's


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


def parse_line(line: bytes) -> dict:
    """A message from one line (its newline included or not); ``WireError`` if malformed."""
    try:
        text = line.decode("utf-8")   # strict: json.loads(bytes) would guess UTF-16/32 too
    except UnicodeDecodeError as e:
        raise WireError(f"malformed message: not UTF-8 (byte {e.start})") from None
    try:
        msg = json.loads(text)
    except RecursionError:
        raise WireError("malformed message: JSON nested too deeply") from None
    except ValueError as e:
        raise WireError(f"malformed message: {_short(e)}") from None
    if type(msg) is not dict:
        raise WireError("malformed message: not a JSON object")
    if type(msg.get("t")) is not str:
        raise WireError("malformed message: field 't' (its type) is missing or not a string")
    return msg


def blob_sizes(msg: dict, max_blob: int) -> list:
    """The byte lengths ``msg`` declares; ``WireError`` beyond ``max_blob`` in all."""
    sizes = msg.get("blobs")
    if sizes is None:
        return []
    if type(sizes) is not list or not all(type(n) is int and n >= 0 for n in sizes):
        raise WireError("malformed message: field 'blobs' must list byte lengths")
    if sum(sizes) > max_blob:
        raise WireError(f"malformed message: field 'blobs' declares {sum(sizes)} bytes "
                        f"(at most {max_blob} here)")
    return sizes


class Channel:
    """Messages over a connected socket; ``send`` is safe from any thread.

    A failed send shuts the socket down, so a thread waiting in ``receive`` on the
    same channel wakes up (``ChannelClosed``) instead of waiting for ever.
    """

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._rfile = sock.makefile("rb")
        self._lock = threading.Lock()
        self.closed = False
        self.send_timeout: float | None = None

    def limit_sends(self, seconds: float) -> None:
        """Each message must be sent within ``seconds`` in all (a peer that stops reading
        is then cut off: ``ChannelClosed``); receives still wait as long as they need to.
        A socket timeout would bound receives too; the kernel's own send timeout
        (``SO_SNDTIMEO``) only counts time without progress, and a peer that reads
        nothing still lets a few bytes through now and then: so short slices of it,
        summed here. Without ``SO_SNDTIMEO`` (some platforms) sends are not bounded."""
        self.sock.settimeout(None)
        part = min(seconds, SEND_SLICE)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                                 struct.pack("ll", int(part), int(part % 1 * 1e6)))
        except (OSError, AttributeError, struct.error):
            return
        self.send_timeout = seconds

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
                if self.send_timeout is None:
                    self.sock.sendall(line)
                else:
                    self._send_within(line, time.monotonic() + self.send_timeout)
            except OSError as e:   # broken, or the send timed out: the peer stopped reading
                self.closed = True
                with contextlib.suppress(OSError):
                    self.sock.shutdown(socket.SHUT_RDWR)
                raise ChannelClosed(str(e) or type(e).__name__) from None

    def _send_within(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view):]
            except BlockingIOError:   # a slice of SO_SNDTIMEO without progress
                pass
            if view and time.monotonic() >= deadline:
                raise TimeoutError(f"the peer read nothing for {self.send_timeout:g} s")

    def receive(self, limit: int | None = None, deadline: float | None = None,
                max_blob: int | None = None) -> tuple[dict, list]:
        """The next (message, blobs): ``ChannelClosed`` at the end, ``WireError`` (a kind of
        it) on a malformed message. ``limit`` caps the line (``MAX_LINE``), ``max_blob`` the
        blobs' total (``MAX_BLOB``); ``deadline`` (``time.monotonic()``) bounds reading the
        whole line, not each read."""
        limit = MAX_LINE if limit is None else limit
        max_blob = MAX_BLOB if max_blob is None else max_blob
        try:
            line = self._readline(limit, deadline)
        except (OSError, ValueError) as e:
            raise ChannelClosed(str(e) or type(e).__name__) from None
        if len(line) > limit:
            raise WireError(f"malformed message: a line longer than {limit} bytes")
        if not line.endswith(b"\n"):
            raise ChannelClosed("connection closed" if not line else
                                "connection closed inside a message")
        msg = parse_line(line)
        return msg, [self._read_exact(n) for n in blob_sizes(msg, max_blob)]

    def _readline(self, limit: int, deadline: float | None) -> bytes:
        if deadline is None:
            return self._rfile.readline(limit + 1)
        line = b""
        while not line.endswith(b"\n") and len(line) <= limit:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out")
            self.sock.settimeout(left)
            chunk = self._rfile.peek(1)[:limit + 1 - len(line)]   # one read at most
            if not chunk:
                break
            end = chunk.find(b"\n")
            line += self._rfile.read(len(chunk) if end < 0 else end + 1)
        return line

    def _read_exact(self, n: int) -> bytes:
        parts, left = [], n
        while left:
            try:
                part = self._rfile.read(min(left, CHUNK))
            except (OSError, ValueError) as e:
                raise ChannelClosed(str(e) or type(e).__name__) from None
            if not part:
                raise ChannelClosed("connection closed inside a message")
            parts.append(part)
            left -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        self.closed = True   # not under the lock: the shutdown wakes a send blocked holding it
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
