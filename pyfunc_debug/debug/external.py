"""The debugger's entry points around one op call, for whoever runs the op.

The public seam between the debugger core and anything that runs ops: the
engine's attended steps (``run_loop``, with its ``Operation``s) and ops the
engine does not run — a framework's Python callbacks
(``pyfunc_debug.tensorflow``, ``pyfunc_debug.jax``), described once with an
``ExternalOp``. Around each call ask ``watching`` (can anything pause here?)
and if so ``starting`` (may pause before it), ``finished`` (conditions on
outputs) and ``failed`` (``on_error``, post-mortem).
Each returns after the frontend answered; an abort raises ``CancelledError``.
``invoke`` runs the call itself, under pdb when the frontend asked to step in.

Framework threads differ from ours in two ways handled here and in
``Debugger``: each call may start with an empty ``threading.local`` (so "next
op" is kept on the debugger), and several calls may pause at once (pauses and
the pdb sessions they start are served one at a time).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .attachment import attached
from .breakpoints import changes

__all__ = ["ExternalOp", "watching", "keeping", "attention", "starting", "given", "finished",
           "failed", "invoke"]

# (debugger id, op name, op type) -> (changes[0], whether a breakpoint may pause after such
# an op or at its error): asked at every framework callback call, so cached like may_pause
_kept: dict = {}


@dataclass(frozen=True)
class ExternalOp:
    """A framework op that wraps a Python function, as a ``Pause.op``.

    ``name``/``type``/``source`` read like an ``Operation``'s; ``wrapped`` says a
    Python function can be stepped into; ``target`` is that function's code
    object when the callable handed over only leads to it. ``memo``: what the
    run calling it keeps about its calls (``external_calls``), not part of its
    identity — an attribute read per call is cheaper than a lookup by name.
    """

    name: str
    type: str
    source: str = ""
    wrapped: bool = True
    target: object = None
    memo: list = field(default_factory=list, compare=False, repr=False)
    # the numpy dtypes a py_function's results are converted to (TF casts what the
    # function returns to its Tout): what the op emits, which events record
    touts: tuple = field(default=(), compare=False, repr=False)
    # the framework's own check of a result, which it makes after the function returned
    # (TF's graph numpy_function: the count and each dtype against Tout, never cast):
    # ``check(result)`` is the error it will fail the op with, else None; ``declared``:
    # the result dtypes it expects, by name, which a captured fault keeps for replay
    check: object = field(default=None, compare=False, repr=False)
    declared: tuple = field(default=(), compare=False, repr=False)
    external = True


def watching(op: ExternalOp, dbgs=None) -> bool:
    """Whether a call of ``op`` may pause before or after it runs (a breakpoint matches
    its name/type, or a debugger is stepping); when not, ``starting`` and ``finished``
    can be skipped — errors are still worth ``failed``."""
    return any(d.stepping or d.may_pause(op.name, op.type)
               for d in (attached() if dbgs is None else dbgs))


def starting(op: ExternalOp, inputs: list, run_id=None, dbgs=None):
    """Before ``op`` runs: pause if a breakpoint (or stepping) says so.

    Returns the debugger whose frontend asked to step into the function (for
    ``invoke``), else ``None``.
    """
    stepper = None
    for d in attached() if dbgs is None else dbgs:
        if d._check_before(op, op.name, op.type, inputs, run_id) == "step_into":
            stepper = d
    return stepper


def keeping(op: ExternalOp, dbgs=None) -> bool:
    """Whether a pause after a call of ``op`` or at its error may come (so ``given`` copies
    its inputs): ``Debugger.keeps_inputs``, cached."""
    return any(d.stepping or _keeps(d, op.name, op.type)
               for d in (attached() if dbgs is None else dbgs))


def attention(op: ExternalOp, dbgs=None) -> tuple:
    """``(watching(op, dbgs), keeping(op, dbgs))`` at the cost of one."""
    watch = keep = False
    for d in attached() if dbgs is None else dbgs:
        if d.stepping:
            return True, True
        watch = watch or d.may_pause(op.name, op.type)
        keep = keep or _keeps(d, op.name, op.type)
    return watch, keep


def _keeps(d, name: str, typ: str) -> bool:
    # disabled breakpoints count: they may be enabled mid-run (a copy too many is harmless)
    key = (id(d), name, typ)
    found = _kept.get(key)
    if found is not None and found[0] == changes[0]:
        return found[1]
    if len(_kept) > 4096:   # eager calls name an op per call site: keep it bounded
        _kept.clear()
    result = any((b.on_error or b.pauses_after) and b.matches_op(name, typ)
                 for b in d.breakpoints)
    _kept[key] = (changes[0], result)
    return result


def given(op: ExternalOp, inputs: list, dbgs=None, keep=None) -> list:
    """``inputs`` as a pause after ``op`` or at its error must show them: the function may
    write into the arrays it gets, so when such a pause may come they are copied (call
    this before the function runs), else they are ``inputs`` themselves. ``keep``:
    ``keeping(op, dbgs)`` when the caller already knows it."""
    if not (keeping(op, dbgs) if keep is None else keep):
        return inputs
    return [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]


def finished(op: ExternalOp, inputs: list, outputs: list, run_id=None, dbgs=None,
             inputs_after=None) -> None:
    """After ``op`` returned ``outputs``: breakpoints whose condition reads outputs, and
    diagnostics. ``inputs`` as it was given them (``given``), ``inputs_after`` as it
    left them."""
    for d in attached() if dbgs is None else dbgs:
        d._check_after(op, op.name, op.type, inputs, outputs, run_id, inputs_after=inputs_after)


def failed(op: ExternalOp, inputs: list, error: BaseException, run_id=None, dbgs=None,
           post_mortem=None, inputs_after=None) -> None:
    """``op`` raised ``error`` (still being handled, so its traceback holds the raising
    frame): pause ``on_error``; a post-mortem answer opens pdb there — or, for an op that
    ran in another process, calls ``post_mortem(debugger)`` to open it there. ``inputs``
    as given (``given``), ``inputs_after`` as the call left them."""
    for d in attached() if dbgs is None else dbgs:
        if d._check_error(op, op.name, op.type, inputs, error, run_id,
                          inputs_after=inputs_after) == "post_mortem":
            with d.serialized:
                if post_mortem is not None:
                    post_mortem(d)
                else:   # quitting pdb aborts the run
                    d.pdb.post_mortem(error, op_name=op.name, aborts=True)


def invoke(stepper, op: ExternalOp, func, args):
    """``func(*args)``; under ``stepper``'s pdb (from ``starting``), stopping at the
    user's first line, when one was asked for."""
    if stepper is None:
        return func(*args)
    with stepper.serialized:  # one pdb session on the terminal at a time
        return stepper.pdb.step_into(func, args, op_name=op.name, target=op.target)
