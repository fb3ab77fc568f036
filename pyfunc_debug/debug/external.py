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

from dataclasses import dataclass

import numpy as np

from .attachment import attached

__all__ = ["ExternalOp", "watching", "starting", "given", "finished", "failed", "invoke"]


@dataclass(frozen=True)
class ExternalOp:
    """A framework op that wraps a Python function, as a ``Pause.op``.

    ``name``/``type``/``source`` read like an ``Operation``'s; ``wrapped`` says a
    Python function can be stepped into; ``target`` is that function's code
    object when the callable handed over only leads to it.
    """

    name: str
    type: str
    source: str = ""
    wrapped: bool = True
    target: object = None
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


def given(op: ExternalOp, inputs: list, dbgs=None) -> list:
    """``inputs`` as a pause after ``op`` or at its error must show them: the function may
    write into the arrays it gets, so when such a pause may come they are copied (call
    this before the function runs), else they are ``inputs`` themselves."""
    if not any(d.keeps_inputs(op.name, op.type) for d in (attached() if dbgs is None else dbgs)):
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
           post_mortem=None) -> None:
    """``op`` raised ``error`` (still being handled, so its traceback holds the raising
    frame): pause ``on_error``; a post-mortem answer opens pdb there — or, for an op that
    ran in another process, calls ``post_mortem(debugger)`` to open it there."""
    for d in attached() if dbgs is None else dbgs:
        if d._check_error(op, op.name, op.type, inputs, error, run_id) == "post_mortem":
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
