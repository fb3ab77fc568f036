"""Debugger: decides when a run pauses and carries out what the frontend answers.

Mechanism only (``bdb`` to ``pdb``'s policy): a frontend — the console, the
TUI, a test — is a callable ``on_pause(pause) -> action``. The executing
thread blocks in that call; other threads keep running until they pause too
(pauses are served one at a time).
"""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

from .. import events as ev
from ..errors import CancelledError
from ..source_text import relative_source
from .attachment import _attached, _lock as _attach_lock, attached
from .breakpoints import Breakpoint, changes
from .console import ConsoleFrontend
from .pause import ACTIONS, Pause
from .pdb_bridge import PdbRunner
from .run_loop import run_debugged
from .watch import watched_steps
from .warned import Inbox, calling
from ..runtime.diagnose import reports_reuse
from ..trace.summary import summarize

__all__ = ["Debugger", "attached"]


class _EagerHook:
    """What the debugger does around eager ops inside a py_function body."""

    def __init__(self, dbg):
        self.dbg = dbg

    def before(self, name, typ, values, parent, run_id):
        self.dbg._check_before(None, name, typ, list(values), run_id, parent=parent)

    def after(self, name, typ, values, outs, parent, run_id):
        self.dbg._check_after(None, name, typ, list(values), outs, run_id, parent=parent)

    def error(self, name, typ, values, exc, parent, run_id):
        pass  # the enclosing py_function reports the failure


