"""``--pfd-trace=DIR``: record every test in memory, keep the failing ones on disk.

Tests are recorded with ``capture="fault"``: summaries, plus the inputs of the
wrapped calls that failed or made a diagnostic, so the report section can give
the ``pyfunc-debug replay FILE --pdb`` command that steps into the failing call.

A test that runs replaces what an earlier session wrote for it: its trace and
the files beside it (captured calls, their values) go before it writes new ones,
or go if it writes none, so no stale failure stays for ``view`` or ``replay``.

Registered by the entry module (``pyfunc_debug_pytest``) once DIR has been checked.
Under xdist each worker has its own ``FailedTraces`` writing into the shared DIR;
the report section travels to the controller with the report."""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import warnings
from pathlib import Path

import pytest

from .. import events as ev
from ..source_text import relative_source
from ..trace.failures import first_failure, original_line
from ..trace.faults import faults_path
from ..trace.jsonl import origins_path
from ..trace.recorder import Trace, trace
from ..trace.values import valid_key, values_dir

__all__ = ["FailedTraces", "TRACE_KEY", "file_name", "describe"]

TRACE_KEY = pytest.StashKey[Trace]()
SECTION = "pyfunc-debug trace"
_VALUE_FILE = re.compile(r"([^.]+)\.npy|\.([^.]+)\.npy\.tmp")   # .tmp: a write cut short
_MAX_NAME = 120


def file_name(nodeid: str, unique: bool = False) -> str:
    """A file name for a test id: ``tests/test_x.py::test_a[1]`` -> ``tests_test_x.py__test_a_1.jsonl``;
    ``unique`` (the plugin's names): with a digest of the id whenever a parameter id's
    character had to change (no session sees the names another gave, nor does an xdist
    worker the others': ``[x/y]`` and ``[x_y]`` collided, a passing one removing the
    other's file)."""
    safe = re.sub(r"[^\w.-]", "_", nodeid).strip("._") or "test"
    if len(safe) > _MAX_NAME:  # keep it short and still unique
        safe = f"{safe[:_MAX_NAME - 11]}-{_digest(nodeid)}"
    elif unique and re.search(r"[^\w.-]", nodeid.partition("[")[2][:-1]):
        safe = f"{safe}-{_digest(nodeid)}"   # a parameter id's character was replaced
    return safe + ".jsonl"


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def describe(path: str, events, captured=(), functions=None) -> str:
    """The report section: the file, the first failing op (or the first diagnostic) and the
    user's exception line; with ``captured`` calls (op names, in order), the command that
    replays that op's call — or why replay cannot (its function has no importable name:
    ``functions``, op -> its recorded identity)."""
    lines = [f"trace: {path} ({len(events)} events; replay: pyfunc-debug view {path})"]
    op = _failure(lines, events)
    if captured:
        from ..replay.locate import unimportable   # the rule replay itself applies
        op = op if op in captured else captured[0]
        qualname = ((functions or {}).get(op) or {}).get("qualname") or ""
        why = unimportable(qualname)
        if why:
            lines.append(f"op '{op}': its function {qualname} is {why}: replay cannot import "
                         "it (define it at module level to step into this call with "
                         "pyfunc-debug replay)")
        else:
            lines.append(f"step into the call of op '{op}' that went wrong: "
                         f"pyfunc-debug replay {path} --op {op} --pdb")
    return "\n".join(lines)


# diagnostics that say an op went wrong where no op failed (a NaN made from finite inputs)
_WRONG = ("non_finite", "shape_change", "input_modified", "mutation", "tout_mismatch")


