"""BreakpointList: the debugger's breakpoints, enabled state and hit counts."""
from __future__ import annotations

from textual.widgets import Static

__all__ = ["BreakpointList"]


class BreakpointList(Static):
    """Display only: ``show(breakpoints)`` redraws the list (when its text changed)."""

    _text = None

    def show(self, breakpoints, notes=()) -> None:
        """``notes``: why a breakpoint cannot fire (e.g. its op is folded), one line each."""
        if not breakpoints:
            self._set("no breakpoints — b: on the selected op, e: on error, N: on NaN/Inf, "
                      "ctrl+p: conditional")
            return
        lines = []
        for bp in breakpoints:
            state = "●" if bp.enabled else "○"
            lines.append(f"{state} {bp.describe()}  hits={bp.hits}")
        lines += [f"  ⚠ {note}" for note in notes]
        self._set("\n".join(lines))

    def _set(self, text: str) -> None:
        if text != self._text:
            self._text = text
            self.update(text)
