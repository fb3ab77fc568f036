"""Importing TensorFlow without its C++ start-up lines burying ours (``--tf``, replay).

``import_quietly`` sets ``TF_CPP_MIN_LOG_LEVEL`` to 2 unless the user set it: that
quiets TensorFlow's own logging. But on some CPUs (AVX-512 ones, where oneDNN's custom
operations are on by default) TensorFlow 2.21 prints at import, whatever the level,
absl's "WARNING: All log messages before absl::InitializeLog() is called are written
to STDERR" and an INFO line "I0000 ... port.cc:153] oneDNN custom operations are on
...", each twice. ``import_quietly`` runs the import with file descriptor 2 read
through a pipe: lines of absl's format below that level, and absl's preamble, are
dropped; every other line goes on to the real stderr as it comes (a crash's last
words included). The environment is not changed: ``TF_ENABLE_ONEDNN_OPTS`` would
change the program's numbers.
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


def _min_level() -> int:
    try:
        return int(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0"))
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


def import_quietly(name: str):
    """``importlib.import_module(name)`` (TensorFlow, or a module importing it), its
    start-up chatter held back (see the module). Already imported, or the user asked for
    every line (``TF_CPP_MIN_LOG_LEVEL=0``): a plain import."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    level = _min_level()
    if "tensorflow" in sys.modules or level <= 0:
        return importlib.import_module(name)
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):   # no usable fd 2: nothing to hold back
        return importlib.import_module(name)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    forward = threading.Thread(target=_forward, args=(read_end, saved, level), daemon=True,
                               name="pyfunc-debug tf start-up")
    forward.start()
    try:
        return importlib.import_module(name)
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):   # closed, or None
            pass
        os.dup2(saved, 2)     # the pipe's last writer gone: the thread reads to its end
        forward.join(timeout=5)   # unless a child process the import started holds the
        if not forward.is_alive():   # pipe: then the thread keeps forwarding to ``saved``
            os.close(saved)


def _forward(read_end: int, out: int, level: int) -> None:
    """Copy lines from ``read_end`` to ``out`` as they come, leaving out the chatter."""
    pending = b""
    try:   # (an error here, say stderr closed meanwhile, ends the forwarding quietly)
        while True:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            kept = b"".join(line + b"\n" for line in lines if not chatter(line, level))
            _write_all(out, kept)
        if not chatter(pending, level):
            _write_all(out, pending)
    except OSError:
        pass
    finally:
        os.close(read_end)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]
