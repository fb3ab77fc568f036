"""Pause: what a frontend sees when the executing thread stops, and the actions it may return."""
from __future__ import annotations

from dataclasses import dataclass

from ..trace.summary import summarize
from ..source_text import relative_source

__all__ = ["Pause", "ACTIONS"]

ACTIONS = ("continue", "step", "step_into", "post_mortem", "abort")


@dataclass
class Pause:
    """The op about to run (``when="before"``), just run (``"after"``) or failed (``"error"``).

    ``op`` is the ``Operation`` (``None`` for an eager op inside a py_function,
    whose name is ``op_name`` and enclosing op ``parent``). ``inputs`` and
    ``outputs`` are the real numpy values; ``inputs`` are as they were when the op
    started, in every kind of pause (an op that wrote into them leaves them as
    ``inputs_after``, which is ``None`` when nothing changed).
    """

    op: object
    op_name: str
    op_type: str
    when: str
    inputs: list
    outputs: list | None = None
    error: BaseException | None = None
    breakpoint: object = None
    source: str = ""
    run_id: int | None = None
    thread: int = 0
    parent: str | None = None
    wrapped: bool = False          # a py_func/numpy_function/py_function: step_into possible
    warning: object = None         # the diagnostic (a Warning event) an on_warning pause is for
    inputs_after: list | None = None   # the inputs as the op left them, when it changed them
    warnings: tuple = ()           # every diagnostic this pause is for (``warning`` is the first)
    # why the op did not run in this run (folded, de-duplicated): its values are reused
    not_run: str = ""
    # after the op ran: step_into calls its function again, under pdb, on ``inputs``
    replayable: bool = False

    def producers(self) -> list:
        """The name of the op that produced each input ("" when unknown)."""
        tensors = getattr(self.op, "inputs", None)   # a framework's op has no graph inputs
        if tensors is None:
            return [""] * len(self.inputs)
        return [t.op.name for t in tensors][:len(self.inputs)]

    @property
    def actions(self) -> tuple:
        """The actions that make sense here."""
        acts = ["continue", "step"]
        if self.wrapped and (self.when == "before" or self.replayable):
            acts.append("step_into")
        if self.when == "error" and self.error is not None:
            acts.append("post_mortem")
        acts.append("abort")
        return tuple(acts)

    def why_not(self, action: str) -> str:
        """Why ``action`` is not possible at this pause ("" when it is)."""
        if action in self.actions:
            return ""
        what = f"op '{self.op_name}' ({self.op_type})"
        if action == "post_mortem":
            return "post-mortem is only possible at an error pause"
        if action != "step_into":
            return f"{action!r} is not an action"
        if not self.wrapped:
            return (f"{what} runs no Python function of yours (only py_func, numpy_function "
                    "and py_function ops do)")
        if self.when == "error":
            return f"{what} already failed: post-mortem (p) opens pdb where it failed"
        return (f"{what} already ran and its function cannot be called again from here "
                f"(break before it, b {self.op_name}, and run again)")

    def value(self, which: str, index: int):
        """The full value of input/output ``index`` (``which``: "inputs" or "outputs");
        a remote pause fetches it on request."""
        return (self.outputs if which == "outputs" else self.inputs)[index]

    @property
    def error_type(self) -> str:
        return type(self.error).__name__ if self.error is not None else ""

    def input_summaries(self) -> list:
        return [summarize(v) for v in self.inputs]

    def output_summaries(self) -> list:
        return [summarize(v) for v in self.outputs or ()]

    @property
    def describe_short(self) -> str:
        where = {"before": "paused before it runs", "after": "paused after it ran",
                 "error": "paused at its error"}[self.when]
        if self.not_run:
            where = f"paused at it: it did not run in this run ({self.not_run})"
        text = where + (f" — {self.breakpoint.describe()}" if self.breakpoint is not None else "")
        for w in self.warnings or ((self.warning,) if self.warning is not None else ()):
            text += f"\n⚠ {w.message}"
        return text

    def describe(self) -> str:
        where = {"before": "before", "after": "after", "error": "at error in"}[self.when]
        if self.not_run:
            where = "at"
        bp = f"  [{self.breakpoint.describe()}]" if self.breakpoint is not None else ""
        place = f" inside '{self.parent}'" if self.parent else ""
        if self.source:
            place += f" created at {relative_source(self.source)}"
        ran = f" (it did not run: {self.not_run})" if self.not_run else ""
        return (f"paused {where} op '{self.op_name}' ({self.op_type}){place}, "
                f"run {self.run_id}{ran}{bp}")
