"""The one protocol between a frontend (the TUI, the console) and a debugger.

A frontend drives a ``Link``: it receives events and pauses, answers pauses,
manages breakpoints, interrupts, quits, and says where pdb sessions talk.
``LocalLink`` is the in-process case (a ``Debugger`` in this process);
``pyfunc_debug.remote.client.RemoteLink`` is the same protocol over a socket
to another process. Frontends are written once, against ``Link``.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from dataclasses import dataclass

from .. import events as ev
from .async_raise import raise_in_thread
from .breakpoints import Breakpoint
from .debugger import Debugger
from .pdb_bridge import PdbRunner

__all__ = ["Link", "LocalLink", "BreakpointInfo", "answering", "add_breakpoints"]


@dataclass(frozen=True)
class BreakpointInfo:
    """A breakpoint as a frontend sees it: plain data (it may come from another process)."""

    id: int
    op: str | None = None
    op_type: str | None = None
    when: str | None = None        # the condition's label ("nan_producer", an expression)
    on_error: bool = False
    on_warning: bool = False
    hit_count: int | None = None
    enabled: bool = True
    hits: int = 0
    description: str = ""

    @classmethod
    def of(cls, bp: Breakpoint) -> "BreakpointInfo":
        return cls(bp.id, bp.op, bp.op_type, bp.condition.label if bp.condition else None,
                   bp.on_error, bp.on_warning, bp.hit_count, bp.enabled, bp.hits, bp.describe())

    def describe(self) -> str:
        return self.description

    def __repr__(self) -> str:
        state = "" if self.enabled else " (disabled)"
        return f"<{self.description}, hits={self.hits}{state}>"


class Link:
    """What a frontend drives. Every method may be called from any thread.

    ``start(on_event, on_pause)``: deliver each event to ``on_event`` (cheap,
    any thread) and each pause to ``on_pause`` (a ``Pause``-like object: see
    ``debug.pause.Pause``); the frontend answers it, then or later, with
    ``answer(action)``. ``stop()`` ends delivery. ``quit()`` is the frontend
    leaving: a local run is aborted, a remote process is detached from and runs on.
    """

    remote = False

    @property
    def quit_in_pdb(self) -> str | None:
        """The op whose pdb session the user quit (``q``, Ctrl+D), else None. That run was
        aborted; the frontend leaves as for its own ``q`` (one ``q`` quits, pdb included)."""
        return None

    @property
    def streams_values(self) -> bool:
        """Whether events carry value summaries and diagnostics (not a remote link attached
        with ``capture="none"``)."""
        return True

    def start(self, on_event=None, on_pause=None, capture: str = "summary",
              capture_bytes: int = 0, settles=None) -> None:
        """Begin delivering; ``capture`` is the value detail events carry (local links);
        ``settles``: a frontend that takes pending summaries (``trace.pending``) when it
        reads them, its ``deferred`` set once events may hold some."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop delivering; a pause still waiting continues."""
        raise NotImplementedError

    def answer(self, action: str) -> None:
        """End the current pause with ``action`` (one of ``debug.pause.ACTIONS``)."""
        raise NotImplementedError

    def break_on(self, op=None, op_type=None, when=None, on_error=False, hit_count=None,
                 on_warning=False) -> BreakpointInfo:
        """As ``Debugger.break_on``; a bad condition raises ``ValueError``."""
        raise NotImplementedError

    def remove(self, bp_id: int) -> None:
        """Remove the breakpoint with this id."""
        raise NotImplementedError

    @property
    def breakpoints(self) -> list:
        """``BreakpointInfo`` of each breakpoint, in order."""
        raise NotImplementedError

    def interrupt(self) -> None:
        """Pause before the next op that runs, in any thread."""
        raise NotImplementedError

    def quit(self) -> None:
        """The frontend leaves (see the class docstring)."""
        raise NotImplementedError

    def set_terminal(self, stdin=None, stdout=None, around=None) -> None:
        """Where pdb sessions talk (``None``: the real terminal), and a context-manager
        factory entered around each session (the TUI suspends itself there)."""
        raise NotImplementedError

    def interrupt_pdb(self) -> None:
        """Ctrl+C typed while pdb owns the terminal: ``KeyboardInterrupt`` in the thread
        running pdb (pdb shows ``--KeyboardInterrupt--`` and prompts again)."""
        raise NotImplementedError


def answering(link: Link, frontend):
    """An ``on_pause`` for ``link`` from a synchronous frontend (``pause -> action``)."""
    def on_pause(pause):
        link.answer(frontend(pause))
    return on_pause


def add_breakpoints(link: Link, globs=(), kinds=()) -> None:
    """``--break GLOB`` and ``--break-on error|nan|warning``, on any link."""
    for glob in globs:
        link.break_on(op=glob)
    if "error" in kinds:
        link.break_on(on_error=True)
    if "nan" in kinds:
        link.break_on(when="nan_producer")
    if "warning" in kinds:
        link.break_on(on_warning=True)


