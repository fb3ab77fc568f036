"""The JSONL trace format: a versioned header line, then one event per line.

Each event line is a JSON array ``[type, field, ...]`` (see ``codec``); the
header names the fields of every row type.

Written as the run goes and flushed at least every ``FLUSH_NS`` and at the end
of every run, so a process killed mid-run leaves a loadable prefix. Captured
values (capture="full") are ``.npy`` files in ``<path>.values/`` beside it.
Loading never executes anything from the file (no pickle, no eval).
"""
from __future__ import annotations

import json
import os
import time
import warnings

import numpy as np

from ..events import RunEnd
from .codec import event_from_row, event_to_row, schema

__all__ = ["JsonlWriter", "load_trace", "TraceFormatError", "LoadedTrace", "FORMAT", "VERSION"]

FORMAT = "pyfunc-debug-trace"
VERSION = 1
FLUSH_NS = 50_000_000


class TraceFormatError(ValueError):
    """A trace file that cannot be read; names the file and line."""


class LoadedTrace(list):
    """The events of a trace file; ``.header`` and captured ``.values`` (key -> array)."""

    def __init__(self, events, header, values):
        super().__init__(events)
        self.header = header
        self.values = values


def values_dir(path) -> str:
    return f"{path}.values"


class JsonlWriter:
    """Appends events to ``path`` as they come."""

    def __init__(self, path, capture: str):
        self.path = os.fspath(path)
        self._f = open(self.path, "w", encoding="utf-8")
        header = {"format": FORMAT, "version": VERSION, "pid": os.getpid(),
                  "created": time.time(), "capture": capture, "rows": schema()}
        self._f.write(json.dumps(header) + "\n")
        self._f.flush()
        self._last_flush = time.perf_counter_ns()
        self._dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=True).encode
        self._values_dir = None

    def _value_key(self, event, field, i):
        key = f"{event.seq}-{'in' if field == 'inputs' else 'out'}{i}"
        if self._values_dir is None:
            self._values_dir = values_dir(self.path)
            os.makedirs(self._values_dir, exist_ok=True)
        arr = np.asarray(getattr(event, field)[i].value)
        if arr.dtype.kind == "O":
            arr = arr.astype(bytes)  # object arrays would need pickle
        np.save(os.path.join(self._values_dir, key + ".npy"), arr, allow_pickle=False)
        return key

    def write(self, event) -> None:
        self._f.write(self._dumps(event_to_row(event, self._value_key)) + "\n")
        now = time.perf_counter_ns()
        if type(event) is RunEnd or now - self._last_flush > FLUSH_NS:
            self._f.flush()
            self._last_flush = now

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()


def _load_values(path) -> dict:
    folder = values_dir(path)
    values = {}
    if os.path.isdir(folder):
        for name in os.listdir(folder):
            if name.endswith(".npy"):
                arr = np.load(os.path.join(folder, name), allow_pickle=False)
                if arr.dtype.kind == "S":
                    arr = arr.astype(object)
                values[name[:-4]] = arr[()] if arr.ndim == 0 else arr
    return values


def load_trace(path) -> LoadedTrace:
    """The events (and captured values) of a ``.jsonl`` trace written by ``pfd.trace``."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    if complete:
        lines.pop()
    if not lines or not lines[0].strip():
        raise TraceFormatError(f"{path}:1: empty file, expected a {FORMAT} header line")
    try:
        header = json.loads(lines[0])
    except ValueError as e:
        raise TraceFormatError(f"{path}:1: malformed header line: {e}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TraceFormatError(f"{path}:1: not a {FORMAT} file (header {lines[0][:80]!r})")
    if header.get("version", 0) > VERSION:
        raise TraceFormatError(f"{path}:1: trace version {header.get('version')} is newer than "
                               f"this reader (version {VERSION})")
    values = _load_values(path)
    events = []
    for lineno, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        try:
            events.append(event_from_row(json.loads(raw), values))
        except (ValueError, TypeError) as e:
            if lineno == len(lines) and not complete:
                warnings.warn(f"{path}:{lineno}: skipped a truncated last line (the recording "
                              "process probably stopped mid-write)", RuntimeWarning, stacklevel=2)
                break
            raise TraceFormatError(f"{path}:{lineno}: malformed trace line: {e}") from None
    return LoadedTrace(events, header, values)
