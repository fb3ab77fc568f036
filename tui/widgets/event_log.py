"""EventLog: the live event stream as lines, over a bounded buffer."""
from __future__ import annotations

from textual.widgets import Log

__all__ = ["EventLog"]

MAX_LINES = 5000


class EventLog(Log):
    """A line-based log (Textual ``Log``) keeping the last ``MAX_LINES`` lines.

    It also shows what the script prints (the app captures ``print`` into it).
    """

    def __init__(self, **kw):
        super().__init__(max_lines=MAX_LINES, highlight=False, **kw)
        self._partial = ""

    def printed(self, text: str, stderr: bool) -> list[str]:
        """Log lines for printed ``text`` (a line shows once it is complete)."""
        text = self._partial + text
        *lines, self._partial = text.split("\n")
        return [f"  [{'stderr' if stderr else 'stdout'}] {line}" for line in lines]

    def add(self, lines: list[str]) -> None:
        if lines:
            self.write_lines(lines[-MAX_LINES:])
