"""The messages of the attach protocol, and a pause as the client sees it.

Client to target: ``attach`` (version, token), ``go`` (ready: releases
``--wait``), ``answer`` (pause id, action), ``break_on`` / ``remove``
(replied), ``value`` (replied with the full value), ``interrupt``,
``pdb_in`` (text typed into a remote pdb), ``detach``.
Target to client: ``welcome`` or ``refused``, ``events`` (rows of the JSONL
trace codec, and op records: see ``event_stream``), ``pause``, ``breakpoints``, ``reply``, ``pdb_start`` /
``pdb_out`` / ``pdb_end``, ``bye`` (the process is ending).
"""
from __future__ import annotations

from ..debug.frontend import BreakpointInfo
from ..trace.codec import event_from_row, event_to_row, summary_from_row, summary_to_row
from .wire import WireError, decoding, from_npy, to_npy

__all__ = ["pause_message", "PauseView", "RemoteError", "breakpoints_message",
           "breakpoints_from", "INLINE_BYTES"]

INLINE_BYTES = 64 * 1024   # values up to this size travel with the pause; larger on request

_BP_FIELDS = ("id", "op", "op_type", "when", "on_error", "on_warning", "hit_count", "enabled",
              "hits", "description")


def breakpoints_message(infos) -> dict:
    return {"t": "breakpoints", "list": [[getattr(b, f) for f in _BP_FIELDS] for b in infos]}


_OPT_STR = (str, type(None))
_BP_TYPES = ((int,), _OPT_STR, _OPT_STR, _OPT_STR, (bool,), (bool,), (int, type(None)), (bool,),
             (int,), (str,))


def breakpoints_from(rows) -> list:
    """``BreakpointInfo``s from a message's rows; ``WireError`` naming the bad field."""
    if type(rows) is not list:
        raise WireError("malformed breakpoint list: not a list")
    out = []
    for i, row in enumerate(rows):
        if type(row) is not list or len(row) != len(_BP_FIELDS):
            raise WireError(f"malformed breakpoint list: row {i} is not a list of "
                            f"{len(_BP_FIELDS)} fields")
        for name, value, types in zip(_BP_FIELDS, row, _BP_TYPES):
            if type(value) not in types:
                raise WireError(f"malformed breakpoint list: row {i} field {name!r} is "
                                f"{type(value).__name__}")
        out.append(BreakpointInfo(*row))
    return out


def _values_of(values, blobs, cap) -> list:
    """Blob index of each value small enough to travel inline, else None."""
    out = []
    for v in values:
        data = to_npy(v) if getattr(v, "nbytes", 0) <= cap else None
        if data is None:
            out.append(None)
        else:
            out.append(len(blobs))
            blobs.append(data)
    return out


def pause_message(pause, pause_id: int, cap: int = INLINE_BYTES) -> tuple[dict, list]:
    """A ``Pause`` (target side) as a message and its blobs: summaries always, values
    up to ``cap`` bytes each."""
    blobs: list = []
    error = pause.error
    msg = {
        "t": "pause", "id": pause_id, "op": pause.op_name, "op_type": pause.op_type,
        "when": pause.when, "source": pause.source, "run_id": pause.run_id,
        "thread": pause.thread, "parent": pause.parent, "wrapped": pause.wrapped,
        "actions": list(pause.actions), "describe": pause.describe(),
        "describe_short": pause.describe_short,
        "breakpoint": pause.breakpoint.describe() if pause.breakpoint is not None else None,
        "producers": pause.producers(),
        "inputs": [summary_to_row(s) for s in pause.input_summaries()],
        "outputs": None if pause.outputs is None else
        [summary_to_row(s) for s in pause.output_summaries()],
        "error": None if error is None else {"type": type(error).__name__, "text": str(error)},
        "warning": None if pause.warning is None else event_to_row(pause.warning),
        "values": {"inputs": _values_of(pause.inputs, blobs, cap),
                   "outputs": _values_of(pause.outputs or (), blobs, cap)},
    }
    return msg, blobs


