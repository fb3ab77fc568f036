"""``--pfd-break-on=error|nan``: each test runs under a ``Debugger`` with the console frontend.

pytest captures stdin/stdout while a test runs; a pause (and a pdb session
started from it) suspends that capture, talks on the real terminal, and
resumes it — the user needs no ``-s``. ``q`` fails the current test with one
line; the session goes on. A breakpoint added at the prompt (``b GLOB``) holds for
the rest of the session, as pdb's do for a program; ``cl N`` removes it.
"""
from __future__ import annotations

import contextlib
import sys

import pytest

from ..debug import ConsoleFrontend, Debugger, PdbRunner

__all__ = ["BreakOn", "OnTerminal", "SessionConsole"]

_DEBUGGER = pytest.StashKey[Debugger]()

SESSION_HELP = """in this pytest session (--pfd-break-on):
  b GLOB     holds for every later test of the session too
  cl N       remove breakpoint N, one added with b (bl lists them)"""


class SessionConsole(ConsoleFrontend):
    """The (pfd) prompt of one test: ``b GLOB`` also goes into ``kept``, the breakpoints
    every later test's debugger starts with; ``cl N`` takes one out of both."""

    def __init__(self, kept: list):
        super().__init__()
        self.kept = kept

    def handle(self, cmd: str, pause):
        word, _, rest = cmd.partition(" ")
        rest = rest.strip()
        if word == "b" and rest:
            bp = self.debugger.break_on(op=rest)
            self.kept.append(bp)
            self.write(f"added {bp.describe()}, for the rest of this pytest session "
                       f"(cl {bp.id} removes it)")
            return None
        if word in ("cl", "clear"):
            self._clear(rest)
            return None
        action = super().handle(cmd, pause)
        if word in ("help", "h", "?"):
            self.write(SESSION_HELP)
        return action

    def _clear(self, number: str) -> None:
        bp = next((b for b in self.kept if str(b.id) == number), None)
        if bp is not None:
            self.kept.remove(bp)
            self.debugger.remove(bp)
            self.write(f"removed {bp.describe()}")
            return
        given = next((b for b in self.debugger.breakpoints if str(b.id) == number), None)
        if given is not None:
            self.write(f"{given.describe()} comes from --pfd-break-on: it holds for every test")
        elif number:
            self.write(f"no breakpoint {number} added with b (bl lists them)")
        else:
            self.write("usage: cl N   remove breakpoint N, one added with b (bl lists them)")


class OnTerminal:
    """A pause frontend run with pytest's capture suspended (``terminal()`` does that)."""

    def __init__(self, frontend, terminal):
        self.frontend = frontend
        self.terminal = terminal

    def __call__(self, pause) -> str:
        with self.terminal():
            sys.stdout.write("\n")   # below pytest's progress line
            return self.frontend(pause)


class BreakOn:
    """Registered by ``--pfd-break-on``: a fresh debugger per test, attached in each phase."""

    def __init__(self, kinds: tuple, capman=None):
        self.kinds = kinds
        self.capman = capman
        self.kept: list = []   # added at a prompt (b GLOB): every later test starts with them

    @contextlib.contextmanager
    def terminal(self):
        """The real terminal for a while: pytest's capture (global and capsys) suspended."""
        if self.capman is None:   # -p no:capture
            yield
            return
        self.capman.suspend(in_=True)
        try:
            yield
        finally:
            self.capman.resume()

    def debugger(self) -> Debugger:
        frontend = SessionConsole(self.kept)
        dbg = Debugger(on_pause=OnTerminal(frontend, self.terminal),
                       pdb_runner=PdbRunner(around=self.terminal))
        frontend.debugger = dbg
        if "nan" in self.kinds:
            dbg.break_on(when="nan_producer")
        if "error" in self.kinds:
            dbg.break_on(on_error=True)
        # the same objects: their numbers (for cl N) and hit counts go on from test to test
        dbg.breakpoints.extend(self.kept)
        return dbg

    def _attached(self, item):
        dbg = item.stash.get(_DEBUGGER, None)
        if dbg is None:
            dbg = item.stash[_DEBUGGER] = self.debugger()
        return dbg

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        with self._attached(item):
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        with self._attached(item):
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        try:
            with self._attached(item):
                yield
        finally:
            if _DEBUGGER in item.stash:
                del item.stash[_DEBUGGER]   # its pauses go with the test; kept stays

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        exc = call.excinfo.value if call.excinfo is not None else None
        if report.failed and getattr(exc, "pfd_aborted_at", None) is not None \
                and not isinstance(exc, KeyboardInterrupt):
            # the user quit on purpose: one line, not a traceback through our machinery
            report.longrepr = f"{type(exc).__name__}: {exc}"
