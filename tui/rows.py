"""The op list's and the inspector's view of an op: its row (its latest call), its
failure, and why it may have no values to show.

A row's summaries may be pending (a framework callback's small arrays, see
``pyfunc_debug.trace.pending``): they are taken when first read, since a running
program's ops end thousands of times a second and the screen reads a few rows a tick.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from pyfunc_debug.trace.pending import settle

__all__ = ["OpRow", "Failure", "CallInputs", "STATUS_ICONS", "RANK", "rank",
           "no_values_reason"]

# The likeliest root cause first: what the UI selects and shows on top when a run stops
RANK = ("non_finite", "shape_change", "input_modified", "tout_mismatch", "blocked_gradient",
        "deduplicated", "folded")

STATUS_ICONS = {"pending": "·", "running": "▶", "done": "✓", "error": "✗", "paused": "⏸",
                "folded": "≡", "dedup": "=", "aborted": "⊘", "unfinished": "…"}


class CallInputs(NamedTuple):
    """The inputs of a call that failed, as a pause saw them (an ``OpError`` has none)."""

    op: str
    run_id: int
    inputs: tuple             # ValueSummary per input


def _settled(v: tuple) -> tuple:
    """Summaries ``v``, any pending one (a plain tuple: ``trace.pending``) taken."""
    for s in v:
        if s.__class__ is tuple:
            return tuple(map(settle, v))
    return v


class _SettledWhenRead:
    """An ``OpRow`` field of summaries, pending ones (a framework callback's small arrays,
    ``pyfunc_debug.trace.pending``) taken when first read: a running program's ops end
    thousands of times a second, and the op list and the inspector read a few rows a
    tick. ``pair``: a field of two such tuples."""

    def __init__(self, pair: bool = False):
        self._pair = pair

    def __set_name__(self, owner, name):
        self._key = "_" + name

    def __get__(self, row, owner=None):
        if row is None:
            return ()   # the dataclass's default
        v = row.__dict__[self._key]
        if not v:
            return v
        if self._pair:
            ins, outs = _settled(v[0]), _settled(v[1])
            if ins is not v[0] or outs is not v[1]:
                v = row.__dict__[self._key] = (ins, outs)
        else:
            made = _settled(v)
            if made is not v:
                v = row.__dict__[self._key] = made
        return v

    def __set__(self, row, v):
        row.__dict__[self._key] = v


@dataclass
class OpRow:
    """One op of the current run (its latest call), as the op list and the inspector show it."""

    name: str
    op_type: str = ""
    status: str = "pending"
    source: str = ""
    duration_ns: int | None = None   # without time paused; None: not known (yet)
    waited_ns: int = 0        # time it spent paused (not in ``duration_ns``)
    under_pdb: bool = False   # it ran under pdb: its wall time is the user's, not the op's
    inputs: tuple = _SettledWhenRead()
    outputs: tuple = _SettledWhenRead()
    error: str = ""
    note: str = ""            # why it did not run: "folded: …", "same stateless call as …"
    tag: str = ""             # the same in a word or two, for the op list
    children: list = field(default_factory=list)   # eager ops inside a py_function
    inputs_after: tuple = ()  # the inputs as the op left them, when it wrote into them
    warnings: list = field(default_factory=list)   # Warning events (diagnostics) about it
    producers: tuple = ()     # the op that produced each input
    calls: int = 0            # calls that ended (a framework op may run many in one run)
    # (inputs, outputs) of its latest call that ended, kept while a newer call runs: a
    # framework op has calls in flight nearly all the time (shown as that call's, dimmed)
    ended: tuple = _SettledWhenRead(pair=True)
    in_plan: bool = True      # listed by its run's start (else: a fold step, a callback)
    # thread -> [duration_ns, waited_ns, under_pdb, warnings] of the latest call that ended
    # there: a pause shows its own call's time and diagnostics, not those of a call that
    # another thread ran meanwhile (a framework op's calls run in parallel)
    by_thread: dict = field(default_factory=dict)


@dataclass
class Failure:
    """An op that failed: what the exit summary and the status bar say about it."""

    run: int
    op: str
    op_type: str
    source: str
    error_type: str
    line: str                 # the original exception's line, e.g. "KeyError: 2"


def rank(kind: str) -> int:
    """Lower is more important (unknown kinds after the known ones)."""
    return RANK.index(kind) if kind in RANK else len(RANK)



NOT_STREAMED = ("no values: attached with --capture none, which streams no values or "
                "diagnostics until a pause (attach --capture summary streams them)")


def no_values_reason(row: OpRow, live: bool = True, streamed: bool = True,
                     remote: bool = False) -> str:
    """Why the inspector has no values to show for ``row`` (its latest call);
    ``streamed``: False when attached with ``--capture none``; ``remote``: attached to
    another process (its values come with a pause)."""
    if row.status in ("folded", "dedup"):
        return f"no values: it did not run in this run ({row.note or row.tag})"
    if row.status == "pending":
        return "no values: it has not run yet in this run"
    if row.status == "running":
        return "no values yet: it is running"
    if row.status == "unfinished":
        return ("no values: the trace ends while this call ran (the program was stopped "
                "then, or is still writing the trace)")
    if row.status in ("error", "aborted"):
        how = "was aborted" if row.status == "aborted" else "failed"
        if not live:
            return f"no values: this call {how}, and the trace holds no values for it"
        return (f"no values: this call {how}, and the inputs of a call that fails are kept "
                "only when it pauses (e: break on errors)")
    if not row.inputs and not row.outputs:
        return "no values: it has no inputs or outputs" if streamed else NOT_STREAMED
    if not live:
        return ("no values in this trace: record it with --capture full (pfd.trace: "
                "capture=\"full\") to keep them")
    if remote:
        return ("no values: attached to another process, an op's values come with a pause "
                "(b: break on it); the summaries above are exact")
    return "no values: this op's values are bigger than the live UI keeps (64 KB); the " \
           "summaries above are exact"