class _Slot:
    """One pause's answer: set once, waited for by the executing thread."""

    def __init__(self):
        self.action = None
        self.done = threading.Event()

    def set(self, action: str) -> bool:
        if self.done.is_set():
            return False
        self.action = action
        self.done.set()
        return True


class LocalLink(Link):
    """The in-process case: a ``Debugger`` here, attached while started."""

    def __init__(self, guard_mutation: bool = False, pdb_runner: PdbRunner | None = None,
                 debugger: Debugger | None = None):
        self.debugger = debugger or Debugger(on_pause=self._on_pause,
                                             guard_mutation=guard_mutation,
                                             pdb_runner=pdb_runner or PdbRunner())
        self.debugger.on_pause = self._on_pause
        self.quitting = False
        self.paused = None
        self._slot: _Slot | None = None
        self._lock = threading.Lock()
        self._on_pause_cb = None
        self._sub = None
        self._active = False
        self._pdb_thread = None

    @property
    def quit_in_pdb(self) -> str | None:
        return self.debugger.pdb.quit_in

    # -- delivery ----------------------------------------------------------------------
    def start(self, on_event=None, on_pause=None, capture: str = "summary",
              capture_bytes: int = 0, records=None, settles=None) -> None:
        """``records``: a sink for op records (``events.subscribe``), for a frontend that
        decodes them itself (the attach server); ``settles``: ``subscribe``'s, for one
        that takes pending summaries (the console's ``DiagnosticPrinter``)."""
        self._on_pause_cb = on_pause
        if on_event is not None:
            kw = {"capture_bytes": capture_bytes} if capture_bytes else {}
            self._sub = ev.subscribe(on_event, capture=capture, records=records,
                                     settles=settles, **kw)
        self._active = True
        self.debugger.__enter__()

    def take_records(self, sink) -> None:
        """Op records to ``sink`` from now on (``None``: events only)."""
        sub = self._sub
        if sub is not None and sub.records is not sink:
            ev._bus.set_records(sub, sink)

    def stop(self) -> None:
        """Detach; a pause still waiting is continued, later checks of this run continue."""
        self._active = False
        self.debugger.__exit__(None, None, None)
        if self._sub is not None:
            self._sub.close()
            self._sub = None
        self.answer("continue")

    def _on_pause(self, pause) -> str:
        if self.quitting:
            return "abort"
        if not self._active or self._on_pause_cb is None:
            return "continue"   # nobody to ask (e.g. the frontend went away)
        slot = _Slot()
        with self._lock:
            outer, self._slot, self.paused = self._slot, slot, pause
        try:
            self._on_pause_cb(pause)
            slot.done.wait()
        finally:
            with self._lock:
                self._slot, self.paused = outer, None
        return slot.action

    def answer(self, action: str) -> None:
        with self._lock:
            slot = self._slot
        if slot is not None:
            slot.set(action)

    # -- control -----------------------------------------------------------------------
    def break_on(self, op=None, op_type=None, when=None, on_error=False, hit_count=None,
                 on_warning=False) -> BreakpointInfo:
        return BreakpointInfo.of(self.debugger.break_on(op, op_type, when, on_error, hit_count,
                                                        on_warning))

    def remove(self, bp_id: int) -> None:
        for bp in list(self.debugger.breakpoints):
            if bp.id == bp_id:
                self.debugger.remove(bp)

    @property
    def breakpoints(self) -> list:
        return [BreakpointInfo.of(bp) for bp in self.debugger.breakpoints]

    def interrupt(self) -> None:
        self.debugger.interrupt()

    def quit(self) -> None:
        """Abort: a paused run is answered with abort, a running one aborts at its next op."""
        self.quitting = True
        self.answer("abort")
        self.debugger.interrupt()

    def set_terminal(self, stdin=None, stdout=None, around=None) -> None:
        runner = self.debugger.pdb
        runner.stdin, runner.stdout, runner.around = stdin, stdout, self._session(around)

    def _session(self, around):
        """``around``, noting the thread that runs the pdb session (for ``interrupt_pdb``)."""
        @contextlib.contextmanager
        def session():
            self._pdb_thread = threading.get_ident()
            try:
                with around() if around is not None else contextlib.nullcontext():
                    yield
            finally:
                self._pdb_thread = None
        return session

    def interrupt_pdb(self) -> None:
        ident = self._pdb_thread
        if ident is None:
            return
        if ident == threading.main_thread().ident and _raises_on_sigint():
            # as a Ctrl+C at a local terminal: a signal wakes a blocking call (a sleep, a
            # read), which an asynchronous exception would wait for
            signal.pthread_kill(ident, signal.SIGINT)
        else:
            raise_in_thread(ident)


def _raises_on_sigint() -> bool:
    """Whether SIGINT raises ``KeyboardInterrupt`` in this process (Python's own handler,
    or pdb's while it continues): a program's own handler is not run by our Ctrl+C."""
    handler = signal.getsignal(signal.SIGINT)
    return handler is signal.default_int_handler or \
        getattr(handler, "__name__", "") == "sigint_handler"
