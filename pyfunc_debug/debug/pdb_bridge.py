"""Running pdb (pdbpp where it works, see ``pdb_choice``) inside a wrapped function, on the executing thread.

``PdbRunner`` is the one way in: ``step_into(func, args)`` stops at the first
line of ``func`` with its real arguments; ``post_mortem(exc)`` opens the
user's frame that raised, or, for a fault found after the function returned (a
dtype error), that function's frame (``keeping_frame`` kept it), where what it
returned is ``__return__`` (pdb's ``retval`` prints it); ``set_trace(frame)``
serves ``breakpoint()`` and ``pdb.set_trace()`` while a debugger is attached. Quitting pdb (``q``,
Ctrl+D) aborts the run: ``PdbQuit``.

Pitfalls handled here (see reference/textual_pdb_notes.md): ``Pdb.runcall``
swallows ``BdbQuit`` (we drive the trace ourselves and turn quitting into an abort); ``use_global_pdb`` is a constructor keyword of
pdbpp's metaclass; passing ``stdout=`` turns off line editing
(``use_rawinput`` is restored for the real terminal); ``~/.pdbrc`` commands are
not read (``readrc=False``), so a user's rc file cannot drive the session.
"""
from __future__ import annotations

import bdb
import os
import sys
import sysconfig
import threading

from ..errors import CancelledError
from ..source_text import is_ours, is_users
from .pdb_choice import is_pdbpp, pdb_class, take_note

__all__ = ["PdbRunner", "PdbQuit", "make_pdb", "keeping_frame", "NOTHING"]


# Our machinery, never shown while stepping (the demo's functions in pyfunc_debug.demo are).
SKIP = ["pyfunc_debug.runtime.*", "pyfunc_debug.debug.*", "pyfunc_debug.ops.*",
        "pyfunc_debug.eager.*", "pyfunc_debug.graph.*", "pyfunc_debug.trace.*",
        "pyfunc_debug.events", "pyfunc_debug.autodiff", "pyfunc_debug.external_calls",
        "pyfunc_debug.tensorflow", "pyfunc_debug.jax", "pyfunc_debug.tui.*", "contextlib", "threading",
        # the frameworks around a callback (step into the user's function, not theirs)
        "tensorflow.*", "keras.*", "jax.*", "jaxlib.*"]


class PdbQuit(CancelledError):
    """The user quit pdb: the run is aborted."""


NOTHING = object()   # post_mortem(returned=...): no returned value to show


def _quit(op_name: str, where: str) -> PdbQuit:
    err = PdbQuit(None, None, f"the run was aborted from pdb (quit) in op '{op_name}'{where}")
    err.pfd_aborted_at = op_name
    return err


def keeping_frame(code, box: list):
    """A one-shot profile hook: puts the frame of the first call of ``code`` in ``box``
    and removes itself (it sees only the calls up to that one). ``None`` when another
    profiler is installed, which is left alone."""
    if code is None or sys.getprofile() is not None:
        return None
    _wanted.code, _wanted.box = code, box
    return _keep_frame


_wanted = threading.local()   # what ``_keep_frame`` waits for on this thread


def _keep_frame(frame, event, arg):
    if event == "call" and frame.f_code is _wanted.code:
        _wanted.box.append(frame)
        sys.setprofile(None)


_RUNPY = ("<frozen runpy>", os.path.join(sysconfig.get_path("stdlib"), "runpy.py"))


def _script_start(stack) -> int:
    """Index of the first frame of a script our command launched (after our frames and
    ``runpy``'s that ran it), else 0: the frames before it are the launcher's."""
    start, ours = 0, False
    for i, (frame, _) in enumerate(stack):
        if is_ours(frame.f_code.co_filename):
            ours = True
        elif ours and frame.f_code.co_filename in _RUNPY:
            start = i + 1
        elif ours:
            break
    return start


