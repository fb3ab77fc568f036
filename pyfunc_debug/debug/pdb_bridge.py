"""Running pdb (pdbpp where it works, see ``pdb_choice``) inside a wrapped function, on the executing thread.

``PdbRunner`` is the one way in: ``step_into(func, args)`` stops at the first
line of ``func`` with its real arguments; ``post_mortem(exc)`` opens the
raising frame; ``set_trace(frame)`` serves ``breakpoint()`` while a debugger is
attached. Pitfalls handled here (see reference/textual_pdb_notes.md):
``Pdb.runcall`` swallows ``BdbQuit`` (we drive the trace ourselves and turn
quitting into an abort); ``use_global_pdb`` is a constructor keyword of
pdbpp's metaclass; passing ``stdout=`` turns off line editing
(``use_rawinput`` is restored for the real terminal); ``~/.pdbrc`` commands are
not read (``readrc=False``), so a user's rc file cannot drive the session.
"""
from __future__ import annotations

import bdb
import sys
import threading

from ..errors import CancelledError
from .pdb_choice import is_pdbpp, pdb_class, take_note

__all__ = ["PdbRunner", "PdbQuit", "make_pdb"]


# Our machinery, never shown while stepping (the demo's functions in pyfunc_debug.demo are).
SKIP = ["pyfunc_debug.runtime.*", "pyfunc_debug.debug.*", "pyfunc_debug.ops.*",
        "pyfunc_debug.eager.*", "pyfunc_debug.graph.*", "pyfunc_debug.trace.*",
        "pyfunc_debug.events", "pyfunc_debug.autodiff", "pyfunc_debug.external_calls",
        "pyfunc_debug.tensorflow", "pyfunc_debug.jax", "pyfunc_debug.tui.*", "contextlib", "threading",
        # the frameworks around a callback (step into the user's function, not theirs)
        "tensorflow.*", "keras.*", "jax.*", "jaxlib.*"]


class PdbQuit(CancelledError):
    """The user quit pdb: the run is aborted."""


def _call_wrapped(func, *args):
    # pdb stops here when ``func`` has no Python code to step into (a numpy ufunc, a builtin).
    return func(*args)


class _Stepper:
    """Mixin: stop first at the first line of one code object, then behave as pdb.

    ``_session_cm`` (a context-manager factory), when set, is entered at the
    first interaction and left when control returns to the program — for
    ``breakpoint()``, whose session starts later than the call that arms it.
    """

    _target_code = None
    _session_cm = None
    _entered = None
    _streams = None   # (stdin, stdout) to talk on, re-applied when a session starts

    def interaction(self, frame, traceback):
        if self._session_cm is not None and self._entered is None:
            self._entered = self._session_cm()
            self._entered.__enter__()
            if self._streams is not None:
                # pdbpp's pdb.set_trace() re-points a reused instance at sys.stdout,
                # which a running UI captures; talk on our streams again
                self.stdin = self._streams[0] or sys.stdin
                self.stdout = self._streams[1] or sys.stdout
        return super().interaction(frame, traceback)

    def _leave_session(self):
        entered, self._entered = self._entered, None
        if entered is not None:
            entered.__exit__(None, None, None)

    _saved_trace = None   # the tracer before ``breakpoint()`` (a coverage tool's)

    def set_trace(self, frame=None):
        current = sys.gettrace()
        if getattr(current, "__self__", None) is not self:
            self._saved_trace = current
        super().set_trace(frame)

    def _restore_tracer(self):
        # bdb drops the thread's tracer when nothing is left to stop at: give it back
        if self._saved_trace is not None and sys.gettrace() is None:
            sys.settrace(self._saved_trace)

    def set_continue(self):
        super().set_continue()
        self._restore_tracer()
        self._leave_session()

    def set_quit(self):
        super().set_quit()
        self._restore_tracer()
        self._leave_session()

    def stop_here(self, frame):
        target = self._target_code
        if target is not None:
            return frame.f_code is target
        return super().stop_here(frame)

    def user_call(self, frame, argument_list):
        if self._target_code is not None and frame.f_code is self._target_code:
            self._target_code = None  # arrived: the next line event stops (set_step)
            self.set_step()
            return
        super().user_call(frame, argument_list)


_classes: dict = {}


def _pdb_class():
    base = pdb_class()
    cls = _classes.get(base)
    if cls is None:
        cls = _classes[base] = type("PfdPdb", (_Stepper, base), {})
    return cls


