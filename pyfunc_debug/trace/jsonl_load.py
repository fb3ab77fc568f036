"""Reading a JSONL trace (``jsonl`` writes them): ``load_trace``.

Loading never executes anything from the file (no pickle, no eval) and checks
every row: a line that is not JSON, an unknown row type, a field of the wrong
type or absurd nesting raises one ``TraceFormatError`` (a ``ValueError``) naming
the file and line; an unreadable value loads as ``None`` with one warning
naming its file. A torn last line (a process killed mid-write) is skipped with
a warning; a header from before a row type gained trailing fields is read too;
``<path>.origins.json`` gives Dask workers' threads back (``events.origin``).

Version 2 files may hold *pending* summaries (a recorded callback's small
arrays, kept as their bytes: ``pending``); loading settles them, so every
summary loaded equals ``summarize`` of the array. Version 1 files hold none.
"""
from __future__ import annotations

import json
import os
import warnings

from .. import events as ev
from .bulk import paused_gc
from .codec import event_from_row, schema_compatible
from .pending import MARKED, BadPending, settle_rows
from .values import BadValue, read_value, values_dir

__all__ = ["load_trace", "TraceFormatError", "LoadedTrace", "FORMAT", "VERSION",
           "origins_path"]

FORMAT = "pyfunc-debug-trace"
VERSION = 3   # 2: an OpEnd's summaries may be pending (see above); 3: a summary's
#   eleventh field may be null (no captured value), as msgspec writes every summary
BATCH = 2048  # lines parsed per json.loads call when loading


class TraceFormatError(ValueError):
    """A trace file that cannot be read; names the file and line."""


class LoadedTrace(list):
    """The events of a trace file; ``.header`` and captured ``.values`` (key -> array)."""

    def __init__(self, events, header, values):
        super().__init__(events)
        self.header = header
        self.values = values

    def to_pandas(self):
        """One row per op call as a pandas DataFrame (columns: ``trace.export.export_trace``)."""
        from .rows import to_pandas
        return to_pandas(self, self.header.get("pid"))


class _Values:
    """Captured values, each read the first time an event refers to it."""

    def __init__(self, path):
        self.path = path
        self.folder = values_dir(path)
        self.loaded: dict = {}
        self.failed: set = set()

    def get(self, key):
        if key in self.loaded:
            return self.loaded[key]
        if key in self.failed:
            return None
        try:
            value = self.loaded[key] = read_value(self.folder, key)
            return value
        except (BadValue, OSError) as e:
            self.failed.add(key)
            warnings.warn(f"{os.path.join(self.folder, key + '.npy')}: captured value not "
                          f"loaded ({e}); it reads as None", RuntimeWarning, stacklevel=4)
            return None


def _header(path, first: bytes) -> dict:
    if not first.strip():
        raise TraceFormatError(f"{path}:1: empty file, expected a {FORMAT} header line")
    try:
        header = json.loads(first)
    except (ValueError, RecursionError) as e:
        raise TraceFormatError(f"{path}:1: malformed header line: {e}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TraceFormatError(f"{path}:1: not a {FORMAT} file (header {first[:80]!r})")
    version = header.get("version")
    if type(version) is not int or not 1 <= version <= VERSION:
        newer = type(version) is int and version > VERSION
        raise TraceFormatError(f"{path}:1: unknown trace format version {version!r}" +
                               (f" (newer than this reader, version {VERSION})" if newer else
                                f" (this reader knows versions 1 to {VERSION})"))
    rows = header.get("rows")
    if rows is not None and not schema_compatible(rows):
        raise TraceFormatError(f"{path}:1: the header's row fields differ from version "
                               f"{version}'s (was the file edited?)")
    return header


def _decode(path, lines, complete, values) -> list:
    """Events of ``lines`` (line 2 on): ``BATCH`` lines per C-level ``json.loads`` call,
    and a batch holding a bad line again line by line, so the error names that line."""
    events = []
    last = len(lines)
    for first in range(1, last, BATCH):
        chunk = lines[first:first + BATCH]
        mark = len(events)
        if decode_batch(chunk, values, events.append):
            continue
        del events[mark:]
        if _decode_lines(path, chunk, first + 1, last, complete, values, events.append):
            break
    return events


def decode_batch(chunk, values, append) -> bool:
    """Append the events of lines ``chunk`` (one C-level ``json.loads`` call); False, with
    some appended, when a line is not a valid row."""
    try:
        rows = json.loads(b"[" + b",".join(chunk) + b"]")
    except (ValueError, RecursionError):
        return False
    if len(rows) != len(chunk):  # a blank line, or one holding more than one value
        return False
    try:
        for row in rows:
            append(event_from_row(row, values))
    except (ValueError, TypeError):
        return False
    return True


def _decode_lines(path, chunk, lineno, last, complete, values, append) -> bool:
    """Decode one line at a time; True when a truncated last line ended the trace."""
    for lineno, raw in enumerate(chunk, start=lineno):
        try:
            append(event_from_row(json.loads(raw), values))
        except (ValueError, TypeError, RecursionError) as e:
            if not raw.strip():
                continue
            if lineno == last and not complete:
                warnings.warn(f"{path}:{lineno}: skipped a truncated last line (the recording "
                              "process probably stopped mid-write)", RuntimeWarning, stacklevel=4)
                return True
            if isinstance(e, RecursionError):
                e = "nested too deeply"
            raise TraceFormatError(f"{path}:{lineno}: malformed trace line: {e}") from None
    return False


def load_trace(path) -> LoadedTrace:
    """The events (and captured values) of a ``.jsonl`` trace written by ``pfd.trace``."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    if complete:
        lines.pop()
    header = _header(path, lines[0] if lines else b"")
    values = _Values(path)
    with paused_gc():
        if MARKED in data:
            try:
                settle_rows(lines, 1)
            except BadPending as e:
                raise TraceFormatError(f"{path}:{e.index + 1}: malformed trace line: "
                                       f"{e}") from None
        events = _decode(path, lines, complete, values)
    threads = _origins(path)
    if threads:   # remote threads get this process's ids for the same workers
        events = [e._replace(thread=threads[e.thread]) if e.thread in threads else e
                  for e in events]
    return LoadedTrace(events, header, values.loaded)


def origins_path(path) -> str:
    """Where a ``.jsonl`` trace says which worker process each remote thread was."""
    return os.fspath(path) + ".origins.json"


def _origins(path) -> dict:
    """File thread id -> this process's id for that worker thread (``events.remote_thread``);
    a damaged origins file gives one warning and no origins."""
    where = origins_path(path)
    try:
        with open(where, encoding="utf-8") as f:
            data = json.load(f)
        if type(data) is not dict:
            raise ValueError("not an object")
        threads = {}
        for key, value in data.items():
            if not (type(value) is list and len(value) == 3 and type(value[0]) is str
                    and type(value[1]) is int and type(value[2]) is str):
                raise ValueError(f"bad entry for thread {key[:20]!r}")
            thread = int(key)
            if thread >= 0:
                raise ValueError(f"thread {thread} is not a remote thread id")
            threads[thread] = ev.remote_thread(value[0], value[1], thread, value[2])
        return threads
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as e:
        warnings.warn(f"{where}: worker origins not loaded ({e}); remote threads stay "
                      "unnamed", RuntimeWarning, stacklevel=3)
        return {}
