"""pyfunc-debug's pytest plugin (SPEC §6): the ``pytest11`` entry point, named ``pyfunc_debug``.

- ``--pfd-trace=DIR``: each failing test's events go to ``DIR/<test id>.jsonl``
  and its report names the file, the first failing op and the user's error.
- ``--pfd-break-on=error|nan``: tests run under the debugger with the console
  frontend; pytest's output capture is suspended while paused.
- fixture ``pfd_trace``: the ``Trace`` recording the current test.

pytest imports this module in every run of every project in the environment,
so it imports nothing but pytest itself (SPEC 5b): the engine, numpy and pdb
load only when an option is given or the fixture is used, from
``pyfunc_debug.pytest_plugin.recording`` / ``.breaking``. Without options the
plugin registers no hooks beyond these and records nothing.

``-p pyfunc_debug`` (or ``-p no:pyfunc_debug``) names this plugin;
``-p pyfunc_debug.pytest_plugin`` is an alias that registers this module under
that same name, so options and fixture exist once whichever way it is loaded.
``pytest --pdb`` needs nothing from here: an error raised inside a wrapped
function carries the user's frames in its own traceback.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["PLUGIN_NAME", "pfd_trace", "pytest_addoption", "pytest_configure"]

PLUGIN_NAME = "pyfunc_debug"            # the entry point's name: `-p no:pyfunc_debug`
TRACE_PLUGIN = "pyfunc_debug-trace"     # the parts registered when an option asks
BREAK_PLUGIN = "pyfunc_debug-break"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pyfunc-debug", "pyfunc-debug: traces and the debugger for graph tests")
    group.addoption("--pfd-trace", metavar="DIR", default=None,
                    help="record each test; write a failing test's events to DIR/<test id>.jsonl "
                         "(replay: pyfunc-debug view FILE). "
                         "Example: pytest --pfd-trace=pfd-traces")
    group.addoption("--pfd-break-on", metavar="error|nan", action="append", default=[],
                    choices=("error", "nan"),
                    help="run tests under the pyfunc-debug console debugger, pausing at an op "
                         "error or at the op that produces a NaN/Inf (repeatable; not with "
                         "xdist). Example: pytest --pfd-break-on=error -x tests/test_model.py")


def pytest_configure(config: pytest.Config) -> None:
    directory = config.getoption("pfd_trace", None)
    kinds = config.getoption("pfd_break_on", None)
    if kinds:
        _refuse_under_xdist(config)
    if directory is not None:
        path = trace_directory(Path(config.invocation_params.dir), directory)
        # an xdist controller runs no test: its workers record (the check above is still
        # worth it there: a bad DIR fails once, before any worker starts)
        if not _is_xdist_controller(config) and not config.pluginmanager.has_plugin(TRACE_PLUGIN):
            from pyfunc_debug.pytest_plugin.recording import FailedTraces
            root = Path(config.invocation_params.dir)
            config.pluginmanager.register(FailedTraces(path, root), TRACE_PLUGIN)
    if kinds and not config.pluginmanager.has_plugin(BREAK_PLUGIN):
        from pyfunc_debug.pytest_plugin.breaking import BreakOn
        capman = config.pluginmanager.getplugin("capturemanager")
        config.pluginmanager.register(BreakOn(tuple(kinds), capman), BREAK_PLUGIN)


@pytest.fixture
def pfd_trace(request: pytest.FixtureRequest):
    """The ``Trace`` recording the current test (``.events``; see ``pfd.trace``).

    With ``--pfd-trace`` it is the recording that is written if the test fails;
    otherwise it records in memory from this fixture's setup to its teardown.
    """
    recorder = request.config.pluginmanager.get_plugin(TRACE_PLUGIN)
    current = recorder.current(request.node) if recorder is not None else None
    if current is not None:
        yield current
        return
    from pyfunc_debug.trace.recorder import trace
    with trace(capture="summary") as tr:
        yield tr


def trace_directory(root: Path, directory: str) -> Path:
    """``DIR`` of ``--pfd-trace`` as an absolute path, or a ``pytest.UsageError`` saying why
    traces could not be written there (checked now, not at the first failing test)."""
    if not directory:
        raise pytest.UsageError("--pfd-trace needs a directory, e.g. --pfd-trace=pfd-traces")
    path = root / Path(directory).expanduser()
    why = _unwritable(path)
    if why:
        raise pytest.UsageError(f"--pfd-trace={directory}: cannot write traces to {path}: {why}")
    return path


def _unwritable(path: Path) -> str | None:
    """Why files cannot be created in ``path`` (made if missing), or None. Nothing is left
    behind: a passing run writes nothing, not even the directory."""
    if path.exists() and not path.is_dir():
        return "it exists and is not a directory"
    existing = path
    while not existing.exists():   # stops at the root, which exists
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a directory"
    # try it: permission bits say nothing to root, nor about /proc or a read-only mount
    import tempfile
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".pfd-trace-check-", dir=existing))
    except OSError as exc:
        return f"cannot create entries in {existing} ({exc.strerror or exc})"
    return None


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")   # xdist's documented test for a worker


def _is_xdist_controller(config: pytest.Config) -> bool:
    # as xdist decides it (-n N sets dist and tx before pytest_configure)
    distributing = config.getoption("dist", "no") != "no" and bool(config.getoption("tx", None))
    return distributing and not _is_xdist_worker(config)


def _refuse_under_xdist(config: pytest.Config) -> None:
    """The debugger talks on the terminal; xdist's workers have none (SPEC 4b: refused aloud)."""
    if _is_xdist_worker(config) or _is_xdist_controller(config):
        raise pytest.UsageError("--pfd-break-on cannot be used with xdist (-n): the workers have "
                                "no terminal; run without -n (or with -n0)")
