"""Time spent waiting for the user (paused, or in pdb), so durations can leave it out.

Events carry wall times: a ``py_function`` held at a pause before one of its eager
ops, a function stepped into with pdb, a run held at a breakpoint all count the
waiting. The UI shows durations without it. A pause lasts from its
``BreakpointHit`` to the next event of the same thread; a pdb session's span is
measured by the bridge on the thread that ran it (the same clock as ``t_ns``).
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["PdbSpan", "Waits", "duration_text"]

KEEP = 512      # spans kept per thread (older ones belong to finished ops and runs)


class PdbSpan(NamedTuple):
    """A pdb session ran on ``thread`` from ``start_ns`` to ``end_ns`` (``perf_counter_ns``)."""

    thread: int
    start_ns: int
    end_ns: int


class Waits:
    """Spans of waiting per thread; ``within`` says how much fell inside a time range."""

    def __init__(self):
        self._open: dict[int, int] = {}       # thread -> t_ns of a pause not yet over
        self._spans: dict[int, list] = {}     # thread -> [(start, end, in_pdb)]

    def paused(self, thread: int, t_ns: int) -> None:
        # a pause still open on this thread (after one op, then before the next: no event
        # between them) ended when this one began: its time counts too
        self.moved_on(thread, t_ns)
        self._open[thread] = t_ns

    def moved_on(self, thread: int, t_ns: int) -> None:
        """An event of ``thread``: a pause of that thread is over by now."""
        start = self._open.pop(thread, None)
        if start is not None and t_ns > start:
            self._add(thread, start, t_ns, False)

    def pdb(self, span: PdbSpan) -> None:
        self._add(span.thread, span.start_ns, span.end_ns, True)

    def _add(self, thread: int, start: int, end: int, in_pdb: bool) -> None:
        spans = self._spans.setdefault(thread, [])
        spans.append((start, end, in_pdb))
        del spans[:-KEEP]

    def within(self, t0: int, t1: int, thread: int | None = None) -> tuple[int, bool]:
        """(ns of waiting inside ``[t0, t1]`` — on ``thread``, or on any thread when
        ``None`` — and whether a pdb session ran there)."""
        if thread is not None:
            spans = self._spans.get(thread)
            if not spans:   # the common case, once per op end: nobody paused this thread
                return 0, False
            groups = [spans]
        else:
            groups = self._spans.values()
        cut = sorted((max(s, t0), min(e, t1), p) for g in groups for s, e, p in g
                     if s < t1 and e > t0)
        total, in_pdb, end = 0, False, t0
        for s, e, p in cut:            # a union: spans of several threads may overlap
            in_pdb = in_pdb or p
            if e > end:
                total += e - max(s, end)
                end = e
        return total, in_pdb


def duration_text(ns: int) -> str:
    """``ns`` in the unit that reads best: ns, µs, ms or s."""
    if ns < 1_000:
        return f"{ns}ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f}µs"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.1f}ms"
    return f"{ns / 1e9:.1f}s"
