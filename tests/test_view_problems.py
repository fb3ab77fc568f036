"""``pyfunc-debug view`` on a trace whose problem is in an earlier run than the last one:
opening says where it is, and ``e`` gets there from anywhere (it wraps to the first)."""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.tui.replay import ReplayApp
from pyfunc_debug.tui.widgets.inspector import Inspector
from pyfunc_debug.tui.widgets.op_list import OpList


def _record(path):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        pfd.numpy_function(lambda v: np.log(v).astype(np.float32), [x], pfd.float32,
                           name="logs")
    with pfd.trace(path, capture="fault"), pfd.Session(graph=g) as sess, \
            np.errstate(invalid="ignore"):
        sess.run("logs:0", {x: np.array([1, -1], np.float32)})     # run 1: a NaN from -1
        sess.run("logs:0", {x: np.array([1, 2], np.float32)})      # run 2: clean
    return pfd.load_trace(path)


@pytest.mark.asyncio
async def test_opening_names_an_earlier_runs_problem_and_e_wraps_to_it(tmp_path):
    events = _record(tmp_path / "t.jsonl")
    app = ReplayApp(str(tmp_path / "t.jsonl"), trace=events, show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.05)
        first = next(e.run_id for e in events if type(e) is ev.RunStart)  # ids are per process
        told = [n.message for n in app._notifications]
        assert any(f"run {first} had a non_finite warning at op 'logs'" in m
                   and "e goes to it" in m for m in told), told
        await pilot.press("e")                 # nothing after the end: back to the first
        here = app.events[app.position - 1]
        assert type(here) is ev.Warning and here.op == "logs" and here.run_id == first
        assert app.query_one(OpList).selected == "logs"
        # the values are not in the events but in the fault files: say so, and what to do
        assert app.query_one(Inspector)._reason == (
            "this faulty call's inputs were captured: s replays it under pdb, r re-runs it "
            "with the current source")
        await pilot.press("right", "right")    # run 2 (clean): nothing was captured there
        assert "captured" not in app.query_one(Inspector)._reason


@pytest.mark.asyncio
async def test_a_clean_trace_says_so_on_e_and_opens_without_a_note(tmp_path):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        pfd.numpy_function(lambda v: v + np.float32(1), [x], pfd.float32, name="inc")
    with pfd.trace(tmp_path / "c.jsonl"), pfd.Session(graph=g) as sess:
        sess.run("inc:0", {x: np.float32(1)})
    app = ReplayApp(str(tmp_path / "c.jsonl"), show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.05)
        assert not list(app._notifications)
        end = app.position
        await pilot.press("e")
        assert app.position == end
        assert any("No error, pause or warning in this trace" in n.message
                   for n in app._notifications)
