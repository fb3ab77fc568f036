"""The client's terminal as a remote pdb's stdin/stdout.

Between ``pdb_start`` and ``pdb_end`` the terminal is in plain line mode
(canonical, echoing: the kernel edits the line) and every line typed is sent
as ``pdb_in``; ``pdb_out`` text is written as it comes. Input is read from the
file descriptor with ``select`` so that nothing is consumed after the session
ends.
"""
from __future__ import annotations

import contextlib
import os
import select
import sys
import threading

__all__ = ["TerminalRelay"]


def _fileno(stream):
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


@contextlib.contextmanager
def line_mode(fd):
    """Canonical input with echo on ``fd`` (a terminal), restored afterwards."""
    try:
        import termios
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, TypeError):
        yield
        return
    mode = list(saved)
    mode[3] |= termios.ICANON | termios.ECHO | termios.ISIG
    termios.tcsetattr(fd, termios.TCSANOW, mode)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


class TerminalRelay:
    """Relays one remote pdb session at a time; ``send(msg)`` goes to the target."""

    def __init__(self, send):
        self._send = send
        self.stdin = None
        self.stdout = None
        self.around = None
        self._stop = threading.Event()
        self._thread = None
        self._stack = None

    def start(self) -> None:
        stack = contextlib.ExitStack()
        if self.around is not None:
            stack.enter_context(self.around())
        stdin = self.stdin or sys.stdin
        fd = _fileno(stdin)
        if fd is not None and os.isatty(fd):
            stack.enter_context(line_mode(fd))
        self._stack = stack
        self._stop.clear()
        self._thread = threading.Thread(target=self._pump, args=(stdin, fd), daemon=True,
                                        name="pfd-pdb-relay")
        self._thread.start()

    @property
    def active(self) -> bool:
        """A remote pdb session owns the terminal now."""
        return self._stack is not None

    def write(self, text: str) -> None:
        out = self.stdout or sys.stdout
        out.write(text)
        out.flush()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()

    def _pump(self, stdin, fd) -> None:
        try:
            while not self._stop.is_set():
                if fd is None:
                    text = stdin.readline()
                else:
                    ready, _, _ = select.select([fd], [], [], 0.1)
                    if not ready:
                        continue
                    text = os.read(fd, 4096).decode(errors="replace")
                if self._stop.is_set():
                    return
                if not text:
                    self._send({"t": "pdb_in", "text": "", "eof": True})
                    if fd is None or not os.isatty(fd):
                        return   # a pipe or file at its end: nothing more will come
                    continue
                self._send({"t": "pdb_in", "text": text})
        except (OSError, ConnectionError):
            return
