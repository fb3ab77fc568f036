"""Messages widgets post upward; the app routes them."""
from __future__ import annotations

from textual.message import Message

__all__ = ["OpSelected"]


class OpSelected(Message):
    """The op list's cursor moved to the op named ``name`` (``by_user``: a key or click did,
    not the app)."""

    def __init__(self, name: str, by_user: bool = False) -> None:
        super().__init__()
        self.name = name
        self.by_user = by_user

