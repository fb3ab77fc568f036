"""Messages widgets post upward; the app routes them."""
from __future__ import annotations

from textual.message import Message

__all__ = ["OpSelected", "BreakpointToggled"]


class OpSelected(Message):
    """The op list's cursor moved to the op named ``name``."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class BreakpointToggled(Message):
    """The user asked for a breakpoint on ``name`` to be toggled."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
