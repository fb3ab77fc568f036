"""Diagnostics found while running: likely root causes that raise no error.

Each is a ``Warning`` event (op, kind, message, creation site, fix hint), made
only when someone listens, so it reaches subscribers, traces, ``view``, the UI
and the console alike:

- ``folded`` / ``deduplicated``: a stateless wrapped function whose value is
  reused (constant inputs) or shared (the same call twice) — "every random
  augmentation is identical";
- ``non_finite``: the first op whose outputs hold NaN/Inf while its inputs did
  not (the op that *made* them, as ``nan_producer`` finds);
- ``shape_change``: a wrapped function that returned the same values in another
  shape (``(N,)`` for ``(N, 1)``), which broadcasting downstream can silently
  turn into an ``(N, N)`` result.

The gradient blocked by a ``numpy_function`` is reported by ``autodiff`` when
the gradient is built; an input modified in place by ``modified.py``.

``KINDS`` lists every kind and when it is raised, which is where
``break_on(on_warning=True)`` can pause for it (see ``debug.debugger``).
"""
from __future__ import annotations

import threading
import time

from .. import events as ev

__all__ = ["note_run", "after_op", "WATCHED_TYPES", "HINTS", "warn", "KINDS", "reports_reuse"]

# kind -> when it is raised, on which thread:
#   "ran"       right after the op it names ran, on that op's thread
#   "run_start" at a run's start, on its thread, about an op of the run (it runs in the
#               run's constant folding, or not at all: its value is reused or shared)
#   "built"     when a graph is built, before the op it names runs (any thread)
#   "eager"     after an eager call (no graph op): inside a py_function body, while that
#               op runs; outside any run, it is about a call that already returned
KINDS = {
    "non_finite": "ran",
    "shape_change": "ran",
    "input_modified": "ran",          # modified.py
    "mutation": "ran",                # Debugger(guard_mutation=True)
    "folded": "run_start",
    "deduplicated": "run_start",
    "blocked_gradient": "built",      # autodiff, when the gradient is built
    "tout_mismatch": "eager",         # ops/script_ops.py, an eager numpy_function
}

WATCHED_TYPES = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
_STATELESS = "PyFuncStateless"

HINTS = {
    "folded": "a stateless function (stateful=False) on constant inputs runs once and its "
              "value is reused: for a random or stateful function use stateful=True",
    "deduplicated": "stateless calls (stateful=False) of the same function on the same inputs "
                    "run once per run: for a random or stateful function use stateful=True",
    "non_finite": "look at this op's inputs and function: it is the first to produce "
                  "NaN/Inf (--break-on nan pauses right after it)",
    "shape_change": "return the shape the function was given (e.g. result.reshape(x.shape)), "
                    "or check that broadcasting downstream is what you want",
    "blocked_gradient": "numpy_function and py_func have no gradient: use py_function "
                        "(differentiable through the ops it runs), or build that part from "
                        "differentiable ops",
}


def warn(run_id, op, op_type, kind, message, source="", parent=None) -> None:
    """Emit one diagnostic (a no-op when nobody listens)."""
    if ev._bus.subs:
        ev._bus.emit(ev.Warning(ev.next_seq(), run_id, time.perf_counter_ns(),
                                threading.get_ident(), op, op_type, parent, message, kind, (),
                                source, HINTS.get(kind, "")))


def reports_reuse(op) -> bool:
    """Whether ``note_run`` reports this op when it is folded or de-duplicated."""
    return op.type == _STATELESS


def note_run(plan, run_id) -> None:
    """At a run's start: stateless wrapped functions folded (now or before) or shared."""
    folding = [s.op for s in plan.fold_steps] if not plan.folds_done else []
    for op in folding:
        if op.type == _STATELESS:
            warn(run_id, op.name, op.type, "folded", f"op '{op.name}' ({op.type}) runs once, "
                 f"in this run: it is stateless and its inputs are constants, so later runs "
                 f"reuse this value", str(op.source))
    for op in plan.folded:
        if op.type == _STATELESS:
            warn(run_id, op.name, op.type, "folded", f"op '{op.name}' ({op.type}) did not run: "
                 f"it is stateless on constant inputs, so its first value is reused",
                 str(op.source))
    for op, first in plan.aliases.items():
        if op.type == _STATELESS:
            warn(run_id, op.name, op.type, "deduplicated", f"op '{op.name}' ({op.type}) did not "
                 f"run: it is the same stateless call as '{first.name}', which ran once for both",
                 str(op.source))


def after_op(run_id, name, typ, src, ins, outs, parent=None) -> None:
    """Diagnostics of one op from its input and output summaries (cheap: no values read)."""
    for i, s in enumerate(outs):
        if (s.nan or s.inf) and not any(x.nan or x.inf for x in ins):
            what = ", ".join(f"{n} {k}" for n, k in ((s.nan, "NaN"), (s.inf, "Inf")) if n)
            warn(run_id, name, typ, "non_finite", f"op '{name}' ({typ}) made {what} in output "
                 f"{i} from finite inputs", src, parent)
            break
    if typ in WATCHED_TYPES and ins and outs:
        a, b = ins[0], outs[0]
        if b.shape != a.shape and b.size == a.size and len(b.shape) != len(a.shape) and a.size > 1:
            warn(run_id, name, typ, "shape_change", f"op '{name}' ({typ}) returned shape "
                 f"{_dims(b.shape)} for input shape {_dims(a.shape)}: the same values in "
                 f"another rank, which broadcasting downstream can silently enlarge "
                 f"(e.g. to {_dims((a.size, a.size))})", src, parent)


def _dims(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
