"""Importing TensorFlow without its C++ start-up lines burying ours (``--tf``, replay).

TensorFlow prints at import, on an AVX-512 CPU (TF 2.21): absl's
"WARNING: All log messages before absl::InitializeLog() is called are written to
STDERR" and an INFO line "I0000 ... port.cc:153] oneDNN custom operations are on ...",
each twice and whatever ``TF_CPP_MIN_LOG_LEVEL`` says, and below level 1 an INFO line of
``cpu_feature_guard.cc`` with a second line "To enable the following instructions: ...".
``import_quietly`` runs the import with file descriptor 2 read by a thread: absl's
preamble and messages of absl's format below the hold-back level (the user's
``TF_CPP_MIN_LOG_LEVEL``, else 2) are dropped, every other line goes on to the real
stderr as it comes (a crash's last words included).

Only the import's lines: ``TF_CPP_MIN_LOG_LEVEL`` is not set for the user, since
TensorFlow has read it by the end of the import (measured: changing it later changes
nothing), and at 2 it would hide for good the W lines TF prints at run time — among
them the Python traceback of a callback that raised. Nothing else in the environment changes
either: ``TF_ENABLE_ONEDNN_OPTS`` would change the program's numbers.

absl writes each message, its continuation lines included, in one ``write``; fd 2 is a
``SOCK_SEQPACKET`` socket where there is one (Linux), which keeps writes apart, so a
dropped message's continuation lines go with it and no other writer's line does. Over
a pipe (elsewhere) lines are judged one by one: continuation lines pass.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
import threading

__all__ = ["import_quietly", "chatter"]

# absl's log line: severity letter, MMDD, time (before absl is set up: 00:00:<epoch seconds>),
# thread id, file:line]
_ABSL = re.compile(rb"^([IWEF])\d{4} \d+:\d+:[\d.]+ +\d+ [^ \]]+:\d+\] ")
_PREAMBLE = b"WARNING: All log messages before absl::InitializeLog() is called"
_LEVELS = {b"I": 0, b"W": 1, b"E": 2, b"F": 3}
_LINE = re.compile(rb"[^\n]*\n|[^\n]+")
_HOLD_BACK = 2   # unless the user set a level: start-up I and W lines


def _hold_back_level() -> int:
    try:
        return int(os.environ.get("TF_CPP_MIN_LOG_LEVEL", _HOLD_BACK))
    except ValueError:
        return 0


def chatter(line: bytes, level: int) -> bool:
    """Whether ``line`` is start-up logging that ``TF_CPP_MIN_LOG_LEVEL=level`` asks to hold
    back (a fatal line never is)."""
    if level <= 0:
        return False
    if line.startswith(_PREAMBLE):
        return True
    m = _ABSL.match(line)
    return m is not None and _LEVELS[m.group(1)] < min(level, 3)


def _kept(write: bytes, level: int) -> bytes:
    """What goes on of one ``write`` to fd 2: a message's lines after its first go (or
    not) with it; lines before any message's first line are someone else's: kept."""
    out, keep = [], True
    for line in _LINE.findall(write):
        if line.startswith(_PREAMBLE) or _ABSL.match(line):
            keep = not chatter(line, level)
        if keep:
            out.append(line)
    return b"".join(out)


def import_quietly(name: str):
    """``importlib.import_module(name)`` (TensorFlow, or a module importing it), its
    start-up chatter held back (see the module). Already imported, or the user asked for
    every line (``TF_CPP_MIN_LOG_LEVEL=0``): a plain import."""
    level = _hold_back_level()
    if "tensorflow" in sys.modules or level <= 0:
        return importlib.import_module(name)
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):   # no usable fd 2: nothing to hold back
        return importlib.import_module(name)
    read_end, write_end, largest = _channel()
    os.dup2(write_end, 2)
    os.close(write_end)
    forward = threading.Thread(target=_forward, args=(read_end, saved, level, largest),
                               daemon=True, name="pyfunc-debug tf start-up")
    forward.start()
    try:
        return importlib.import_module(name)
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):   # closed, or None
            pass
        os.dup2(saved, 2)     # the last writer gone: the thread reads to its end
        forward.join(timeout=5)   # unless a child process the import started holds the
        if not forward.is_alive():   # channel: then the thread keeps forwarding to ``saved``
            os.close(saved)


def _channel() -> tuple[int, int, int]:
    """(read end, write end, the largest write a read gets whole; 0: a pipe, no writes
    kept apart)."""
    import socket   # here: the command line imports this module, and needs no socket
    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    except (OSError, AttributeError):   # no such socket here
        return (*os.pipe(), 0)
    try:   # a larger write fails (EMSGSIZE): allow what the system allows, up to 4 MiB
        b.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    except OSError:
        pass
    largest = b.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    return a.detach(), b.detach(), largest


def _forward(read_end: int, out: int, level: int, largest: int) -> None:
    """Copy what comes on ``read_end`` to ``out`` as it comes, leaving out the chatter."""
    pending = b""
    try:   # (an error here, say stderr closed meanwhile, ends the forwarding quietly)
        while True:
            chunk = os.read(read_end, largest or 65536)   # a socket's write: never cut
            if not chunk:
                break
            if largest:
                _write_all(out, _kept(chunk, level))
                continue
            *lines, pending = (pending + chunk).split(b"\n")
            _write_all(out, b"".join(_kept(line + b"\n", level) for line in lines))
        _write_all(out, _kept(pending, level))
    except OSError:
        pass
    finally:
        os.close(read_end)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]
