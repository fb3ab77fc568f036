"""The pytest plugin (SPEC §6), installed with the package (entry point ``pytest11``).

- ``--pfd-trace=DIR``: each failing test's events go to ``DIR/<test id>.jsonl``
  and its report names the file, the first failing op and the user's error.
- ``--pfd-break-on=error|nan``: tests run under the debugger with the console
  frontend; pytest's output capture is suspended while paused.
- fixture ``pfd_trace``: the ``Trace`` recording the current test.

``pytest --pdb`` needs nothing from here: an error raised inside a wrapped
function carries the user's frames in its own traceback (``map_exception``).
Without its options the plugin registers no hooks and records nothing.
"""
from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["pfd_trace"]


def pytest_addoption(parser) -> None:
    group = parser.getgroup("pyfunc-debug", "pyfunc-debug: traces and the debugger for graph tests")
    group.addoption("--pfd-trace", metavar="DIR", default=None,
                    help="record each test; write a failing test's events to DIR/<test id>.jsonl "
                         "(replay: pyfunc-debug view FILE)")
    group.addoption("--pfd-break-on", metavar="error|nan", action="append", default=[],
                    choices=("error", "nan"),
                    help="run tests under the pyfunc-debug console debugger, pausing at an op "
                         "error or at the op that produces a NaN/Inf (repeatable)")


def pytest_configure(config) -> None:
    # the parts are imported only when asked for: no options, no hooks, no cost
    directory = config.getoption("pfd_trace", None)
    if directory:
        from .recording import FailedTraces
        root = Path(config.invocation_params.dir)
        config.pluginmanager.register(FailedTraces(root / directory, root), "pyfunc_debug-trace")
    kinds = config.getoption("pfd_break_on", None)
    if kinds:
        from .breaking import BreakOn
        capman = config.pluginmanager.getplugin("capturemanager")
        config.pluginmanager.register(BreakOn(tuple(kinds), capman), "pyfunc_debug-break")


@pytest.fixture
def pfd_trace(request):
    """The ``Trace`` recording the current test (``.events``; see ``pfd.trace``).

    With ``--pfd-trace`` it is the recording that is written if the test fails;
    otherwise it records in memory from this fixture's setup to its teardown.
    """
    from .recording import TRACE_KEY
    current = request.node.stash.get(TRACE_KEY, None)
    if current is not None:
        yield current
        return
    from ..trace.recorder import trace
    with trace(capture="summary") as tr:
        yield tr
