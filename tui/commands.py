"""Command palette: our commands first (break when…, go to op, export), then Textual's.

``break when <expr>`` typed in the palette adds a conditional breakpoint,
checked as it is typed; an op's name selects that op. With nothing typed, the
palette lists our commands before Textual's own (theme, keys, quit, …): this
provider serves both, so the order does not depend on which provider answers
first.
"""
from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

__all__ = ["DebugCommands"]


def _help_when() -> str:
    # imported here: the debugger core's conditions are not needed to import the UI
    from pyfunc_debug.debug.conditions import BUILTINS
    return "type e.g. 'break when np.any(outputs[0] > 10)' or a builtin: " + \
        ", ".join(sorted(BUILTINS))


class DebugCommands(Provider):
    """``break when <expr>`` adds a conditional breakpoint; an op name selects that op."""

    def _ours(self) -> list:
        """(title, callback, help) of our commands, in the order they are listed."""
        app = self.app
        ours = [("Break when… (a condition over inputs, outputs, np)",
                 partial(app.ask_condition), _help_when())] \
            if hasattr(app, "ask_condition") else []   # not in a replay (view)
        if hasattr(app, "action_export"):
            ours.append(("Export the trace (x)", app.action_export,
                         ".json opens in ui.perfetto.dev, .jsonl in pyfunc-debug view"))
        for name in list(app.model.order):
            ours.append((f"Go to op {name}", partial(app.select_op, name),
                         app.model.rows[name].op_type))
        return ours

    def _textuals(self) -> list:
        return [(c.title, c.callback, c.help) for c in self.app.get_system_commands(self.screen)
                if c.discover]

    async def discover(self) -> Hits:
        for title, callback, help_text in self._ours() + sorted(self._textuals()):
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        q = query.strip()
        for prefix in ("break when ", "when "):
            if q.lower().startswith(prefix) and hasattr(self.app, "add_condition"):
                yield self._condition_hit(q[len(prefix):].strip())
                return
        matcher = self.matcher(q)
        for rank, commands in ((1.0, self._ours()), (0.5, self._textuals())):
            for title, callback, help_text in commands:
                score = matcher.match(title)
                if score > 0:  # ours rank above Textual's for the same match
                    yield Hit(score * rank, matcher.highlight(title), callback, help=help_text)

    def _condition_hit(self, expr: str) -> Hit:
        from pyfunc_debug.debug.conditions import compile_condition   # see _help_when
        if not expr:
            return Hit(0.1, "break when … (type a condition over inputs, outputs, np)", lambda: None)
        try:
            compile_condition(expr)
        except ValueError as e:   # Enter on it says so (the palette closes)
            return Hit(0.1, f"✗ {e}", partial(self.app.notify, f"No breakpoint added: {e}",
                                              severity="error", timeout=10),
                       help="fix the expression to add it")
        return Hit(1.0, f"add breakpoint: break when {expr}",
                   partial(self.app.add_condition, expr),
                   help="pauses after ops where it holds" if "outputs" in expr
                   else "pauses before ops where it holds")
