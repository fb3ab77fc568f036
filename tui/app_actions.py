"""The app's breakpoint and export keys (b, e, N, the palette's "Break when…", x)."""
from __future__ import annotations

from .screens.condition import ConditionScreen
from .screens.export import ExportScreen
from .widgets.breakpoint_list import BreakpointList
from .widgets.op_list import OpList

__all__ = ["BreakpointActions"]


class BreakpointActions:
    """Mixed into ``PfdApp``: needs ``bridge``, ``model``, ``tick`` and ``_update_status``."""

    def _breakpoint_ops(self) -> set:
        return {bp.op for bp in self.bridge.link.breakpoints if bp.op and bp.enabled}

    def _refresh_breakpoints(self) -> None:
        notes = [w.message for (op, kind), w in self.model.diagnostics.items()
                 if kind == "breakpoint_cannot_fire"]
        if self.target_done:   # the program ended: a glob that matched nothing says so
            from pyfunc_debug.debug.breakpoints import unmatched   # (the UI imports light)
            notes += unmatched(self.bridge.link.breakpoints, self.model.types.items())
        self.query_one(BreakpointList).show(self.bridge.link.breakpoints, notes)

    def _toggle(self, match, make) -> None:
        link = self.bridge.link
        found = next((bp for bp in link.breakpoints if match(bp)), None)
        if found is not None:
            link.remove(found.id)
        else:
            make(link)
        self._refresh_breakpoints()
        self.model.version += 1
        self.query_one(OpList).sync()

    def action_toggle_breakpoint(self) -> None:
        name = self.query_one(OpList).selected
        if name is None:
            self.notify("No op selected.", severity="warning")
            return
        self._toggle(lambda bp: bp.op == name and bp.when is None and not bp.on_error,
                     lambda dbg: dbg.break_on(op=name))

    def action_toggle_error_break(self) -> None:
        self._toggle(lambda bp: bp.on_error and bp.op is None, lambda d: d.break_on(on_error=True))

    def action_toggle_nan_break(self) -> None:
        self._toggle(lambda bp: bp.when == "nan_producer",
                     lambda d: d.break_on(when="nan_producer"))

    def add_condition(self, expr: str) -> None:
        try:
            self.bridge.link.break_on(when=expr)
        except ValueError as e:
            self.notify(str(e), severity="error")
        self._refresh_breakpoints()

    def ask_condition(self) -> None:
        """The palette's "Break when…": a dialog that checks the condition as it is typed."""
        self.push_screen(ConditionScreen(), lambda expr: expr and self.add_condition(expr))

    def action_export(self) -> None:
        def write(path):
            if not path:
                return
            from pyfunc_debug.trace.recorder import Trace
            self.tick()
            tr = Trace(capture="summary")
            tr.events = list(self.bridge.recorded)
            tr.pid = getattr(self.bridge.link, "pid", None)   # attached: the target's
            try:
                tr.save(path)
                self.message = f"wrote {len(tr.events):,} events to {path}"
                self.exported.append((path, len(tr.events)))
            except (OSError, ValueError) as e:
                self.message = f"export failed: {e}"
                # the status line cuts a long one (the path comes last): the whole text too
                self.notify(f"export to {path} failed: {e}", title="export failed",
                            severity="error", timeout=15)
            self._update_status()
        self.push_screen(ExportScreen(), write)
