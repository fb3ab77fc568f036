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
from .wire import from_npy, to_npy

__all__ = ["pause_message", "PauseView", "RemoteError", "breakpoints_message",
           "breakpoints_from", "INLINE_BYTES"]

INLINE_BYTES = 64 * 1024   # values up to this size travel with the pause; larger on request

_BP_FIELDS = ("id", "op", "op_type", "when", "on_error", "on_warning", "hit_count", "enabled",
              "hits", "description")


def breakpoints_message(infos) -> dict:
    return {"t": "breakpoints", "list": [[getattr(b, f) for f in _BP_FIELDS] for b in infos]}


def breakpoints_from(rows) -> list:
    if type(rows) is not list or not all(type(r) is list and len(r) == len(_BP_FIELDS)
                                         for r in rows):
        raise ValueError("malformed breakpoint list")
    return [BreakpointInfo(*r) for r in rows]


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
        self.id = msg["id"]
        self.op_name, self.op_type, self.when = str(msg["op"]), str(msg["op_type"]), msg["when"]
        self.source, self.run_id = msg.get("source") or "", msg.get("run_id")
        self.thread, self.parent = msg.get("thread") or 0, msg.get("parent")
        self.wrapped = bool(msg.get("wrapped"))
        self.actions = tuple(msg["actions"])
        self._describe, self.describe_short = msg["describe"], msg["describe_short"]
        self.breakpoint = _Label(msg["breakpoint"]) if msg.get("breakpoint") else None
        self._producers = list(msg.get("producers") or [])
        self._in = [summary_from_row(r, "inputs") for r in msg["inputs"]]
        self._out = None if msg["outputs"] is None else \
            [summary_from_row(r, "outputs") for r in msg["outputs"]]
        err = msg.get("error")
        self.error = None if err is None else RemoteError(str(err["type"]), str(err["text"]))
        self.warning = None if msg.get("warning") is None else event_from_row(msg["warning"])
        vals = msg.get("values") or {}
        self.inputs = [from_npy(blobs[i]) if i is not None else None
                       for i in vals.get("inputs", [None] * len(self._in))]
        self.outputs = None if self._out is None else \
            [from_npy(blobs[i]) if i is not None else None
             for i in vals.get("outputs", [None] * len(self._out))]
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
