"""Command palette: conditional breakpoints (checked as typed) and finding ops by name."""
from __future__ import annotations

from functools import partial

from textual.command import Hit, Hits, Provider

from pyfunc_debug.debug.conditions import BUILTINS, compile_condition

__all__ = ["DebugCommands"]


class DebugCommands(Provider):
    """``break when <expr>`` adds a conditional breakpoint; an op name selects that op."""

    async def search(self, query: str) -> Hits:
        app = self.app
        q = query.strip()
        for prefix in ("break when ", "when "):
            if q.lower().startswith(prefix):
                expr = q[len(prefix):].strip()
                yield self._condition_hit(expr)
                return
        matcher = self.matcher(q)
        if "break when".startswith(q.lower()) or not q:
            yield Hit(0.5, "break when <expr>", lambda: None,
                      help="type e.g. 'break when np.any(outputs[0] > 10)' or a builtin: "
                           + ", ".join(sorted(BUILTINS)))
        for name in list(app.model.order):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(f"go to op {name}"),
                          partial(app.select_op, name), help=app.model.rows[name].op_type)

    def _condition_hit(self, expr: str) -> Hit:
        if not expr:
            return Hit(0.1, "break when … (type a condition over inputs, outputs, np)", lambda: None)
        try:
            compile_condition(expr)
        except ValueError as e:
            return Hit(0.1, f"✗ {e}", lambda: None, help="fix the expression to add it")
        return Hit(1.0, f"add breakpoint: break when {expr}",
                   partial(self.app.add_condition, expr),
                   help="pauses after ops where it holds" if "outputs" in expr
                   else "pauses before ops where it holds")