def _user_frame(tb):
    """The innermost frame of ``tb`` in the user's code (not ours, nor an installed
    library's such as numpy, nor the standard library's), else None."""
    found = None
    while tb is not None:
        if is_users(tb.tb_frame.f_code.co_filename):
            found = tb.tb_frame
        tb = tb.tb_next
    return found


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
    _start_frame = None   # post-mortem: the frame to open at (not the innermost)
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

    def setup(self, f, tb):
        ret = super().setup(f, tb)
        start = self._start_frame
        for i, (frame, _) in enumerate(self.stack if start is not None else ()):
            if frame is start:
                self.curindex, self.curframe = i, frame
                self.curframe_locals = frame.f_locals
        self._hide_our_frames()
        return ret

    _ours_hidden = 0   # frames of ours the stack leaves out (``w`` says how many)

    def _hide_our_frames(self) -> None:
        """The stack as the user's program has it: our frames (the session's executor,
        an op's kernel, this bridge, and under ``pyfunc-debug run`` the command and
        ``runpy`` that launched the script) are left out of ``w``, ``u`` and ``d``, so that ``u``
        from a wrapped function goes to the line that ran the session, not into us. The
        frame pdb stands in stays, whosever it is (a function with no Python code
        stops in ``_call_wrapped``)."""
        stack = self.stack
        start = _script_start(stack)   # under ``pyfunc-debug run``: the user's script's frame
        keep = [e for i, e in enumerate(stack)
                if e[0] is self.curframe or (i >= start and not is_ours(e[0].f_code.co_filename))]
        self._ours_hidden = len(stack) - len(keep)
        if self._ours_hidden:
            self.stack = keep
            self.curindex = next(i for i, e in enumerate(keep) if e[0] is self.curframe)

    def do_where(self, arg):
        if self._ours_hidden:
            print(f"pyfunc-debug: {self._ours_hidden} frame(s) of its own not shown",
                  file=self.stdout)
        return super().do_where(arg)

    do_w = do_bt = do_where

    def _leave_session(self):
        entered, self._entered = self._entered, None
        if entered is not None:
            entered.__exit__(None, None, None)

    _saved_trace = None   # the tracer before ``breakpoint()`` (a coverage tool's)

    def set_trace(self, frame=None):
        current = sys.gettrace()
        if getattr(current, "__self__", None) is not self:
            self._saved_trace = current
        self._first_stop = frame
        try:
            super().set_trace(frame)
        finally:
            self._first_stop = None

    _first_stop = None   # the frame set_trace starts in, while it runs

    def set_stepinstr(self):
        # Python 3.13's set_trace stops at the very next instruction anywhere: a garbage
        # collection's weakref callback there opened pdb in weakref.py. Stop at the next
        # line of the frame it was called for, as every earlier Python does
        if self._first_stop is not None:
            self._set_stopinfo(self._first_stop, None)
            return
        super().set_stepinstr()

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
        self.quit_in: str | None = None   # the op whose pdb session the user quit, if any
        # called when the user steps out of a stepped-into function (n past its return)
        self.on_step_out = None
        self._active = threading.local()
        self._installed = threading.local()

    def install(self) -> None:
        self._join_set_trace()
        local = _pdbpp_local()
        if local is None:
            return  # plain pdb: pdb.set_trace() is joined above
        saved = getattr(local, "GLOBAL_PDB", None)
        p = make_pdb(self.stdin, self.stdout)   # becomes pdbpp's instance for this thread
        p._session_cm = self._context
        p._streams = (self.stdin, self.stdout)
        self._installed.state = (saved, p)

    def uninstall(self) -> None:
        self._leave_set_trace()
        state = getattr(self._installed, "state", None)
        local = _pdbpp_local()
        if state is not None and local is not None:
            local.GLOBAL_PDB = state[0]
            self._installed.state = None

    def _join_set_trace(self) -> None:
        """The standard library's ``pdb.set_trace()`` opens this runner's session at its
        caller while attached, as ``breakpoint()`` does: the standard ``Pdb`` has no
        instance to reuse (pdbpp's has, see ``install``), and a session of its own would
        read the terminal the UI holds (the program hung, its prompt in the log). A
        replacement someone else made (pytest's, pdbpp's) is left alone; the standard one
        is back on ``uninstall``."""
        import pdb
        current = pdb.set_trace
        if not (getattr(current, "_pfd_joins", False) or
                (getattr(current, "__module__", None) == "pdb" and
                 getattr(current, "__qualname__", None) == "set_trace")):
            return

        def set_trace(*, header=None):
            if header is not None:
                print(header, file=self.stdout or sys.stdout)
            self.set_trace(sys._getframe(1))
        set_trace._pfd_joins = True
        self._joined = (current, set_trace)
        pdb.set_trace = set_trace

    _joined = None   # (the pdb.set_trace replaced, ours) while installed

    def _leave_set_trace(self) -> None:
        import pdb
        joined, self._joined = self._joined, None
        if joined is not None and pdb.set_trace is joined[1]:   # else: replaced since
            pdb.set_trace = joined[0]

    def _reinstall(self) -> None:
        """After a session of our own, ``pdb.set_trace()`` reuses the installed instance."""
        state = getattr(self._installed, "state", None)
        local = _pdbpp_local()
        if state is not None and local is not None:
            local.GLOBAL_PDB = state[1]

    def _context(self):
        import contextlib
        return self.around() if self.around is not None else contextlib.nullcontext()

    def step_into(self, func, args, op_name: str = "", target=None, note: str = ""):
        """Call ``func(*args)`` under pdb, stopping at its first line; returns its result.

        ``target`` (a code object) stops there instead, when ``func`` only leads to the
        user's function (a framework's flattening wrapper). Whatever tracer was installed
        before (a coverage tool's) is back afterwards. ``note`` is said first.
        """
        target = target or getattr(func, "__code__", None)
        saved, saved_threads = sys.gettrace(), threading.gettrace()
        with self._context():
            p = make_pdb(self.stdin, self.stdout)
            if note:
                print(note, file=p.stdout)
            p._target_code = target if target is not None else _call_wrapped.__code__
            self._active.pdb = p
            p.reset()
            sys.settrace(p.trace_dispatch)
            try:
                result = _call_wrapped(func, *args)
            except bdb.BdbQuit:
                self.quit_in = op_name
                raise _quit(op_name, "") from None
            finally:
                # still stepping (n, s or r past the function's return), not continued (c)
                stepping = not p.quitting and p.stopframe is not p.botframe
                sys.settrace(saved)
                threading.settrace(saved_threads)
                p.quitting = True
                self._active.pdb = None
                self._reinstall()
        if stepping and self.on_step_out is not None:
            self.on_step_out()   # the debugger pauses before the next op, as its own n does
        return result

    def post_mortem(self, exc: BaseException, frame=None, returned=NOTHING, op_name: str = "",
                    aborts: bool = False, note: str = "") -> None:
        """pdb where ``exc`` came from: the user's innermost frame that raised it, or
        ``frame`` (a wrapped function that returned a wrong value: what it returned is
        ``__return__`` there). ``aborts``: quitting pdb raises ``PdbQuit`` (the run is
        aborted), else the error goes on as it was. ``note`` is said first."""
        tb = exc.__traceback__
        if tb is None and frame is None:
            return
        with self._context():
            p = make_pdb(self.stdin, self.stdout)
            p.reset()
            if note:
                print(f"pyfunc-debug: {note}", file=p.stdout)
            if frame is not None:
                if returned is not NOTHING:
                    frame.f_locals["__return__"] = returned
                print(f"pyfunc-debug: op '{op_name}' failed after {frame.f_code.co_name}() "
                      "returned: here is its frame"
                      + (", what it returned is __return__ (retval prints it)"
                         if returned is not NOTHING else ""), file=p.stdout)
            else:
                p._start_frame = _user_frame(tb)
            try:
                p.interaction(frame, None if frame is not None else tb)
                quitted = p.quitting
            except bdb.BdbQuit:
                quitted = True
            finally:
                p.quitting = True
                self._reinstall()
            if quitted and aborts:   # known before the session ends (a UI leaves at once)
                self.quit_in = op_name
        if quitted and aborts:
            raise _quit(op_name, " (post-mortem)") from exc

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
        # the streams are taken again once ``around`` has given the terminal back (pytest's
        # capture suspended: made now, pdb wrote into the capture)
        p._streams = (self.stdin, self.stdout)
        p.set_trace(frame)
