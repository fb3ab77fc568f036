"""A framework's Python callbacks as ops of a run: events, the debugger, a sticky abort.

The adapters (``pyfunc_debug.tensorflow``, ``pyfunc_debug.jax``) hand every
callback call to ``CallbackRun.call``; nothing here imports a framework.

Runs: all callbacks of one instrumented framework form **one run** (kind
``"tensorflow"`` or ``"jax"``), started at the first observed call and ended by
``end()`` (``instrument``'s context exit, or the CLI when the script ends). The
framework's own calls (``Session.run``, iterating a dataset) are invisible from
a callback, so a run per call would show one op at a time; one run per program
makes the UI's op list the program's callback ops, each with its latest call.

Abort is sticky: once a pause is answered with abort (or pdb's ``q``), every
later call of the run raises ``CancelledError`` at once — queued parallel calls
too — so the framework stops and its caller gets an error carrying our message.
"""
from __future__ import annotations

import threading
import time
import traceback

import numpy as np

from . import events as ev
from .debug import external
from .debug.debugger import attached
from .errors import CancelledError
from .runtime.executor import new_run_id
from .trace.summary import summarize

__all__ = ["CallbackRun", "Closing", "abort_of", "as_numpy"]

_now = time.perf_counter_ns
_runs: list = []   # every CallbackRun made, for abort_of


def as_numpy(value):
    """A callback's argument or result as numpy (what summaries and pauses show)."""
    if isinstance(value, (np.ndarray, np.generic, bytes, str)) or value is None:
        return value
    try:
        return np.asarray(value)
    except Exception:  # an object the framework allows and numpy cannot hold
        return np.asarray(repr(value), dtype=object)


def _flat(result) -> list:
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return list(result)
    return [result]


def _message(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


class Closing:
    """``with x:`` calls ``x.close()`` on the way out (the adapters' instrumentations)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class CallbackRun:
    """The run a framework's callbacks belong to (see the module docstring)."""

    def __init__(self, kind: str):
        self.kind = kind
        self.run_id = None
        self.aborted = None        # the op name of the first abort
        self.failures = 0
        self._t0 = 0
        self._lock = threading.Lock()
        # pauses of this run, one at a time: a call that waited here while another was
        # paused sees an abort given meanwhile (queued parallel calls must not pause again)
        self._gate = threading.RLock()
        _runs.append(self)

    def call(self, op: external.ExternalOp, func, args):
        """``func(*args)`` as one execution of ``op``: events, pauses, pdb."""
        if self.aborted is not None:
            raise self._sticky(op)
        dbgs = attached()
        bus = ev._bus
        if not dbgs and not bus.subs:
            return func(*args)       # the fast path: nobody looks
        return self._observed(op, func, args, dbgs, bus)

    def _observed(self, op, func, args, dbgs, bus):
        run_id = self._begin()
        level = bus.capture
        cap = bus.capture_bytes if level == 2 else 0
        watch = bool(dbgs) and external.watching(op, dbgs)
        inputs = [as_numpy(a) for a in args] if (watch or level) else None
        stepper = self._before(op, inputs, run_id, dbgs) if watch else None
        ins = tuple([summarize(a, cap) for a in inputs]) if level else ()
        tid = threading.get_ident()
        if tid not in ev.thread_names:
            ev.note_thread(tid)
        observed = bool(bus.subs)
        t0 = _now()
        if observed:
            ev.emit(ev.OpStart(ev.next_seq(), run_id, t0, tid, op.name, op.type, None, op.source))
        try:
            if stepper is None:
                result = func(*args)
            else:
                try:   # the gate from _before: waiting calls see a q given in pdb
                    result = external.invoke(stepper, op, func, args)
                finally:
                    self._gate.release()
        except BaseException as exc:
            if inputs is None:
                inputs = [as_numpy(a) for a in args]
            self._failed(op, exc, inputs, run_id, tid, t0, dbgs)
            raise
        t1 = _now()
        outputs = [as_numpy(v) for v in _flat(result)] if (watch or level) else []
        outs = tuple(summarize(v, cap) for v in outputs) if level else ()
        if observed:
            ev.emit(ev.OpEnd(ev.next_seq(), run_id, t1, tid, op.name, op.type, None, t1 - t0,
                             ins, outs))
        if watch:
            self._ask(op, external.finished, op, inputs, outputs, run_id, dbgs)
        return result

    def _before(self, op, inputs, run_id, dbgs):
        """The pause before the call; returns the debugger that asked to step in, and then
        keeps the gate held (the caller releases it after the pdb session)."""
        self._gate.acquire()
        stepper = None
        try:
            stepper = self._ask(op, external.starting, op, inputs, run_id, dbgs)
        finally:
            if stepper is None:
                self._gate.release()
        return stepper

    def _ask(self, op, check, *args):
        """A debugger check that may pause, under the gate; an abort becomes sticky."""
        with self._gate:
            if self.aborted is not None:
                raise self._sticky(op)
            try:
                return check(*args)
            except CancelledError as e:
                self._abort(e)
                raise

    def _failed(self, op, exc, inputs, run_id, tid, t0, dbgs) -> None:
        """The call raised: close its slice, pause on_error (post-mortem), note an abort."""
        t1 = _now()
        ev.emit(ev.OpError(ev.next_seq(), run_id, t1, tid, op.name, op.type, None,
                           type(exc).__name__, _message(exc), op.source, t1 - t0))
        if isinstance(exc, CancelledError):    # pdb's q (PdbQuit), or a sticky abort
            self._abort(exc)
            return
        self.failures += 1
        if dbgs and isinstance(exc, Exception):
            try:
                self._ask(op, external.failed, op, inputs, exc, run_id, dbgs)
            except CancelledError as e:
                raise e from exc

    def _begin(self) -> int:
        if self.run_id is None:
            with self._lock:
                if self.run_id is None:
                    self._t0 = _now()
                    run_id = new_run_id()
                    ev.emit(ev.RunStart(ev.next_seq(), run_id, self._t0, threading.get_ident(),
                                        self.kind, "callbacks"))
                    self.run_id = run_id
        return self.run_id

    def _abort(self, err: BaseException) -> None:
        with self._lock:
            if self.aborted is None:
                self.aborted = getattr(err, "pfd_aborted_at", None) or "?"

    def _sticky(self, op) -> CancelledError:
        err = CancelledError(None, op, f"run aborted from the debugger at op '{self.aborted}': "
                             f"op '{op.name}' ({op.type}) did not run")
        err.pfd_aborted_at = self.aborted
        return err

    def end(self) -> None:
        """Close the run (``RunEnd``); a later call starts a new one, abort forgotten."""
        with self._lock:
            run_id, self.run_id = self.run_id, None
            aborted, self.aborted = self.aborted, None
            failures, self.failures = self.failures, 0
        if run_id is None:
            return
        t1 = _now()
        error = (f"CancelledError: run aborted at op '{aborted}'" if aborted else
                 f"{failures} callback call{'s' if failures != 1 else ''} failed"
                 if failures else None)
        ev.emit(ev.RunEnd(ev.next_seq(), run_id, t1, threading.get_ident(), t1 - self._t0,
                          error is None, error))


def abort_of(exc: BaseException) -> str | None:
    """The op a framework run was aborted at, if ``exc`` (the framework's error, which
    keeps only our message's text) reports that abort; else ``None``."""
    text = str(exc)
    for run in _runs:
        if run.aborted is not None and f"aborted from the debugger at op '{run.aborted}'" in text:
            return run.aborted
        if run.aborted is not None and f"aborted from pdb (quit) in op '{run.aborted}'" in text:
            return run.aborted
    return None