def _typed(value, kind):
    if type(value) is not kind:
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _values(indices, blobs, n: int, which: str) -> list:
    """The values that travelled with a pause (None where a blob index is None)."""
    if indices is None:
        return [None] * n
    if type(indices) is not list or len(indices) != n:
        raise ValueError(f"expected a list of {n} blob indices")
    for i in indices:
        if i is not None and not 0 <= _typed(i, int) < len(blobs):
            raise IndexError(f"blob {i} of {len(blobs)}")
    return [None if i is None else from_npy(blobs[i], f"values.{which}") for i in indices]


class RemoteError(Exception):
    """An error raised in the target process, as text (``type_name`` is its class)."""

    def __init__(self, type_name: str, text: str):
        super().__init__(text)
        self.type_name = type_name


class _Label:
    """A breakpoint's description, where a frontend reads ``pause.breakpoint.describe()``."""

    def __init__(self, text: str):
        self.text = text

    def describe(self) -> str:
        return self.text


class PauseView:
    """A pause in another process: what ``debug.pause.Pause`` offers a frontend, as data.

    ``inputs``/``outputs`` hold the values that travelled with the pause (``None``
    for larger ones); ``value(which, i)`` fetches a full value from the target.
    """

    op = None

    def __init__(self, msg: dict, blobs: list, fetch):
        with decoding("pause", "id"):
            self.id = _typed(msg["id"], int)
        with decoding("pause", "op"):
            self.op_name, self.op_type = _typed(msg["op"], str), _typed(msg["op_type"], str)
            self.when = _typed(msg["when"], str)
        with decoding("pause", "source"):
            self.source, self.run_id = str(msg.get("source") or ""), msg.get("run_id")
            self.thread, self.parent = _typed(msg.get("thread") or 0, int), msg.get("parent")
            self.wrapped = bool(msg.get("wrapped"))
        with decoding("pause", "actions"):
            self.actions = tuple(_typed(a, str) for a in _typed(msg["actions"], list))
        with decoding("pause", "describe"):
            self._describe = _typed(msg["describe"], str)
            self.describe_short = _typed(msg["describe_short"], str)
        with decoding("pause", "breakpoint"):
            label = msg.get("breakpoint")
            self.breakpoint = _Label(_typed(label, str)) if label else None
        with decoding("pause", "producers"):
            self._producers = [_typed(p, str) for p in _typed(msg.get("producers") or [], list)]
        with decoding("pause", "inputs"):
            self._in = [summary_from_row(r, "inputs") for r in _typed(msg["inputs"], list)]
        with decoding("pause", "outputs"):
            self._out = None if msg["outputs"] is None else \
                [summary_from_row(r, "outputs") for r in _typed(msg["outputs"], list)]
        with decoding("pause", "error"):
            err = msg.get("error")
            self.error = None if err is None else RemoteError(str(err["type"]), str(err["text"]))
        with decoding("pause", "warning"):
            self.warning = None if msg.get("warning") is None else event_from_row(msg["warning"])
        vals = msg.get("values") or {}
        with decoding("pause", "values.inputs"):
            self.inputs = _values(vals.get("inputs"), blobs, len(self._in), "inputs")
        with decoding("pause", "values.outputs"):
            self.outputs = None if self._out is None else \
                _values(vals.get("outputs"), blobs, len(self._out), "outputs")
        self._fetch = fetch

    @property
    def error_type(self) -> str:
        return self.error.type_name if self.error is not None else ""

    def value(self, which: str, index: int):
        values = self.outputs if which == "outputs" else self.inputs
        v = values[index]
        if v is None:
            v = self._fetch(self.id, which, index % len(values))
            if v is not None:
                values[index] = v
        return v

    def producers(self) -> list:
        return self._producers

    def input_summaries(self) -> list:
        return self._in

    def output_summaries(self) -> list:
        return self._out or []

    def describe(self) -> str:
        return self._describe
