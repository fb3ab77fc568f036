"""Messages widgets post upward; the app routes them."""
from __future__ import annotations

from textual.message import Message

__all__ = ["OpSelected"]


class OpSelected(Message):
    """The op list's cursor moved to the op named ``name``."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

