"""``HOST:PORT`` addresses, checked."""
from __future__ import annotations

__all__ = ["parse_address", "DEFAULT_HOST"]

DEFAULT_HOST = "127.0.0.1"   # loopback unless told otherwise


def parse_address(text: str) -> tuple[str, int]:
    """``"HOST:PORT"``, ``":PORT"`` or ``"PORT"`` (host 127.0.0.1); ``[::1]:PORT`` for IPv6."""
    text = str(text).strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or DEFAULT_HOST
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"bad address {text!r}: expected HOST:PORT, e.g. 127.0.0.1:5678") \
            from None
    if not 0 <= number <= 65535:
        raise ValueError(f"bad address {text!r}: port {number} is not in 0..65535")
    return host, number
