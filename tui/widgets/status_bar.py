"""StatusBar: run state, run number, ops done / total, events/s, and messages."""
from __future__ import annotations

from textual.widgets import Static

__all__ = ["StatusBar"]


class StatusBar(Static):
    """One line of display state, set by the app."""

    _text = None

    def show(self, state: str, run: int, done: int, total: int, events: int,
             rate: float | None, message: str = "", warnings: int = 0, extra: int = 0,
             warnings_from: str = "") -> None:
        """``extra``: ops that ran besides those the run listed (constants folded now);
        ``warnings_from``: the earlier runs the ``warnings`` came in, when no op of this
        run carries one (else ``w`` goes to them)."""
        ops = f"ops {done}/{total}" + (f" +{extra} folded" if extra else "")
        parts = [f" {state.upper()}", f"run {run}", ops, f"events {events:,}"]
        if warnings:
            parts.append(f"⚠ {warnings} warning{'s' if warnings != 1 else ''}"
                         + (f" ({warnings_from})" if warnings_from else " — w"))
        if rate is not None:
            parts.append(f"{rate:,.0f} ev/s")
        if message:
            parts.append(message)
        text = "  │  ".join(parts)
        if text != self._text:   # an unchanged line is not drawn again
            self._text = text
            self.update(text, layout=False)   # one line high, always (app.tcss)