def make_pdb(stdin=None, stdout=None):
    """A fresh Pdb on ``stdin``/``stdout`` (the real terminal when ``None``)."""
    cls = _pdb_class()
    kwargs = {"stdin": stdin, "stdout": stdout, "readrc": False, "skip": SKIP}
    if is_pdbpp(cls):  # pdbpp: a fresh instance, not the global one
        kwargs.update(use_global_pdb=False, set_global_pdb=True)
    p = cls(**kwargs)
    said = take_note()   # once per process: why this is the standard pdb
    if said:
        print(said, file=p.stdout)
    if stdin is None and stdout is None:
        p.use_rawinput = 1  # real terminal: keep line editing and history
    elif hasattr(p, "config") and not getattr(stdout, "isatty", lambda: False)():
        p.config.highlight = False  # plain text into a file or a test's buffer
        p.config.use_pygments = False
    return p


def _pdbpp_local():
    """pdbpp's per-thread state, where ``pdb.set_trace()`` finds the instance to reuse
    (pdbpp's module, hijacking ``pdb`` or not; plain pdb has none)."""
    module = sys.modules.get(pdb_class().__module__)
    return getattr(module, "local", None) if hasattr(module, "PdbMeta") else None


class PdbRunner:
    """Runs pdb sessions for a debugger; injectable I/O for tests and frontends.

    ``around`` is a context-manager factory entered for each session (the TUI
    suspends itself there). While attached (``install``/``uninstall``, done by
    the debugger on the executing thread), a direct ``pdb.set_trace()`` in user
    code reuses our instance, so it gets the same streams and ``around``.
    """

    def __init__(self, stdin=None, stdout=None, around=None):
        self.stdin = stdin
        self.stdout = stdout
        self.around = around
        self._active = threading.local()
        self._installed = threading.local()

    def install(self) -> None:
        local = _pdbpp_local()
        if local is None:
            return  # plain pdb: pdb.set_trace() makes its own session
        saved = getattr(local, "GLOBAL_PDB", None)
        p = make_pdb(self.stdin, self.stdout)   # becomes pdbpp's instance for this thread
        p._session_cm = self._context
        p._streams = (self.stdin, self.stdout)
        self._installed.state = (saved, p)

    def uninstall(self) -> None:
        state = getattr(self._installed, "state", None)
        local = _pdbpp_local()
        if state is not None and local is not None:
            local.GLOBAL_PDB = state[0]
            self._installed.state = None

    def _reinstall(self) -> None:
        """After a session of our own, ``pdb.set_trace()`` reuses the installed instance."""
        state = getattr(self._installed, "state", None)
        local = _pdbpp_local()
        if state is not None and local is not None:
            local.GLOBAL_PDB = state[1]

    def _context(self):
        import contextlib
        return self.around() if self.around is not None else contextlib.nullcontext()

    def step_into(self, func, args, op_name: str = "", target=None):
        """Call ``func(*args)`` under pdb, stopping at its first line; returns its result.

        ``target`` (a code object) stops there instead, when ``func`` only leads to the
        user's function (a framework's flattening wrapper). Whatever tracer was installed
        before (a coverage tool's) is back afterwards.
        """
        target = target or getattr(func, "__code__", None)
        saved, saved_threads = sys.gettrace(), threading.gettrace()
        with self._context():
            p = make_pdb(self.stdin, self.stdout)
            p._target_code = target if target is not None else _call_wrapped.__code__
            self._active.pdb = p
            p.reset()
            sys.settrace(p.trace_dispatch)
            try:
                return _call_wrapped(func, *args)
            except bdb.BdbQuit:
                err = PdbQuit(None, None, f"the run was aborted from pdb (quit) in op "
                                          f"'{op_name}'")
                err.pfd_aborted_at = op_name
                raise err from None
            finally:
                sys.settrace(saved)
                threading.settrace(saved_threads)
                p.quitting = True
                self._active.pdb = None
                self._reinstall()

    def post_mortem(self, exc: BaseException) -> None:
        """pdb at the frame that raised ``exc`` (the user's code, not ours)."""
        tb = exc.__traceback__
        if tb is None:
            return
        with self._context():
            p = make_pdb(self.stdin, self.stdout)
            p.reset()
            try:
                p.interaction(None, tb)
            except bdb.BdbQuit:
                pass
            finally:
                self._reinstall()

    def set_trace(self, frame) -> None:
        """``breakpoint()`` inside a wrapped function: the same session if one is open.

        The session (and ``around``) starts at pdb's first stop in ``frame``.
        """
        active = getattr(self._active, "pdb", None)
        if active is not None:
            active.set_trace(frame)
            return
        p = make_pdb(self.stdin, self.stdout)
        p._session_cm = self._context
        p.set_trace(frame)
