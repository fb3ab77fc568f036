"""The helper process that finishes a ``.jsonl`` trace's lines: pending summaries, writing.

A program's callbacks share the interpreter lock with the framework, so the
work of recording them costs the program most when it runs in the program's
process (``pending``). ``JsonlWriter`` therefore starts this process the first
time a callback leaves its summaries pending, and from then on sends it every
batch of lines instead of writing them itself. The process takes the pending
summaries of a batch at once (``pending.settle_all``), writes the lines in
the order they came and hands them to the operating system at once.

It is started in a session of its own, so a Ctrl+C at the terminal reaches
only the program: the process finishes writing what it was sent and exits
when its input closes — also when the program is killed, so a killed
program's trace is complete up to its last batch. Its errors (a full disk)
are written to its error file and raised by the program's ``close``. Until it
says it is ready (its imports done), the program keeps what it sent: a
process that cannot start (an embedding interpreter, a broken environment)
raises ``StartFailed`` with those lines, for the program to write itself.

The process loads only what settling needs (``pending``, ``summary``, numpy,
orjson), not the package's ``__init__`` and the engine behind it: it starts
while the program runs, and its start then takes about 0.27 s of CPU instead
of 0.39 s here.

    python -m pyfunc_debug.trace.writer_process PATH   (what ``_BOOT`` runs, lighter)
"""
from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile

__all__ = ["WriterProcess", "StartFailed", "SYNC", "settle_lines"]

SYNC = b"\x01\n"      # a line no JSON row starts with: "write everything, then answer"
_MARKED = b'"\\u0000"'  # how orjson writes ``pending.MARK``
_PIPE_BYTES = 1 << 20  # the pipe's buffer (Linux): the program never waits while it starts
_INPUTS, _OUTPUTS = 9, 10   # in an OpEnd's row (its type name first; see codec)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# ``-m`` would run the package's __init__ (the whole engine); a bare package module
# standing in for it lets ``pyfunc_debug.trace.writer_process`` load with only its own imports
_BOOT = ("import sys, types\n"
         "package = types.ModuleType('pyfunc_debug')\n"
         "package.__path__ = [sys.argv.pop(1)]\n"
         "sys.modules['pyfunc_debug'] = package\n"
         "from pyfunc_debug.trace.writer_process import entry\n"
         "entry(sys.argv[1])\n")


class StartFailed(OSError):
    """The process ended before it was ready; ``sent``: every line sent to it."""

    def __init__(self, message: str, sent: bytes):
        super().__init__(message)
        self.sent = sent


class WriterProcess:
    """The program's side: ``write(lines)``, ``sync()``, ``close()``."""

    def __init__(self, path: str):
        self._errors = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT, _PACKAGE, path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._errors,
            start_new_session=True)
        self._fd = self.proc.stdin.fileno()
        self._sent: list | None = []   # what was sent before it said it is ready
        try:
            import fcntl
            fcntl.fcntl(self._fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
        except (ImportError, OSError, ValueError):   # not Linux: the default buffer
            pass

    def write(self, data) -> None:
        """Send ``data`` (whole lines); raises ``OSError`` naming the cause if the process
        is gone."""
        if self._sent is not None and not self._ready(wait=False):
            self._sent.append(bytes(data))
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except BrokenPipeError:
            raise self._failure() from None

    def _ready(self, wait: bool) -> bool:
        """Whether the process said it is ready (``b"r"``, once); keeping what was sent
        ends then."""
        if self._sent is None:
            return True
        if wait or select.select([self.proc.stdout], [], [], 0)[0]:
            if self.proc.stdout.read(1) == b"r":
                self._sent = None
                return True
        return False

    def sync(self) -> None:
        """Return once every line sent so far is in the file."""
        self.write(SYNC)
        if not self._ready(wait=True) or self.proc.stdout.read(1) != b"k":
            raise self._failure()

    def close(self) -> None:
        """Close its input and wait until it has written everything."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self.proc.wait()
        try:
            if code != 0:
                raise self._failure()   # reads its answers and its error file: still open
        finally:
            self.proc.stdout.close()
            self._errors.close()

    def _failure(self) -> OSError:
        code = self.proc.wait()
        self._errors.seek(0)
        text = self._errors.read().decode(errors="replace").strip().splitlines()
        message = (f"the trace's writer process (pid {self.proc.pid}) stopped with exit "
                   f"status {code}: {text[-1] if text else 'no message'}")
        if self._sent is not None and not self.proc.stdout.read(1) == b"r":   # it ended: EOF
            return StartFailed(message, b"".join(self._sent))
        return OSError(message)


def settle_lines(lines: bytes) -> bytes:
    """``lines`` (whole JSON rows) with every pending summary made its summary's row."""
    if _MARKED not in lines:
        return lines
    import orjson

    from .pending import from_row, settle_all

    rows = lines.split(b"\n")
    parsed, spots, pending = {}, [], []
    for i, line in enumerate(rows):
        if _MARKED in line:
            row = parsed[i] = orjson.loads(line)
            if row[0] != "OpEnd":   # only an OpEnd's inputs and outputs are left pending
                continue
            for field in (row[_INPUTS], row[_OUTPUTS]):
                for j, item in enumerate(field):
                    p = from_row(item)
                    if p is not None:
                        spots.append((field, j))
                        pending.append(p)
    for (field, j), summary in zip(spots, settle_all(pending)):
        field[j] = summary.row
    for i, row in parsed.items():
        rows[i] = orjson.dumps(row)
    return b"\n".join(rows)


def _tell(answer: bytes) -> None:
    """Answer the program; a program that is gone (killed) leaves its lines to us still."""
    try:
        os.write(1, answer)
    except OSError:
        pass


def main(path: str) -> int:
    import orjson  # noqa: F401 - what settling needs, imported before saying ready

    from . import pending  # noqa: F401
    _tell(b"r")
    with open(path, "ab") as out:
        rest = b""
        while True:
            chunk = os.read(0, 1 << 20)
            if not chunk:
                break
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            lines, rest = data[:cut], data[cut:]
            syncs = lines.count(SYNC)
            if syncs:
                lines = b"".join(lines.split(SYNC))   # SYNC is a whole line: rows stay whole
            if lines:
                out.write(settle_lines(lines))
            out.flush()
            if syncs:
                _tell(b"k" * syncs)
        if rest:   # the program died mid-line: the loader skips a torn last line
            out.write(rest)
    return 0


def entry(path: str) -> None:
    """The process's life: ``main``, its error as one line for the program to raise."""
    try:
        sys.exit(main(path))
    except Exception as e:  # noqa: BLE001 - the program raises it on close
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    entry(sys.argv[1])
