"""``--pfd-break-on=error|nan``: each test runs under a ``Debugger`` with the console frontend.

pytest captures stdin/stdout while a test runs; a pause (and a pdb session
started from it) suspends that capture, talks on the real terminal, and
resumes it — the user needs no ``-s``. ``q`` fails the current test with one
line; the session goes on.
"""
from __future__ import annotations

import contextlib
import sys

import pytest

from ..debug import ConsoleFrontend, Debugger, PdbRunner

__all__ = ["BreakOn", "OnTerminal"]

_DEBUGGER = pytest.StashKey[Debugger]()


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
        frontend = ConsoleFrontend()
        dbg = Debugger(on_pause=OnTerminal(frontend, self.terminal),
                       pdb_runner=PdbRunner(around=self.terminal))
        frontend.debugger = dbg   # `b GLOB` at the prompt adds to this test's debugger
        if "nan" in self.kinds:
            dbg.break_on(when="nan_producer")
        if "error" in self.kinds:
            dbg.break_on(on_error=True)
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
                del item.stash[_DEBUGGER]   # its breakpoints and hits go with the test

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        exc = call.excinfo.value if call.excinfo is not None else None
        if report.failed and getattr(exc, "pfd_aborted_at", None) is not None \
                and not isinstance(exc, KeyboardInterrupt):
            # the user quit on purpose: one line, not a traceback through our machinery
            report.longrepr = f"{type(exc).__name__}: {exc}"
