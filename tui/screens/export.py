"""ExportScreen: ask where to write the trace (default ``trace.json``)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

__all__ = ["ExportScreen"]


class ExportScreen(ModalScreen[str | None]):
    """Returns the path typed (``.json`` for Perfetto, ``.jsonl`` for ``view``), or None."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog"):
            yield Label("Export the trace to:", id="export-prompt")
            yield Input(value="trace.json", id="export-path")
            yield Label(".json opens in ui.perfetto.dev; .jsonl in pyfunc-debug view",
                        classes="hint")
            yield Label("enter: write   escape: cancel", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = event.value.strip()
        if not path.endswith((".json", ".jsonl")):
            self.query_one("#export-prompt", Label).update("The path must end in .json or "
                                                           ".jsonl:")
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)
