"""Snapshot tests of the TUI's layout (SPEC §5), with pytest-textual-snapshot.

The SVGs live in ``tests/__snapshots__/test_tui_snapshots/``; after an intended
change to the layout, regenerate them with
``pytest tests/test_tui_snapshots.py --snapshot-update`` and look at them.

The screens must render the same on every machine and in any test order, but
the app shows op durations (event log, inspector) and event/run numbers that
come from process-wide counters. Until the app has a deterministic mode, the
``deterministic`` fixture pins those from the outside: a fake clock (each
reading 1 µs after the last) and fresh sequence/run counters; no absolute path
is shown (the replayed graph is built from code with a fixed file name and the
trace path is relative).
"""
from __future__ import annotations

import contextlib
import io
import itertools
import os
import time

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.debug import run_loop
from pyfunc_debug.runtime import executor, loop, observed  # noqa: F401
from pyfunc_debug.tui.launch import demo_app
from pyfunc_debug.tui.replay import ReplayApp


@pytest.fixture
def deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    clock = itertools.count(1_000_000_000, 1_000).__next__
    monkeypatch.setattr(run_loop, "_now", clock)
    monkeypatch.setattr(observed, "_now", clock)
    monkeypatch.setattr(ev, "next_seq", itertools.count(1).__next__)
    monkeypatch.setattr(loop, "_run_ids", itertools.count(1))
    return tmp_path


def _paused_demo():
    app = demo_app(suspend=contextlib.nullcontext, pdb_io=(io.StringIO(""), io.StringIO()),
                   show_timings=False)

    async def wait_for_the_pause(pilot):
        end = time.monotonic() + 10
        while app.pause is None or app.pause.op_name != "normalize":
            assert time.monotonic() < end, "the demo never paused before normalize"
            await pilot.pause(0.05)
        # the pause has drained every event and the worker is blocked: nothing changes
        # from here, so stop the 50 ms tick (see test_tui_pilot._stop_ticking)
        app.stop_ticking()
        await pilot.pause()

    return app, wait_for_the_pause


def _end(app) -> None:
    """Abort the paused demo so no debugger stays attached to later tests."""
    app.bridge.quit()
    app.worker_thread.join(5)
    assert not app.worker_thread.is_alive()


def test_demo_paused_before_normalize(snap_compare, deterministic):
    app, run_before = _paused_demo()
    try:
        assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
    finally:
        _end(app)


def test_demo_paused_before_normalize_small_terminal(snap_compare, deterministic):
    app, run_before = _paused_demo()
    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
    finally:
        _end(app)


# Compiled under a fixed file name so "created at" reads the same everywhere.
GRAPH_SOURCE = '''
import numpy as np
import pyfunc_debug as pfd


def centre(x):
    return (x - np.mean(x)).astype(np.float32)


graph = pfd.Graph()
with graph.as_default():
    x = pfd.compat.v1.placeholder(pfd.float32, shape=[None], name="x")
    centred = pfd.numpy_function(centre, [x], pfd.float32, name="centre")
    squares = pfd.square(centred, name="squares")
    total = pfd.reduce_sum(squares, name="total")
'''


def test_view_of_a_small_trace(snap_compare, deterministic, monkeypatch):
    monkeypatch.chdir(deterministic)
    ns: dict = {}
    exec(compile(GRAPH_SOURCE, "small_graph.py", "exec"), ns)
    with pfd.trace("small.jsonl", capture="full"):
        with pfd.Session(graph=ns["graph"]) as sess:
            for feed in ([1.0, 2.0, 3.0, 6.0], [0.5, 0.25, 4.0, 8.0, 2.0]):
                sess.run(ns["total"], {ns["x"]: np.array(feed, np.float32)})
    assert os.path.exists("small.jsonl")
    assert snap_compare(ReplayApp("small.jsonl", show_timings=False), terminal_size=(120, 40))
