"""``pyfunc_debug.remote``: the debugger over a socket (SPEC §7).

Target side: ``listen`` (``server.Server``); client side: ``client.RemoteLink``,
the same frontend protocol (``debug.frontend.Link``) as a debugger in this
process. The wire is versioned JSON lines with arrays as ``.npy`` bytes
(``wire``); nothing is pickled.
"""
from __future__ import annotations

from .listen import current_server, listen

__all__ = ["listen", "current_server"]
