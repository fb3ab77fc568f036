"""EventLog: the live event stream as lines, over a bounded buffer."""
from __future__ import annotations

from textual.widgets import Log

__all__ = ["EventLog"]

MAX_LINES = 5000


class EventLog(Log):
    """A line-based log (Textual ``Log``) keeping the last ``MAX_LINES`` lines."""

    def __init__(self, **kw):
        super().__init__(max_lines=MAX_LINES, highlight=False, **kw)

    def add(self, lines: list[str]) -> None:
        if lines:
            self.write_lines(lines[-MAX_LINES:])
