"""StatusBar: run state, run number, ops done / total, events/s, and messages."""
from __future__ import annotations

from textual.widgets import Static

__all__ = ["StatusBar"]


class StatusBar(Static):
    """One line of display state, set by the app."""

    def show(self, state: str, run: int, done: int, total: int, events: int,
             rate: float | None, message: str = "", warnings: int = 0, extra: int = 0) -> None:
        """``extra``: ops that ran besides those the run listed (constants folded now)."""
        ops = f"ops {done}/{total}" + (f" +{extra} folded" if extra else "")
        parts = [f" {state.upper()}", f"run {run}", ops, f"events {events:,}"]
        if warnings:
            parts.append(f"⚠ {warnings} warning{'s' if warnings != 1 else ''} — w")
        if rate is not None:
            parts.append(f"{rate:,.0f} ev/s")
        if message:
            parts.append(message)
        self.update("  │  ".join(parts))
