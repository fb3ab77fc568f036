"""File objects that carry a target-side pdb session over the connection.

pdb reads ``stdin.readline()`` and writes ``stdout.write()``; these forward
both to the attached client. With no client (it went away mid-session) the
input reads ``continue`` and output is dropped: the process never waits for
a client that is gone.
"""
from __future__ import annotations

import threading

__all__ = ["SocketStdin", "SocketStdout"]

GONE = "continue\n"


class SocketStdin:
    """Lines typed on the client's terminal, fed by the server's reader thread."""

    encoding = "utf-8"

    def __init__(self):
        self._buf = ""
        self._eof = False
        self._connected = False
        self._cond = threading.Condition()

    def connect(self) -> None:
        with self._cond:
            self._buf, self._eof, self._connected = "", False, True

    def disconnect(self) -> None:
        with self._cond:
            self._connected = False
            self._cond.notify_all()

    def feed(self, text: str, eof: bool = False) -> None:
        with self._cond:
            self._buf += text
            self._eof = self._eof or eof
            self._cond.notify_all()

    def reset(self) -> None:
        """Forget input typed before this session began."""
        with self._cond:
            self._buf, self._eof = "", False

    def readline(self, size: int = -1) -> str:
        with self._cond:
            while "\n" not in self._buf and not self._eof and self._connected:
                self._cond.wait(0.1)   # a timeout lets Ctrl+C (an async exception) arrive
            if not self._connected and "\n" not in self._buf:
                return GONE
            if "\n" in self._buf:
                line, _, self._buf = self._buf.partition("\n")
                return line + "\n"
            line, self._buf, self._eof = self._buf, "", False   # Ctrl+D: end of input
            return line

    def isatty(self) -> bool:
        return False


class SocketStdout:
    """pdb's output, sent to the client as ``pdb_out`` messages (dropped with no client)."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, send):
        self._send = send     # send(text) -> None, never raises

    def write(self, text: str) -> int:
        if text:
            self._send(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
