"""Breakpoint: where to pause (op name glob, op type, condition, on error, hit count)."""
from __future__ import annotations

import fnmatch

from .conditions import Condition, compile_condition

__all__ = ["Breakpoint"]

# bumped when any breakpoint is added or removed (mid-run too); run loops compare it
changes = [0]


class Breakpoint:
    """A place to pause; ``enabled`` toggles it, ``hits`` counts matching executions.

    ``hit_count=N`` pauses from the N-th hit on (earlier hits only count).
    """

    def __init__(self, op=None, op_type=None, when=None, on_error=False, hit_count=None,
                 id: int = 0, on_warning: bool = False):  # noqa: A002
        self.id = id
        self.op = op
        self.op_type = op_type
        self.condition: Condition | None = compile_condition(when)
        self.on_error = bool(on_error)
        self.on_warning = bool(on_warning)   # after an op that raised a diagnostic
        self.hit_count = hit_count
        self.enabled = True
        self.hits = 0

    @property
    def pauses_after(self) -> bool:
        """Checked after the op: the condition reads outputs, or it waits for a diagnostic
        (on_error pauses at the error)."""
        return self.on_warning or (self.condition is not None and self.condition.reads_outputs)

    def matches_op(self, name: str, op_type: str) -> bool:
        """Static part of the match: name glob and op type."""
        if self.op is not None and not (name == self.op or fnmatch.fnmatchcase(name, self.op)):
            return False
        return self.op_type is None or op_type == self.op_type

    def describe(self) -> str:
        parts = []
        if self.op is not None:
            parts.append(f"op={self.op}")
        if self.op_type is not None:
            parts.append(f"type={self.op_type}")
        if self.condition is not None:
            parts.append(f"when={self.condition.label}")
        if self.on_error:
            parts.append("on_error")
        if self.on_warning:
            parts.append("on_warning")
        if self.hit_count:
            parts.append(f"hit_count={self.hit_count}")
        if self.id == 0:
            return "pfd.debug.breakpoint op"
        return f"breakpoint {self.id}: " + (" ".join(parts) or "every op")

    def __repr__(self) -> str:
        state = "" if self.enabled else " (disabled)"
        return f"<{self.describe()}, hits={self.hits}{state}>"
