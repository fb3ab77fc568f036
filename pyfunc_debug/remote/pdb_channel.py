"""A pdb session in another process, on this process's terminal (SPEC §7's wire).

The process that runs pdb (a Dask worker) opens a ``PdbPort``: a listening
socket on its own host, port 0, that accepts one connection presenting the
token the caller made. It tells the caller the port over a channel both
already trust; the caller ``connect``s, and ``relay`` serves the session.
pdb's output is written to the caller's terminal as it comes, and a line is
read from that terminal only when pdb asks for one (``pdb_readline``), so
nothing typed is consumed after the session ends and a dead peer is noticed
while waiting. Ctrl+C at the prompt is pdb's (``--KeyboardInterrupt--``, as
in a local session); while the program runs it ends the session and is
raised here. Messages are ``wire.Channel`` JSON lines: nothing is pickled.

Target to caller: ``pdb_out`` (text), ``pdb_readline``, ``pdb_end``. Caller to
target: ``attach`` (version, token), ``pdb_in`` (a line; ``""`` is end of
input, which quits pdb), ``pdb_interrupt``.

Before the token is checked a connection gets what ``gate.Gate`` gives (4 KiB,
a fixed number waiting at once, one deadline); ``accept``'s timeout is a total
deadline, however peers trickle, and a bad handshake of any kind is refused
without raising into the task or printing anything.
"""
from __future__ import annotations

import contextlib
import os
import queue
import select
import socket
import sys
import threading
import time

from .gate import HANDSHAKE_TIMEOUT, Gate, token_matches
from .wire import VERSION, Channel, ChannelClosed

__all__ = ["PdbPort", "PdbStreams", "connect", "relay"]

CALLER_LINE = 1 << 20   # a line typed into pdb, at most
CONNECT_TIMEOUT = 5.0
POLL_S = 0.5   # how often a waiting relay asks whether its peer is still there


def _family(host: str) -> int:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


class PdbPort:
    """The target's end: listens on ``(host, 0)`` until closed; ``address`` is where."""

    def __init__(self, host: str = "127.0.0.1"):
        self._sock = socket.create_server((host, 0), family=_family(host), backlog=4)
        self.address = (host, self._sock.getsockname()[1])
        self._token = None
        self.gate = Gate(self._sock, self._check, HANDSHAKE_TIMEOUT)

    def _check(self, msg: dict) -> str | None:
        if msg["t"] != "attach" or msg.get("version") != VERSION \
                or self._token is None or not token_matches(msg.get("token"), self._token):
            return "wrong token"
        return None

    def accept(self, token: str, timeout: float) -> "PdbStreams | None":
        """The streams of the first connection that presents ``token``, or None when none
        came within ``timeout`` seconds in all (others are turned away meanwhile)."""
        self._token = token
        try:
            got = self.gate.next(until=time.monotonic() + timeout)
        except Exception:  # noqa: BLE001 - a peer never raises into the task
            got = None
        if got is None:
            return None
        return PdbStreams(Channel(got[0]))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.gate.close()
        with contextlib.suppress(OSError):
            self._sock.close()


class _Out:
    """pdb's stdout: text collected and sent before each prompt is answered."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, ch: Channel):
        self._ch = ch
        self._parts: list = []
        self._size = 0

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        if self._size > 8192:
            self.flush()
        return len(text)

    def flush(self) -> None:
        text, self._parts, self._size = "".join(self._parts), [], 0
        if text:
            with contextlib.suppress(ChannelClosed):
                self._ch.send({"t": "pdb_out", "text": text})

    def isatty(self) -> bool:
        return False


class _In:
    """pdb's stdin: each ``readline`` asks the caller for one line and waits for it."""

    encoding = "utf-8"

    def __init__(self, ch: Channel, out: _Out):
        self._ch, self._out = ch, out

    def readline(self, size: int = -1) -> str:
        self._out.flush()
        try:
            self._ch.send({"t": "pdb_readline"})
            while True:
                msg, _ = self._ch.receive(CALLER_LINE, max_blob=0)
                if msg["t"] == "pdb_in":
                    return str(msg.get("text", ""))
                if msg["t"] == "pdb_interrupt":
                    raise KeyboardInterrupt   # pdb's prompt loop shows --KeyboardInterrupt--
        except ChannelClosed:
            return ""   # the caller went away: end of input, so pdb quits

    def isatty(self) -> bool:
        return False


