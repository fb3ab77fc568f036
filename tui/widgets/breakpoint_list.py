"""BreakpointList: the debugger's breakpoints, enabled state and hit counts."""
from __future__ import annotations

from textual.widgets import Static

__all__ = ["BreakpointList"]


class BreakpointList(Static):
    """Display only: ``show(breakpoints)`` redraws the list."""

    def show(self, breakpoints, notes=()) -> None:
        """``notes``: why a breakpoint cannot fire (e.g. its op is folded), one line each."""
        if not breakpoints:
            self.update("no breakpoints — b: on the selected op, e: on error, N: on NaN/Inf, "
                        "ctrl+p: conditional")
            return
        lines = []
        for bp in breakpoints:
            state = "●" if bp.enabled else "○"
            lines.append(f"{state} {bp.describe()}  hits={bp.hits}")
        lines += [f"  ⚠ {note}" for note in notes]
        self.update("\n".join(lines))
