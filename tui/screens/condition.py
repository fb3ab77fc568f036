"""ConditionScreen: type a breakpoint condition, checked as it is typed."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

__all__ = ["ConditionScreen"]


class ConditionScreen(ModalScreen[str | None]):
    """Returns a condition that compiles (an expression or a builtin name), or None."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def compose(self) -> ComposeResult:
        # imported here: the debugger core's conditions are not needed to import the UI
        from pyfunc_debug.debug.conditions import BUILTINS
        with Vertical(id="condition-dialog", classes="dialog"):
            yield Label("Break when (over inputs, outputs, np):")
            yield Input(placeholder="np.any(outputs[0] > 10)", id="condition")
            yield Label("or a builtin: " + ", ".join(sorted(BUILTINS)), classes="hint")
            yield Label("enter: add   escape: cancel", id="condition-status", classes="hint")

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#condition-status", Label).update(self._problem(event.value) or
                                                          "enter: add   escape: cancel")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        expr = event.value.strip()
        if not self._problem(expr):
            self.dismiss(expr)

    @staticmethod
    def _problem(expr: str) -> str:
        if not expr.strip():
            return "type a condition"
        from pyfunc_debug.debug.conditions import compile_condition   # see compose
        try:
            compile_condition(expr.strip())
        except ValueError as e:
            return f"✗ {e}"
        return ""

    def action_cancel(self) -> None:
        self.dismiss(None)