class PdbStreams:
    """``stdin``/``stdout`` for a pdb talking to the connected caller; ``close`` ends it."""

    def __init__(self, ch: Channel):
        self._ch = ch
        self.stdout = _Out(ch)
        self.stdin = _In(ch, self.stdout)

    def close(self) -> None:
        self.stdout.flush()
        with contextlib.suppress(ChannelClosed):
            self._ch.send({"t": "pdb_end"})
        self._ch.close()


def connect(address, token: str, timeout: float = CONNECT_TIMEOUT) -> Channel:
    """The caller's end, connected to a ``PdbPort`` at ``(host, port)``; ``OSError`` if not."""
    sock = socket.create_connection(tuple(address), timeout=timeout)
    sock.settimeout(None)
    ch = Channel(sock)
    ch.send({"t": "attach", "version": VERSION, "token": token})
    return ch


def _tty_fd(stream):
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd if os.isatty(fd) else None


def _read_line(stdin, prompt: str | None) -> str:
    """One line typed (``""`` at end of input)."""
    if prompt is not None:   # the real terminal: line editing and history, as local pdb
        try:
            return input(prompt) + "\n"
        except EOFError:
            return ""
    stream = stdin or sys.stdin
    fd = _tty_fd(stream)
    if fd is None:
        return stream.readline()
    data = b""
    while not data.endswith(b"\n"):
        # a timeout lets Ctrl+C arrive (an async exception: the UI's main thread sends it)
        if select.select([fd], [], [], 0.1)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    return data.decode(errors="replace")


def relay(ch: Channel, stdin=None, stdout=None, alive=None) -> None:
    """Serve the session on ``ch`` until it ends, on ``stdin``/``stdout`` (``None``: the
    real terminal). ``alive()`` is asked every ``POLL_S`` while pdb is not prompting: when
    it says the peer is gone, the session ends. ``ch`` is closed afterwards."""
    inbox: queue.Queue = queue.Queue()

    def read() -> None:
        try:
            while True:
                inbox.put(ch.receive()[0])
        except Exception:  # noqa: BLE001 - closed, or malformed: the session ends either way
            inbox.put(None)

    threading.Thread(target=read, name="pfd-pdb-relay", daemon=True).start()
    out = stdout or sys.stdout
    raw = stdin is None and stdout is None
    held = ""   # on the real terminal, the text after the last newline: input()'s prompt
    try:
        while True:
            try:
                msg = inbox.get(timeout=POLL_S)
            except queue.Empty:
                if alive is not None and not alive():
                    return
                continue
            kind = None if msg is None else msg.get("t")
            if kind == "pdb_out":
                text = held + str(msg.get("text", ""))
                if raw:
                    head, sep, held = text.rpartition("\n")
                    text = head + sep
                out.write(text)
                out.flush()
            elif kind == "pdb_readline":
                prompt, held = (held if raw else None), ""
                try:
                    line = _read_line(stdin, prompt)
                except KeyboardInterrupt:
                    out.write("\n")
                    ch.send({"t": "pdb_interrupt"})
                    continue
                ch.send({"t": "pdb_in", "text": line})
            elif kind == "refused":
                out.write(f"pyfunc-debug: the remote pdb refused us: {msg.get('reason')}\n")
                return
            else:   # pdb_end, or the peer went away
                return
    except ChannelClosed:
        return
    finally:
        if held:
            out.write(held + "\n")
            out.flush()
        ch.close()