class Debugger:
    """Attach with ``with dbg:``; ``break_on(...)`` adds breakpoints (SPEC §4).

    ``guard_mutation=True`` copies each array handed to a py_func/numpy_function
    before the call and compares after it: one extra copy and comparison per
    input, so it roughly doubles the memory traffic of those ops. The same copy
    is made for the ops a pause after them or at their error could show (a
    pause shows inputs as they were when the op started), and then also serves
    the guard.

    ``break_on(on_warning=True)`` pauses for every diagnostic the program raises
    while the debugger is attached (``runtime.diagnose.KINDS``): after the op that
    raised it; for a folded or de-duplicated op, after its folding ran or at the
    point its value is reused or shared (the pause says it did not run); for a
    blocked gradient (raised when the gradient is built), after that op next runs.
    An eager ``numpy_function`` outside any op has no op to pause at: the
    breakpoint says so (a ``breakpoint_cannot_fire`` note).
    """

    def __init__(self, on_pause=None, guard_mutation: bool = False, pdb_runner=None):
        self.on_pause = on_pause if on_pause is not None else ConsoleFrontend()
        self.guard_mutation = guard_mutation
        self.pdb = pdb_runner or PdbRunner()
        self.pdb.on_step_out = self._stepped_out
        self.breakpoints: list[Breakpoint] = []
        self.hits: list = []
        self.warnings: list = []
        self._op_breakpoint = Breakpoint(op_type="Breakpoint")  # pfd.debug.breakpoint ops
        self._watch: dict = {}
        self._may_pause: dict = {}
        self._tls = threading.local()
        # re-entrant: a frontend may run the session again and pause inside it, and a pdb
        # session holds it (external.py)
        self._pause_lock = threading.RLock()
        self._step_all = False   # "next op" from a framework callback: any thread's next op
        self._saved_hook = None
        self._interrupted = False
        self._warning_sub = None
        self._unreachable: set = set()   # what a breakpoint cannot fire at, already said
        self._inbox = Inbox()            # diagnostics waiting for an on_warning pause
        self.eager_hook = _EagerHook(self)

    # -- breakpoints -------------------------------------------------------------------
    def break_on(self, op=None, op_type=None, when=None, on_error=False, hit_count=None,
                 on_warning=False):
        """Pause at ops named ``op`` (a glob) / of ``op_type``, when ``when`` holds;
        ``on_warning``: right after an op that raised a diagnostic (a ``Warning`` event)."""
        bp = Breakpoint(op, op_type, when, on_error, hit_count,
                        id=max((b.id for b in self.breakpoints), default=0) + 1,
                        on_warning=on_warning)
        self.breakpoints.append(bp)
        changes[0] += 1
        if on_warning and self in _attached:
            self._listen_for_warnings()
        return bp

    def remove(self, bp: Breakpoint) -> None:
        self.breakpoints.remove(bp)
        changes[0] += 1

    # -- attaching ----------------------------------------------------------------------
    def __enter__(self):
        from ..runtime import hooks
        with _attach_lock:
            _attached.append(self)
            hooks.runner = _run_debugged
        if any(b.on_warning for b in self.breakpoints):
            self._listen_for_warnings()
        if os.environ.get("PYTHONBREAKPOINT", "") == "":  # honour a user's choice
            self._saved_hook = sys.breakpointhook
            sys.breakpointhook = self._breakpointhook
            self.pdb.install()
        return self

    def __exit__(self, *exc):
        from ..runtime import hooks
        if self._warning_sub is not None:
            self._warning_sub.close()
            self._warning_sub = None
        with _attach_lock:
            if self in _attached:
                _attached.remove(self)
            if not _attached:
                hooks.runner = None
        if self._saved_hook is not None:
            sys.breakpointhook = self._saved_hook
            self._saved_hook = None
            self.pdb.uninstall()
        return False

    def _listen_for_warnings(self) -> None:
        """on_warning breakpoints need diagnostics, which need value summaries."""
        if self._warning_sub is None:
            self._warning_sub = ev.subscribe(self._on_event, capture="summary")

    def _on_event(self, e) -> None:
        if type(e) is ev.Warning and e.op and not self._inbox.file(e):
            self._refuse(e)   # runs in the thread that raised it

    def _refuse(self, e) -> None:
        """Say once per breakpoint and call site that this diagnostic cannot be paused at."""
        for bp in self.breakpoints:
            key = (bp.id, e.kind, e.source)
            if bp.on_warning and bp.enabled and key not in self._unreachable:
                self._unreachable.add(key)
                self._warn(e.op, e.op_type, f"{bp.describe()} cannot pause for the "
                           f"{e.kind} warning of '{e.op}' at {e.source or '?'}: it was raised by "
                           "an eager call outside any graph op, which has returned (nothing is "
                           "left to pause at)", "breakpoint_cannot_fire", e.run_id, (), e.source,
                           "call it inside a graph, tf.function or py_function to pause there")

    def take_run_start(self) -> dict:
        """op name -> the diagnostics this thread's run start raised about it (run loop)."""
        return self._inbox.take_run_start() if self._warning_sub is not None else {}

    def _stepped_out(self) -> None:
        """``n`` (or ``s``) past a stepped-into function's return: pause before the next
        op, as ``n`` at a pause does (it ran the program on to its end). Outside a graph
        run (a framework's callback thread) on whichever thread runs next."""
        self._set_stepping(True, everywhere=getattr(calling, "op", None) is None)

    def _breakpointhook(self, *args, **kwargs):
        self.pdb.set_trace(sys._getframe(1))

    def interrupt(self) -> None:
        """Pause before the next op that runs, in any thread (a frontend's "pause now")."""
        self._interrupted = True
        changes[0] += 1

    # -- per-thread state ------------------------------------------------------------------
    @property
    def stepping(self) -> bool:
        return self._interrupted or self._step_all or getattr(self._tls, "stepping", False)

    def _set_stepping(self, value: bool, everywhere: bool = False) -> None:
        # framework threads start every callback with an empty threading.local: a "next op"
        # asked there must outlive the call, so it is kept on the debugger itself
        self._tls.stepping = value and not everywhere
        self._step_all = value and everywhere

    @property
    def serialized(self):
        """The lock pauses are served under; hold it for a whole pdb session started at a
        pause, so concurrent callbacks never share the terminal (re-entrant)."""
        return self._pause_lock

    def watch(self, plan) -> frozenset:
        """Steps of ``plan`` that may pause (static name/type match), cached per plan.

        Steps matched only by breakpoints with a pre-filtered condition are not
        among them: ``filters(plan)`` lists those.
        """
        return self._watched(plan)[0]

    def filters(self, plan) -> dict:
        """Step index -> (before, after, keep) for the steps run with their kernels wrapped
        (see ``watch``): condition pre-filters, ``keep`` for an on_error Python op; cached
        per plan."""
        return self._watched(plan)[1]

    def filtered_order(self, plan) -> tuple:
        """The keys of ``filters(plan)`` sorted, and the run loop's records of them."""
        return self._watched(plan)[2]

    def _watched(self, plan) -> tuple:
        key = id(plan)
        found = self._watch.get(key)
        if found is not None and found[0] == changes[0] and found[1] is plan:
            return found[2]
        result = watched_steps(self, plan)
        self._watch[key] = (changes[0], plan, result)
        return result

    def wants(self, name: str, typ: str) -> bool:
        """Whether a pause before op ``name`` is possible (stepping, or a breakpoint)."""
        return self.stepping or any(b.enabled and not b.on_error and not b.pauses_after
                                    and b.matches_op(name, typ) for b in self.breakpoints)

    def note_unreachable(self, plan, run_id) -> None:
        """Say once, for each breakpoint on an op this run does not execute (its value was
        folded on an earlier run, or a same call computes it), that it cannot fire here."""
        for op in list(plan.folded) + list(plan.aliases):
            for bp in self.breakpoints:
                if bp.op is None or not bp.enabled or not bp.matches_op(op.name, op.type) \
                        or (bp.id, op.name) in self._unreachable \
                        or (bp.on_warning and reports_reuse(op)):   # it pauses where reused
                    continue
                self._unreachable.add((bp.id, op.name))
                first = plan.aliases.get(op)
                why = (f"it is the same stateless call as '{first.name}', which runs for both"
                       if first is not None else "it is folded: stateless on constant inputs, "
                       "it ran once (on the session's first run) and its value is reused")
                hint = (f"break on '{first.name}' instead, or make the op stateful=True"
                        if first is not None else "make the op stateful=True to run it every "
                        "time, or break on the session's first run")
                self._warn(op.name, op.type, f"{bp.describe()} cannot fire at op '{op.name}': "
                           f"{why}", "breakpoint_cannot_fire", run_id, (), str(op.source), hint)

    def may_pause(self, name: str, op_type: str) -> bool:
        """Whether some breakpoint could pause before or after an op of this name and type
        (its name/type part; conditions are checked when it runs). Cached per op."""
        key = (name, op_type)
        found = self._may_pause.get(key)
        if found is not None and found[0] == changes[0]:
            return found[1]
        result = op_type == "Breakpoint" or any(
            b.matches_op(name, op_type) for b in self.breakpoints if not b.on_error)
        self._may_pause[key] = (changes[0], result)
        return result

    @property
    def watches_eager(self) -> bool:
        """Whether eager ops inside py_functions need checking (stepping or unfiltered breaks)."""
        return self.stepping or any(b.enabled and b.op is None and not b.on_error
                                    and not b.on_warning for b in self.breakpoints)

    # -- the checks the run loop makes --------------------------------------------------------
    def _evaluate(self, bp, pause) -> bool:
        try:
            return bool(bp.condition.check(pause))
        except Exception as e:
            # said once per breakpoint and error, as a note on the breakpoint: a typo
            # (np.anyy) raises at every op, and a warning on each buried the real diagnostic
            key = (bp.id, "condition", type(e).__name__, str(e))
            if key not in self._unreachable:
                self._unreachable.add(key)
                self._warn(pause.op_name, pause.op_type,
                           f"{bp.describe()} cannot fire where its condition raises "
                           f"{type(e).__name__}: {e} (first at op '{pause.op_name}'); it "
                           "counts as no hit there",
                           "breakpoint_cannot_fire", pause.run_id, (), "",
                           "fix the condition: remove the breakpoint and add it again")
            return False

    def _matching(self, bps, name, typ, pause):
        for bp in bps:
            if not bp.enabled or not bp.matches_op(name, typ):
                continue
            if bp.condition is not None and not self._evaluate(bp, pause):
                continue
            bp.hits += 1
            if bp.hit_count and bp.hits < bp.hit_count:
                continue
            return bp
        return None

    def keeps_inputs(self, name: str, typ: str) -> bool:
        """Whether a pause after op ``name`` or at its error may come (so its inputs are
        kept as they were when it started)."""
        return self.stepping or any(b.enabled and (b.on_error or b.pauses_after)
                                    and b.matches_op(name, typ) for b in self.breakpoints)

    def _check_before(self, op, name, typ, inputs, run_id, parent=None):
        if self._warning_sub is not None and parent is None:
            self._inbox.op_starts()   # what an op raises is seen after it, at _check_after
        pause = Pause(op, name, typ, "before", inputs, source=_source(op), run_id=run_id,
                      thread=threading.get_ident(), parent=parent, wrapped=_wraps(op))
        bps = [b for b in self.breakpoints if not b.on_error and not b.pauses_after]
        if typ == "Breakpoint":
            bps.append(self._op_breakpoint)
        bp = self._matching(bps, name, typ, pause)
        if bp is None and not self.stepping:
            return None
        pause.breakpoint = bp
        return self._pause(pause)

    def _check_after(self, op, name, typ, inputs, outputs, run_id, parent=None,
                     inputs_after=None, warned=(), not_run=""):
        """After op ``name`` ran (``not_run``: why it did not, its value being reused);
        ``inputs`` as it was given them, ``inputs_after`` as it left them (when not the
        same objects); ``warned``: diagnostics about it filed elsewhere."""
        bps = [b for b in self.breakpoints if b.pauses_after and not b.on_error
               and (b.on_warning or not not_run)]
        if not bps:
            return None
        if self._warning_sub is not None:
            warned = tuple(warned) + self._inbox.take(name, _source(op))
        bps = [b for b in bps if not b.on_warning or warned]
        if not bps:
            return None
        pause = Pause(op, name, typ, "after", inputs, outputs, source=_source(op), run_id=run_id,
                      thread=threading.get_ident(), parent=parent,
                      warning=warned[0] if warned else None, warnings=tuple(warned),
                      not_run=not_run)
        bp = self._matching(bps, name, typ, pause)
        if bp is None:
            return None
        pause.breakpoint = bp   # the rest only a frontend reads: made when it pauses
        pause.inputs_after = _changed(inputs, inputs_after)
        pause.wrapped = _wraps(op)
        pause.replayable = _replayable(op)
        return self._pause(pause)

    def _check_error(self, op, name, typ, inputs, error, run_id, inputs_after=None):
        bps = [b for b in self.breakpoints if b.on_error]
        pause = Pause(op, name, typ, "error", inputs, error=error, source=_source(op),
                      run_id=run_id, thread=threading.get_ident(), wrapped=_wraps(op),
                      inputs_after=_changed(inputs, inputs_after))
        bp = self._matching(bps, name, typ, pause)
        if bp is None and not self.stepping:
            return None
        pause.breakpoint = bp
        return self._pause(pause)

    def _pause(self, pause: Pause) -> str:
        """Ask the frontend; carry out step/abort here; return the action."""
        hit = ev.BreakpointHit(ev.next_seq(), pause.run_id, time.perf_counter_ns(), pause.thread,
                               pause.op_name, pause.op_type, pause.parent, pause.when,
                               pause.breakpoint.describe() if pause.breakpoint else "")
        self.hits.append(hit)
        ev.emit(hit)
        with self._pause_lock:
            try:
                action = self.on_pause(pause)
            except KeyboardInterrupt as e:  # Ctrl+C at a prompt: quit, saying where
                e.pfd_aborted_at = pause.op_name
                raise
            except Exception as e:  # a broken frontend never kills the run
                self._warn(pause.op_name, pause.op_type, f"the pause frontend raised "
                           f"{type(e).__name__}: {e}; continuing", "frontend")
                action = "continue"
        if action not in ACTIONS:
            self._warn(pause.op_name, pause.op_type, f"unknown pause action {action!r}; "
                       f"expected one of {ACTIONS}; continuing", "frontend")
            action = "continue"
        if action == "step_into" and pause.when != "before":
            if pause.replayable:
                self._replay(pause)   # may raise PdbQuit: the user quit pdb
            action = "continue"
        if action == "step_into" and not pause.wrapped:
            action = "step"
        if action == "post_mortem" and pause.error is None:
            action = "continue"
        self._interrupted = False
        self._set_stepping(action == "step", everywhere=getattr(pause.op, "external", False))
        if action == "abort":
            err = CancelledError(None, pause.op, f"run aborted from the debugger at op "
                                 f"'{pause.op_name}' ({pause.op_type}), {pause.when}")
            err.pfd_aborted_at = pause.op_name   # the CLI prints one line, not a traceback
            raise err
        return action

    def _replay(self, pause) -> None:
        """``s`` after an op ran: its function again, under pdb, on the inputs it was given
        (copies); the run keeps the result it had."""
        op, name = pause.op, pause.op_name
        note = (f"pyfunc-debug: op '{name}' already ran"
                + (f" (in fact it did not: {pause.not_run})" if pause.not_run else "")
                + ": this calls its function again on the inputs it was given; what it returns "
                "now is not used, and its side effects happen again")
        kernel = op.op_def.extra["step_into"](
            op, lambda f, a: self.pdb.step_into(f, a, op_name=name, note=note))
        args = [v.copy() if isinstance(v, np.ndarray) else v for v in pause.inputs]
        with self._pause_lock:   # one pdb session at a time
            try:
                kernel(_ReplayContext(pause.run_id), *args) if op.op_def.needs_ctx \
                    else kernel(*args)
            except CancelledError:
                raise
            except Exception as e:   # the run already has its result
                self._warn(name, pause.op_type, f"calling op '{name}' again under pdb raised "
                           f"{type(e).__name__}: {e}", "replay", pause.run_id)

    def _warn(self, op_name, op_type, message, kind, run_id=None, inputs=(), source="",
              hint="") -> None:
        w = ev.Warning(ev.next_seq(), run_id, time.perf_counter_ns(), threading.get_ident(),
                       op_name, op_type, None, message, kind, inputs, source, hint)
        self.warnings.append(w)
        ev.emit(w)

    def check_mutation(self, op, before: dict, args, run_id=None) -> None:
        """Warn once for the input arrays a wrapped function changed in place (exact check);
        the warning's ``inputs`` hold every input as it is after the call."""
        changed = [i for i, copy in before.items()
                   if not np.array_equal(copy, args[i], equal_nan=copy.dtype.kind in "fc")]
        if not changed:
            return
        bus = ev._bus
        cap = bus.capture_bytes if bus.capture == 2 else 0
        after = tuple(summarize(a, cap) for a in args) if bus.capture else ()
        listed = ", ".join(str(i) for i in changed)
        self._warn(op.name, op.type, f"op '{op.name}' ({op.type}) created at {relative_source(str(op.source))} "
                   f"wrote into its input{'s' if len(changed) > 1 else ''} {listed} in place",
                   "mutation", run_id, after, str(op.source), _MODIFY_HINT)


