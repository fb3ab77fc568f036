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

Diagnostics (``non_finite``, ``shape_change``, ``input_modified``) are
``callback_diagnostics``: each run has its own.
"""
from __future__ import annotations

import os
import threading
import time
import traceback
import types
from itertools import repeat

import numpy as np

from . import events as ev
from .debug import external
from .callback_diagnostics import Diagnostics, mark
from .debug.debugger import attached
from .errors import CancelledError
from .runtime.executor import new_run_id
from .runtime.loop import _hold as _HELD   # non-empty while the first run is held
from .trace.pending import DEFER_LIMIT, PendingOpEnd, pending
from .trace.summary import summarize

__all__ = ["CallbackRun", "Closing", "abort_of", "as_numpy", "without_our_frames",
           "traceback_without"]

_now = time.perf_counter_ns
_new = tuple.__new__   # events built without NamedTuple's Python-level __new__
_ndarray = np.ndarray
_runs: list = []   # every CallbackRun made, for abort_of
# thread id -> observed callbacks it is in, each thread changing its own key alone; and
# time.monotonic() when the last of a thread's returned (see ``settle``)
_busy: dict = {}
_last_call = [0.0]
_monotonic = time.monotonic


def settle(quiet: float = 0.05, limit: float = 1.0) -> None:
    """Once a program ended: wait, the interpreter lock let go, until no observed framework
    callback has run for ``quiet`` seconds (at most ``limit``). A tf.data pipeline's
    prefetch thread may still be calling the program's function (recorded calls take
    longer); if Python's shutdown then freed the pipeline, it waited for that thread,
    which may no longer take the lock: the process hung at exit (1 run in 6 of a failing
    pipeline under ``trace --tf``)."""
    if not _runs:
        return
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not _busy and time.monotonic() - _last_call[0] >= quiet:
            return
        time.sleep(0.01)


def as_numpy(value):
    """A callback's argument or result as numpy (what summaries and pauses show)."""
    if isinstance(value, (np.ndarray, np.generic, bytes, str)) or value is None:
        return value
    try:
        return np.asarray(value)
    except Exception:  # an object the framework allows and numpy cannot hold
        return np.asarray(repr(value), dtype=object)


# files whose frames a failing callback's traceback leaves out; the adapters' entry points
# re-raise bare, which adds no frame back (Python 3.11+; 3.10 shows that one). TensorFlow
# prints that traceback in its error message and JAX logs it; the stack JAX's own error
# message lists is walked from the frames themselves, which no rewriting changes
_OUR_FILES = frozenset({__file__, external.__file__,   # as the code's co_filename says them
                        *(os.path.join(os.path.dirname(__file__), f)
                          for f in ("tensorflow.py", "jax.py"))})


def without_our_frames(exc: BaseException) -> BaseException:
    """``exc`` with our frames between the framework's and the user's taken out of its
    traceback, so the error reads as it does without pyfunc-debug."""
    return exc.with_traceback(traceback_without(exc.__traceback__, _OUR_FILES.__contains__))


