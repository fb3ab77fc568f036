"""The one screen both apps share: ops | inspector over events | breakpoints, status, keys."""
from __future__ import annotations

import dataclasses

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Footer, Header

from .widgets.breakpoint_list import BreakpointList
from .widgets.event_log import EventLog
from .widgets.inspector import Inspector
from .widgets.op_list import OpList
from .widgets.status_bar import StatusBar

__all__ = ["compose_panes", "title_panes", "fit_footer"]


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


# Footer labels for terminals under 100 columns: every key still shows at 80.
SHORT_LABELS = {"n": "next", "s": "step in", "b": "break", "e": "err", "N": "NaN"}


def fit_footer(app, width: int) -> None:
    """Every footer key visible at 80 columns: compact spacing below 120 columns; below
    100, shorter labels and no ^p hint (the palette is still on ctrl+p)."""
    footer = app.query_one(Footer)
    footer.compact = width < 120
    footer.show_command_palette = width >= 100
    narrow = width < 100
    if getattr(app, "_pfd_narrow", None) is narrow:
        return
    app._pfd_narrow = narrow
    # Textual has no public way to relabel a binding; its bindings map is replaced in kind
    table = getattr(getattr(app, "_bindings", None), "key_to_bindings", None)
    if table is None:
        return
    for key, short in SHORT_LABELS.items():
        bindings = table.get(key)
        if not bindings:
            continue
        b = bindings[0]
        full = getattr(b, "_pfd_full", None) or b.description
        label = short if narrow else full
        new = dataclasses.replace(b, description=label)
        object.__setattr__(new, "_pfd_full", full)
        table[key] = [new, *bindings[1:]]
    app.refresh_bindings()
