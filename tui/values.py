"""Which values the inspector shows for an op: its own call's, or labelled as another's.

A pause holds the real values of the call it stopped; otherwise the bridge keeps
each op's latest call and its latest call that finished. A call that failed
shows the inputs a pause before it saw; when it has none, the last call that
finished is shown, labelled with the run (or "an earlier call of this run").
"""
from __future__ import annotations

from pyfunc_debug.source_text import relative_source

from .widgets.inspector import Values

__all__ = ["values_for", "relative_source"]


def values_for(bridge, model, name: str, pause) -> tuple[Values | None, int | None]:
    """(values, from_run) for op ``name``; ``from_run``: the run they come from when not
    this op's latest call (``-1``: an earlier call of the current run)."""
    if pause is not None:
        return Values(_full(pause, "inputs"), _full(pause, "outputs"), _returned(pause),
                      after=getattr(pause, "inputs_after", None)), None   # remote: none
    call = bridge.latest(name)
    if call is None:
        return None, None
    if call.failed and not call.inputs:
        earlier = bridge.finished(name)
        if earlier is None:
            return None, None
        return Values(earlier.inputs, earlier.outputs), \
            (-1 if earlier.run_id == call.run_id else earlier.run_id)
    after = bridge.inputs_after.get(name)
    values = Values(call.inputs, call.outputs,
                    after=after[1] if after and after[0] == call.run_id else None)
    return values, (call.run_id if call.run_id != model.run_id else None)


def _full(pause, which: str) -> list:
    """A pause's values (a remote pause fetches those it did not carry)."""
    values = pause.outputs if which == "outputs" else pause.inputs
    return [pause.value(which, i) for i in range(len(values or ()))]


def _returned(pause):
    """What a wrapped function returned, when the op rejected it (a dtype error)."""
    error = pause.error
    return getattr(error, "returned", None) if error is not None else None