def traceback_without(tb, dropped):
    """A copy of traceback ``tb`` without the frames whose file ``dropped(filename)`` says."""
    kept = []
    while tb is not None:
        if not dropped(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for t in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return rebuilt


def _flat(result) -> list:
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return list(result)
    return [result]


def _emitted(values, touts) -> list:
    """A py_function's results as the op emits them: TensorFlow converts each to its Tout
    (a Python int to int32, an int64 array cast); one of another kind (a float for an int
    Tout) stays as returned: TensorFlow fails the op on it (so does the op's check, first)."""
    out = []
    for v, dt in zip(values, touts):
        a = as_numpy(v)
        if isinstance(a, (np.ndarray, np.generic)) and a.dtype != dt and \
                np.can_cast(a.dtype, dt, casting="same_kind"):   # else TF raises: as returned
            a = np.asarray(a).astype(dt)
        out.append(a)
    return out + list(values[len(touts):])


def _summarized(inputs, cap, later: bool = False):
    """Before the call: the inputs' summaries, and the ``mark`` of each input the callback
    could write into (a writable array: TF hands ``numpy_function`` its tensors' memory),
    or None when there is none. A big float32 input's mark is the sample its summary
    gathered (one strided gather, not two). With ``later`` (a sink that takes summaries
    later, ``trace.pending``) a small numeric array's summary is pending, and its bytes
    are its mark."""
    sums, marks = [], None
    for j, a in enumerate(inputs):
        s = None
        if a.__class__ is np.ndarray:
            if later and a.size <= DEFER_LIMIT:
                blob = a.tobytes()
                s = pending(a, blob, False)
            if a.ndim and a.flags.writeable:
                if marks is None:
                    marks = [None] * len(inputs)
                if s is not None:
                    marks[j] = blob   # == mark(a): all of a small array's bytes
                else:
                    got = []
                    s = summarize(a, cap, got)
                    marks[j] = got[0] if got else mark(a)
        sums.append(summarize(a, cap) if s is None else s)
    return tuple(sums), marks


def _later(v, cap: int = 0):
    """An output's summary: pending when it can be (``trace.pending.pending``), else now
    (with a copy up to ``cap`` bytes, as ``summarize``)."""
    if v.__class__ is not _ndarray:
        v = as_numpy(v)
        if v.__class__ is not _ndarray:
            return summarize(v, cap)
    if v.size <= DEFER_LIMIT:
        s = pending(v, v.tobytes(), True)
        if s is not None:
            return s
    return summarize(v, cap)


def _send(bus, subs, event) -> None:
    """``event`` to the subscribers: the only one directly (its ``op_callback``: a JSONL
    stream's queue append), as the bus would, a failing one reported once."""
    if len(subs) != 1:
        bus.emit(event)
        return
    sub = subs[0]
    try:
        sub.op_callback(event)
    except Exception as exc:   # a subscriber never breaks the run
        bus.failed(sub, event, exc)


def _refusal(op, result):
    """The error the framework will fail ``op`` with on ``result`` once the callback
    returned (``ExternalOp.check``), else None. It is the call's error, as if the function
    had raised it; the framework then raises its own, as without us."""
    try:
        return op.check(result)
    except Exception:   # noqa: BLE001 - a check that breaks leaves it to the framework
        return None


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
        self.diagnostics = Diagnostics()   # this run's (see callback_diagnostics)
        _runs.append(self)

    def call(self, op: external.ExternalOp, func, args):
        """``func(*args)`` as one execution of ``op``: events, pauses, pdb."""
        if self.aborted is not None:
            raise self._sticky(op)
        if _HELD:   # ``run --listen --wait``: the first call waits for the client (in _begin)
            self._begin()
        dbgs = attached()
        bus = ev._bus
        if not dbgs and not bus.subs:
            return func(*args)       # the fast path: nobody looks
        tid = threading.get_ident()
        busy = _busy
        busy[tid] = busy.get(tid, 0) + 1
        try:
            defer = None if dbgs else bus.defer
            if defer is not None:    # a summary .jsonl trace alone: summaries later
                return self._deferred(op, func, args, defer, tid)
            return self._observed(op, func, args, dbgs, bus, tid)
        finally:
            n = busy[tid] - 1
            if n:   # a call within a call (a py_function's eager ops)
                busy[tid] = n
            else:
                del busy[tid]
                _last_call[0] = _monotonic()

    def _deferred(self, op, func, args, sink, tid):
        """``_observed`` for a summary trace that takes small arrays' summaries later, when
        it is read (``trace.pending``), with no debugger attached: the events go to that
        sink alone (only its readers settle them); diagnostics run now, from what
        pending summaries know (shapes, and no NaN/Inf: those are summarised now)."""
        run_id = self._begin()
        inputs = [a if a.__class__ is _ndarray else as_numpy(a) for a in args]
        ins, marks = _summarized(inputs, 0, later=True)
        if ev.fault_capture:   # capture="fault" (trace.faults)
            ev.held_calls[tid] = (op, inputs, func, self.kind)
        if tid not in ev.thread_names:
            ev.note_thread(tid, self.kind)
        write = sink.op_write
        t0 = _now()
        write(_new(ev.OpStart, (ev.next_seq(), run_id, t0, tid, op.name, op.type, None,
                                op.source, (), None, None)))
        try:
            result = func(*args)
        except BaseException as exc:
            self._failed(op, exc, inputs, inputs, run_id, tid, t0, ())
            raise
        refused = None if op.check is None else _refusal(op, result)
        if refused is not None:
            self._failed(op, refused, inputs, inputs, run_id, tid, t0, ())
            return result
        t1 = _now()
        flat = _flat(result)
        outs = tuple(map(_later, flat if not op.touts else _emitted(flat, op.touts)))
        sink.deferred = True
        write(_new(PendingOpEnd, (ev.next_seq(), run_id, t1, tid, op.name, op.type, None,
                                  t1 - t0, ins, outs, None, None)))
        if outs:
            self.diagnostics.diagnose(op, run_id, ins, outs)
        if marks is not None:
            self.diagnostics.written(op, run_id, ins, inputs, marks, 0)
        return result

    def _observed(self, op, func, args, dbgs, bus, tid):
        """Written for speed (every call of every callback, when someone records): arrays
        taken as they are, the one subscriber called directly with events built in C
        (as the engine's run loop does), summaries mapped without a Python frame. A
        subscriber that takes pending summaries (``bus.defer``: the console's printer of
        diagnostics, which reads no summary of an ``OpEnd``; the UI's bridge, which takes
        them on its own thread) gets them pending."""
        run_id = self._begin()
        level = bus.capture
        cap = bus.capture_bytes if level == 2 else 0
        # read once: a client that detaches while this call waits at a pause takes the
        # sink away (bus.defer None), and the call must still end as it began
        defer = bus.defer
        later = defer is not None
        watch, keep = external.attention(op, dbgs) if dbgs else (False, False)
        inputs = ([a if a.__class__ is _ndarray else as_numpy(a) for a in args]
                  if (watch or keep or level) else None)
        # what a pause after the call or at its error shows: copies when one may come
        shown = external.given(op, inputs, dbgs, keep=True) if keep else inputs
        stepper = self._before(op, shown, run_id, dbgs) if watch else None
        if level:
            if _ndarray in map(type, inputs):
                ins, marks = _summarized(inputs, cap, later)
            else:
                ins = tuple(map(summarize, inputs)) if not cap else tuple(
                    [summarize(a, cap) for a in inputs])
                marks = None
        else:
            ins, marks = (), None
        if ev.fault_capture and inputs is not None:   # capture="fault" (trace.faults)
            ev.held_calls[tid] = (op, inputs, func, self.kind)
        if tid not in ev.thread_names:
            ev.note_thread(tid, self.kind)
        subs = bus.subs
        t0 = _now()
        if subs:
            _send(bus, subs, _new(ev.OpStart, (ev.next_seq(), run_id, t0, tid, op.name, op.type,
                                               None, op.source, (), None, None)))
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
                inputs = shown = [as_numpy(a) for a in args]
            self._failed(op, exc, shown, inputs, run_id, tid, t0, dbgs)
            raise
        refused = None if op.check is None else _refusal(op, result)
        if refused is not None:
            if inputs is None:
                inputs = shown = [as_numpy(a) for a in args]
            self._failed(op, refused, shown, inputs, run_id, tid, t0, dbgs)
            return result
        t1 = _now()
        outputs = ([v if v.__class__ is _ndarray else as_numpy(v) for v in _flat(result)]
                   if (watch or level) else [])
        if op.touts and outputs:
            outputs = _emitted(outputs, op.touts)
        end = ev.OpEnd
        if later:
            outs = tuple(map(_later, outputs, repeat(cap)))
            end = PendingOpEnd
            defer.deferred = True
        elif level:
            outs = tuple(map(summarize, outputs)) if not cap else tuple(
                [summarize(v, cap) for v in outputs])
        else:
            outs = ()
        if subs:
            _send(bus, subs, _new(end, (ev.next_seq(), run_id, t1, tid, op.name, op.type,
                                        None, t1 - t0, ins, outs, None, None)))
        # diagnostics before the pause check after the call, which shows what they raise
        if outs:
            self.diagnostics.diagnose(op, run_id, ins, outs)
        if marks is not None:
            self.diagnostics.written(op, run_id, ins, inputs, marks, cap)
        if watch:
            self._ask(op, external.finished, op, shown, outputs, run_id, dbgs, inputs)
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

    def _failed(self, op, exc, inputs, left, run_id, tid, t0, dbgs) -> None:
        """The call raised: close its slice, pause on_error (post-mortem), note an abort.
        ``inputs`` as the call was given them, ``left`` as it left them."""
        t1 = _now()
        ev.emit(ev.OpError(ev.next_seq(), run_id, t1, tid, op.name, op.type, None,
                           type(exc).__name__, _message(exc), op.source, t1 - t0))
        if isinstance(exc, CancelledError):    # pdb's q (PdbQuit), or a sticky abort
            self._abort(exc)
            return
        self.failures += 1
        if dbgs and isinstance(exc, Exception):
            try:
                self._ask(op, external.failed, op, inputs, exc, run_id, dbgs, None, left)
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
            self.diagnostics = Diagnostics()
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
