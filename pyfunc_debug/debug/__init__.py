"""``pfd.debug``: pause runs at breakpoints, inspect values, step into wrapped functions.

No Textual here: the console frontend and the TUI are both frontends of this core.
"""
from __future__ import annotations

from .breakpoints import Breakpoint
from .console import ConsoleFrontend
from .debugger import Debugger, attached
from .pause import ACTIONS, Pause
from .pdb_bridge import PdbRunner
from ..ops.debug_ops import breakpoint_op as breakpoint  # noqa: A001 - SPEC's name

__all__ = ["Debugger", "attached", "Breakpoint", "Pause", "ACTIONS", "PdbRunner", "breakpoint",
           "ConsoleFrontend", "listen"]


def listen(address: str = "127.0.0.1:0", wait: bool = False, token: str | None = None):
    """Serve this process's events and debugger on ``address`` for ``pyfunc-debug attach``
    (SPEC §7); returns ``(host, port, token)``. See ``pyfunc_debug.remote.listen``."""
    from ..remote.listen import listen as _listen   # sockets only when asked for
    return _listen(address, wait=wait, token=token)

