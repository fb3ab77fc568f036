"""Breakpoint: where to pause (op name glob, op type, condition, on error, hit count)."""
from __future__ import annotations

import difflib
import fnmatch

from .conditions import Condition, compile_condition

__all__ = ["Breakpoint", "unmatched"]

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


def unmatched(breakpoints, seen) -> list[str]:
    """A note for each breakpoint on an op name or type that matched none of the ops
    ``seen`` ((name, type) of every op that ran or was planned) and never hit: a typo in a
    glob pauses nowhere, silently. The nearest name (or scope glob) is suggested."""
    seen = set(seen)
    notes = []
    for bp in breakpoints:
        op, typ = getattr(bp, "op", None), getattr(bp, "op_type", None)
        if (op is None and typ is None) or getattr(bp, "hits", 0) or \
                not getattr(bp, "enabled", True) or getattr(bp, "id", 1) == 0:
            continue
        if any((op is None or n == op or fnmatch.fnmatchcase(n, op)) and
               (typ is None or t == typ) for n, t in seen):
            continue
        if op is not None:   # names, and their scopes as globs ("features/*")
            names = {n for n, _ in seen}
            options = sorted(names | {n.rsplit("/", 1)[0] + "/*" for n in names if "/" in n})
            near = difflib.get_close_matches(op, options, n=1, cutoff=0.6)
        else:
            near = difflib.get_close_matches(typ, sorted({t for _, t in seen}), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        notes.append(f"{bp.describe()} matched no op that ran{hint}")
    return notes
