"""``pyfunc-debug view``: keys move the cursor whatever has focus, long traces stay cheap to
move through, and ``--diff OTHER`` opens at the first op that differs."""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.cli import _first_divergence
from pyfunc_debug.tui.replay import ReplayApp
from pyfunc_debug.tui.widgets.op_list import OpList


def _record(path, bump: float, runs: int = 3):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.numpy_function(lambda v: v * np.float32(2), [x], pfd.float32, name="double")
        b = pfd.numpy_function(lambda v: v + np.float32(bump), [a], pfd.float32, name="shift")
        c = pfd.numpy_function(lambda v: v * v, [b], pfd.float32, name="square")
    with pfd.trace(path), pfd.Session(graph=g) as sess:
        for i in range(runs):
            sess.run(c, {x: np.arange(4, dtype=np.float32) + i})
    return pfd.load_trace(path)


@pytest.mark.asyncio
async def test_arrows_home_and_end_move_the_cursor_while_the_op_list_has_focus(tmp_path):
    events = _record(tmp_path / "a.jsonl", 0.0)
    app = ReplayApp(str(tmp_path / "a.jsonl"), trace=events, show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.focused is app.query_one(OpList)
        end = len(app.events)
        assert app.position == end
        await pilot.press("left")
        await pilot.press("left")
        assert app.position == end - 2
        await pilot.press("home")
        assert app.position == 0
        await pilot.press("end")
        assert app.position == end
        await pilot.press("right")
        assert app.position == end


@pytest.mark.asyncio
async def test_view_diff_opens_at_the_first_op_that_differs(tmp_path):
    a = _record(tmp_path / "a.jsonl", 0.0)
    _record(tmp_path / "b.jsonl", 0.5)
    position, note = _first_divergence(str(tmp_path / "a.jsonl"), a, str(tmp_path / "b.jsonl"))
    here = a[position - 1]
    assert type(here) is ev.OpEnd and here.op == "shift"     # not double, not square
    assert "run 1, op 'shift'" in note
    app = ReplayApp(str(tmp_path / "a.jsonl"), trace=a, position=position, note=note,
                    show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.05)
        assert app.query_one(OpList).selected == "shift"
        assert "first difference" in str(app.query_one("#status").render())


def test_view_diff_of_identical_traces_says_so(tmp_path):
    a = _record(tmp_path / "a.jsonl", 0.0)
    _record(tmp_path / "same.jsonl", 0.0)
    position, note = _first_divergence("a.jsonl", a, str(tmp_path / "same.jsonl"))
    assert position is None and note.startswith("no difference")
