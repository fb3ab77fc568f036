"""``listen``: serve this process's debugger on a socket (SPEC §7), once per process."""
from __future__ import annotations

import atexit
import os
import secrets

from ..runtime.loop import hold_first_run
from .address import parse_address
from .server import Server

__all__ = ["listen", "current_server", "start_from_environment", "new_token"]

_server: list = []   # the process's one server (a process listens on one address)


def current_server() -> Server | None:
    """The server ``listen`` started in this process, or None."""
    return _server[0] if _server else None


def new_token() -> str:
    """A random token (128 bits) as hex: it never starts with "-", which ``attach --token``
    would take for an option (a base64 token did, one time in 64)."""
    return secrets.token_hex(16)


def listen(address: str = "127.0.0.1:0", wait: bool = False, token: str | None = None,
           title: str = "", link=None, hold: bool = False) -> tuple[str, int, str]:
    """Serve events and debugger control on ``address`` (``HOST:PORT``; port 0 picks a
    free one; host 127.0.0.1 unless given) to one client at a time; return
    ``(host, port, token)``. Prints ``pyfunc-debug: listening on HOST:PORT token TOKEN``
    to stderr. A client must send ``token`` (default: ``PYFUNC_DEBUG_TOKEN``, else a
    random one). ``wait=True`` returns only once a client is attached; ``hold=True``
    returns at once, and the process's first run waits for a client instead.
    """
    if _server:
        s = _server[0]
        raise RuntimeError(f"this process already listens on {s.host}:{s.port}")
    host, port = parse_address(address)
    token = token or os.environ.get("PYFUNC_DEBUG_TOKEN") or new_token()
    server = Server(host, port, token, link, title)
    _server.append(server)
    server.announce()
    atexit.register(server.close)
    if hold:   # the first run waits until the client has set its breakpoints ("go")
        hold_first_run(server.attached)
    if wait:
        server.wait_for_client()
    return server.host, server.port, token


def start_from_environment() -> None:
    """``PYFUNC_DEBUG_LISTEN=HOST:PORT`` (read, then removed, so child processes do not
    inherit it); ``PYFUNC_DEBUG_WAIT=1`` holds the first run until a client is attached."""
    address = os.environ.pop("PYFUNC_DEBUG_LISTEN", "")
    if address and not _server:
        listen(address, hold=os.environ.get("PYFUNC_DEBUG_WAIT", "") not in ("", "0"))
