"""StatusBar: run state, run number, ops done / total, events/s, and messages."""
from __future__ import annotations

from textual.widgets import Static

__all__ = ["StatusBar"]


class StatusBar(Static):
    """One line of display state, set by the app."""

    def show(self, state: str, run: int, done: int, total: int, events: int,
             rate: float | None, message: str = "", warnings: int = 0) -> None:
        parts = [f" {state.upper()}", f"run {run}", f"ops {done}/{total}", f"events {events:,}"]
        if warnings:
            parts.append(f"⚠ {warnings} warning{'s' if warnings != 1 else ''} — w")
        if rate is not None:
            parts.append(f"{rate:,.0f} ev/s")
        if message:
            parts.append(message)
        self.update("  │  ".join(parts))