_MODIFY_HINT = "wrapped functions must not modify their inputs: copy first (x = x.copy())"


def _source(op) -> str:
    return "" if op is None else str(op.source)


def _changed(given, after):
    """``after`` when some array in it differs from the one given (else None)."""
    if after is None or after is given:
        return None
    for g, a in zip(given, after):
        if g is not a and isinstance(a, np.ndarray) and not np.array_equal(
                g, a, equal_nan=a.dtype.kind in "fc"):
            return list(after)
    return None


def _replayable(op) -> bool:
    """A graph op whose function the debugger can call again (not a framework's op)."""
    return _wraps(op) and not getattr(op, "external", False)


class _ReplayContext:
    """What a py_function kernel needs of a run, for a call made again under pdb."""

    def __init__(self, run_id):
        self.run_id, self.kind, self.name = run_id, "replay", ""
        self.tapes, self.resources, self.summaries = {}, {}, None


def _wraps(op) -> bool:
    if getattr(op, "external", False):  # a framework callback (debug.external.ExternalOp)
        return op.wrapped
    return op is not None and "step_into" in op.op_def.extra and not op.attrs.get("is_grad") \
        and op.attrs.get("callback") is not None


def _run_debugged(plan, vals, ctx, pool, span=True):
    run_debugged(plan, vals, ctx, pool, attached(), span)
