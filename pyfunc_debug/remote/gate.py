"""Handshakes before the token is checked: a small fixed budget per connection.

A ``Gate`` reads the first line of each connection a listening socket accepts,
without blocking and in the one thread that calls ``next`` (no thread per
peer). Before the token is checked a connection gets:

- ``HANDSHAKE_LINE`` (4 KiB) for its one line; no declared blob is ever read;
- ``HANDSHAKE_TIMEOUT`` seconds in all to send it (one deadline, not one per read);
- a place among at most ``MAX_PENDING`` (8) connections waiting at once: one
  more pushes out the oldest waiting one, so peers that trickle bytes cannot
  lock out a client that sends its line at once.

A connection whose line is not a well-formed message accepted by ``check``
(the token, the version) gets a ``refused`` line and is closed. Nothing is
printed: ``refusals`` counts them. Memory per waiting connection: its line
buffer and the kernel's socket buffers.
"""
from __future__ import annotations

import contextlib
import hmac
import selectors
import socket
import time

from .wire import WireError, dumps, parse_line

__all__ = ["Gate", "token_matches", "MAX_PENDING", "HANDSHAKE_LINE", "HANDSHAKE_TIMEOUT"]

MAX_PENDING = 8            # connections waiting to present their token, at once
HANDSHAKE_LINE = 4096      # bytes of the first line before the token is checked
HANDSHAKE_TIMEOUT = 5.0    # seconds for the whole first line
POLL_S = 0.5               # how often ``next`` asks ``stop()``


def token_matches(given, token: str) -> bool:
    """``given`` (from the wire: any JSON value) is ``token``, compared in constant time;
    a lone surrogate cannot raise (surrogatepass)."""
    if type(given) is not str:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"),
                               token.encode("utf-8", "surrogatepass"))


def refuse(conn: socket.socket, why: str) -> None:
    """Say why (without waiting for the peer to read) and close."""
    with contextlib.suppress(OSError):
        conn.setblocking(False)
        conn.send(dumps({"t": "refused", "reason": why}))
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    conn.close()


class Gate:
    """Connections on ``listener`` until one presents a message ``check`` accepts.

    ``check(msg) -> str | None``: why ``msg`` (a parsed first line) is refused, or None.
    ``timeout``, ``max_pending`` and ``limit`` may be changed between calls (tests do).
    """

    def __init__(self, listener: socket.socket, check, timeout: float = HANDSHAKE_TIMEOUT,
                 max_pending: int = MAX_PENDING, limit: int = HANDSHAKE_LINE):
        self.listener = listener
        self.check = check
        self.timeout = timeout
        self.max_pending = max_pending
        self.limit = limit
        self.refusals = 0
        self._pending: dict = {}   # socket -> [deadline, bytearray], oldest first
        self._sel = selectors.DefaultSelector()
        listener.setblocking(False)
        self._sel.register(listener, selectors.EVENT_READ)

    @property
    def pending(self) -> int:
        """Connections waiting to present their token now."""
        return len(self._pending)

    def next(self, until: float | None = None, stop=None):
        """The next ``(socket, message)`` that passed ``check`` (the socket blocking again,
        nothing read past its line), or None at ``until`` (``time.monotonic()``), once
        ``stop()`` is true, or when the listener is closed."""
        while True:
            now = time.monotonic()
            self._expire(now)
            if (stop is not None and stop()) or (until is not None and now >= until):
                return None
            ends = [d for d, _ in self._pending.values()] + ([until] if until else [])
            wait = min(max(min(ends, default=now + POLL_S) - now, 0.0), POLL_S)
            try:
                ready = self._sel.select(wait)
            except (OSError, ValueError):   # the listener was closed
                return None
            if self.listener.fileno() < 0:
                return None
            for key, _ in ready:
                if key.fileobj is self.listener:
                    self._accept()
                    continue
                got = self._read(key.fileobj)
                if got is not None:
                    return got

    def refuse(self, conn: socket.socket, why: str) -> None:
        """Refuse ``conn`` (which the gate no longer holds), counted."""
        self.refusals += 1
        refuse(conn, why)

    def close(self) -> None:
        """Refuse every waiting connection; the listener is the caller's to close."""
        for conn in list(self._pending):
            self._drop(conn, "the target stopped listening")
        with contextlib.suppress(OSError, ValueError, KeyError):
            self._sel.unregister(self.listener)
        self._sel.close()

    # -- one connection ---------------------------------------------------------------------
    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return
        except OSError:   # out of descriptors, say: let the backlog wait a moment
            time.sleep(0.05)
            return
        while len(self._pending) >= max(self.max_pending, 1):
            oldest = next(iter(self._pending))
            self._drop(oldest, f"too many connections waiting to attach "
                               f"({self.max_pending} at most)")
        try:
            conn.setblocking(False)
            self._sel.register(conn, selectors.EVENT_READ)
        except (OSError, ValueError):
            conn.close()
            return
        self._pending[conn] = [time.monotonic() + self.timeout, bytearray()]

    def _expire(self, now: float) -> None:
        for conn, (deadline, _) in list(self._pending.items()):
            if now >= deadline:
                self._drop(conn, f"no attach message within {self.timeout:g} s")

    def _read(self, conn: socket.socket):
        buf = self._pending[conn][1]
        try:
            data = conn.recv(self.limit + 1 - len(buf))
        except BlockingIOError:
            return None
        except OSError:
            self._drop(conn, "the connection broke")
            return None
        if not data:
            self._drop(conn, "no attach message (the connection was closed)")
            return None
        buf += data
        end = buf.find(b"\n")
        if end < 0:
            if len(buf) > self.limit:
                self._drop(conn, f"the attach message is longer than {self.limit} bytes")
            return None
        why, msg = self._judge(bytes(buf), end)
        if why is not None:
            self._drop(conn, why)
            return None
        self._forget(conn)
        try:
            conn.setblocking(True)
        except OSError:
            conn.close()
            return None
        return conn, msg

    def _judge(self, buf: bytes, end: int):
        """(why refused or None, the message)."""
        if end + 1 != len(buf):
            return "the attach message must come alone (wait for the answer)", None
        try:
            msg = parse_line(buf)
            if "blobs" in msg:
                return "no blobs before the token is checked", None
            return self.check(msg), msg
        except WireError as e:
            return str(e)[:200], None
        except Exception as e:  # noqa: BLE001 - whatever a peer causes: refused, never printed
            return f"malformed attach message ({type(e).__name__})", None

    def _forget(self, conn: socket.socket) -> None:
        self._pending.pop(conn, None)
        with contextlib.suppress(OSError, ValueError, KeyError):
            self._sel.unregister(conn)

    def _drop(self, conn: socket.socket, why: str) -> None:
        self._forget(conn)
        self.refuse(conn, why)
