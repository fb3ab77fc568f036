"""The one screen both apps share: ops | inspector over events | breakpoints, status, keys."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Footer, Header

from .widgets.breakpoint_list import BreakpointList
from .widgets.event_log import EventLog
from .widgets.inspector import Inspector
from .widgets.op_list import OpList
from .widgets.status_bar import StatusBar

__all__ = ["compose_panes", "title_panes"]


def compose_panes(model, breakpoint_ops) -> ComposeResult:
    yield Header(show_clock=False)
    with Horizontal(id="top"):
        yield OpList(model, breakpoint_ops, id="ops")
        yield Inspector(id="inspector")
    with Horizontal(id="bottom"):
        yield EventLog(id="log")
        yield BreakpointList(id="breakpoints")
    yield StatusBar(id="status")
    yield Footer()


def title_panes(app, ops: str, log: str, breakpoints: str) -> None:
    for pane, title in (("#ops", ops), ("#inspector", "inspector"), ("#log", log),
                        ("#breakpoints", breakpoints)):
        app.query_one(pane).border_title = title
    app.query_one("#ops").focus()
