"""``--pfd-trace=DIR``: record every test in memory, keep the failing ones on disk.

Tests are recorded with ``capture="fault"``: summaries, plus the inputs of the
wrapped calls that failed or made a diagnostic, so the report section can give
the ``pyfunc-debug replay FILE --pdb`` command that steps into the failing call.

Registered by the entry module (``pyfunc_debug_pytest``) once DIR has been checked.
Under xdist each worker has its own ``FailedTraces`` writing into the shared DIR;
the report section travels to the controller with the report."""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from .. import events as ev
from ..trace.failures import first_failure, original_line
from ..trace.recorder import Trace, trace

__all__ = ["FailedTraces", "TRACE_KEY", "file_name", "describe"]

TRACE_KEY = pytest.StashKey[Trace]()
SECTION = "pyfunc-debug trace"
_MAX_NAME = 120


def file_name(nodeid: str) -> str:
    """A file name for a test id: ``tests/test_x.py::test_a[1]`` -> ``tests_test_x.py__test_a_1.jsonl``."""
    safe = re.sub(r"[^\w.-]", "_", nodeid).strip("._") or "test"
    if len(safe) > _MAX_NAME:  # keep it short and still unique
        safe = f"{safe[:_MAX_NAME - 11]}-{_digest(nodeid)}"
    return safe + ".jsonl"


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def describe(path: str, events, captured=()) -> str:
    """The report section: the file, the first failing op and the user's exception line;
    with ``captured`` calls (op names, in order), the command that replays the first."""
    lines = [f"trace: {path} ({len(events)} events; replay: pyfunc-debug view {path})"]
    _failure(lines, events)
    if captured:
        lines.append(f"step into the call of op '{captured[0]}' that went wrong: "
                     f"pyfunc-debug replay {path} --pdb")
    return "\n".join(lines)


def _failure(lines, events) -> None:
    failed = first_failure(events)
    if failed is None:
        stopped = next((e for e in events if type(e) is ev.RunEnd and not e.ok), None)
        lines.append("no op failed: the test failed outside the graph's ops" if stopped is None
                     else f"no op failed; run {stopped.run_id} ended with {stopped.error}")
        return
    where = f" created at {failed.source}" if failed.source else ""
    lines.append(f"first failing op: '{failed.op}' ({failed.op_type}){where}")
    line = original_line(failed.message)
    if failed.error_type not in line:
        line += f"  [raised as {failed.error_type}]"
    lines.append(f"error: {line}")


class FailedTraces:
    """Registered by ``--pfd-trace``: one in-memory ``Trace`` per test; a failing
    phase (setup, call or teardown) writes the events so far and adds a report section."""

    def __init__(self, directory: Path, root: Path):
        self.directory = directory
        self.root = root
        self._owners: dict[str, str] = {}   # file name -> test id (two ids may sanitize alike)

    def current(self, item) -> Trace | None:
        """The recording of ``item`` while it runs (the ``pfd_trace`` fixture hands it out)."""
        return item.stash.get(TRACE_KEY, None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        with trace(capture="fault") as tr:
            item.stash[TRACE_KEY] = tr
            try:
                yield
            finally:
                del item.stash[TRACE_KEY]   # the events go with the test

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        tr = item.stash.get(TRACE_KEY, None)
        if not report.failed or tr is None or not tr.events:
            return
        path = self._path(item.nodeid)
        path.parent.mkdir(parents=True, exist_ok=True)
        events = list(tr.events)
        tr.save(path)
        captured = [record["op"] for record, _ in tr.faults.kept] if tr.faults else []
        report.sections.append((SECTION, describe(self._shown(path), events, captured)))

    def _path(self, nodeid: str) -> Path:
        name = file_name(nodeid)
        if self._owners.setdefault(name, nodeid) != nodeid:
            name = f"{name[:-len('.jsonl')]}-{_digest(nodeid)}.jsonl"
        return self.directory / name

    def _shown(self, path: Path) -> str:
        """The path relative to where pytest was started, when it is below it."""
        try:
            return os.fspath(path.relative_to(self.root))
        except ValueError:
            return os.fspath(path)