def _failure(lines, events) -> str | None:
    """Add the failure's lines; the op they are about (None: none)."""
    failed = first_failure(events)
    if failed is None:
        stopped = next((e for e in events if type(e) is ev.RunEnd and not e.ok), None)
        lines.append("no op failed: the test failed outside the graph's ops" if stopped is None
                     else f"no op failed; run {stopped.run_id} ended with {stopped.error}")
        warned = next((e for e in events if type(e) is ev.Warning and e.op and
                       e.kind in _WRONG), None)
        if warned is None:
            return None
        where = f" created at {relative_source(warned.source)}" if warned.source else ""
        lines.append(f"first op that went wrong: '{warned.op}' ({warned.op_type}){where}")
        lines.append(f"diagnostic: {warned.message}")
        return warned.op
    where = f" created at {relative_source(failed.source)}" if failed.source else ""
    lines.append(f"first failing op: '{failed.op}' ({failed.op_type}){where}")
    line = original_line(failed.message)
    if failed.error_type not in line:
        line += f"  [raised as {failed.error_type}]"
    lines.append(f"error: {line}")
    return failed.op


class FailedTraces:
    """Registered by ``--pfd-trace``: one in-memory ``Trace`` per test; a failing
    phase (setup, call or teardown) writes the events so far and adds a report section."""

    def __init__(self, directory: Path, root: Path):
        self.directory = directory
        self.root = root
        self._owners: dict[str, str] = {}   # file name -> test id (two ids may sanitize alike)
        self._written: set[str] = set()     # test ids whose files this session wrote

    def current(self, item) -> Trace | None:
        """The recording of ``item`` while it runs (the ``pfd_trace`` fixture hands it out)."""
        return item.stash.get(TRACE_KEY, None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        with trace(capture="fault") as tr:
            item.stash[TRACE_KEY] = tr
            try:
                outcome = yield
            finally:
                del item.stash[TRACE_KEY]   # the events go with the test
        if outcome.excinfo is None and item.nodeid not in self._written:
            self._remove_previous(item.nodeid)   # it passed (or failed outside any graph)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        tr = item.stash.get(TRACE_KEY, None)
        if not report.failed or tr is None or not tr.events:
            return
        path = self._remove_previous(item.nodeid)   # a value file of an old call would stay
        path.parent.mkdir(parents=True, exist_ok=True)
        self._written.add(item.nodeid)
        events = list(tr.events)
        tr.save(path)
        captured = [record["op"] for record, _ in tr.faults.kept] if tr.faults else []
        functions = tr.faults.functions if tr.faults else {}
        report.sections.append((SECTION, describe(self._shown(path), events, captured,
                                                  functions)))

    def _path(self, nodeid: str) -> Path:
        name = file_name(nodeid, unique=True)
        if self._owners.setdefault(name, nodeid) != nodeid:
            name = f"{name[:-len('.jsonl')]}-{_digest(nodeid)}.jsonl"
        return self.directory / name

    def _remove_previous(self, nodeid: str) -> Path:
        """Remove the files an earlier session wrote for this test; its trace's path.

        Only names that are this test's: the one this session gives it, and those with
        its id's digest (another run's name under xdist, or after a clash); in the
        values folder only value files, so a user's own file there stays."""
        path = self._path(nodeid)
        plain = file_name(nodeid)   # another test's, when this session gave it another name
        names = {path.name} | {name for name in (
            file_name(nodeid, unique=True), f"{plain[:-len('.jsonl')]}-{_digest(nodeid)}.jsonl")
            if name != plain}
        for name in names:
            trace_path = self.directory / name
            try:
                for beside in (trace_path, faults_path(trace_path), origins_path(trace_path)):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(beside)
                _remove_values(values_dir(trace_path))
            except OSError as exc:
                warnings.warn(f"pyfunc-debug: an earlier trace of {nodeid} could not be "
                              f"removed: {exc}", pytest.PytestWarning, stacklevel=1)
        return path

    def _shown(self, path: Path) -> str:
        """The path relative to where pytest was started, when it is below it."""
        try:
            return os.fspath(path.relative_to(self.root))
        except ValueError:
            return os.fspath(path)


def _remove_values(folder: str) -> None:
    """The files ``write_value`` makes in ``folder`` (and the folder, once empty)."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        m = _VALUE_FILE.fullmatch(entry.name)
        if m and valid_key(m[1] or m[2]) and entry.is_file(follow_symlinks=False):
            os.unlink(entry.path)
    with contextlib.suppress(OSError):   # not empty: a file of the user's is in it
        os.rmdir(folder)
