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
           "ConsoleFrontend"]

