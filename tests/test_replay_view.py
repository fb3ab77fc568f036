"""``s`` and ``r`` in ``pyfunc-debug view`` (SPEC §11): the selected op's captured faulty
call under pdb in the real terminal, or re-run with the current source beside the recording."""
from __future__ import annotations

import os
import sys

import pytest

from pyfunc_debug.tui.commands import DebugCommands
from pyfunc_debug.tui.replay import ReplayApp
from pyfunc_debug.tui.widgets.op_list import OpList
from test_replay import recorded, _cli  # noqa: F401 - the recorded trace fixture
from test_replay import fixed_copy as _fixed_copy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


async def _wait_for(pilot, app, attr, seconds=120):
    for _ in range(int(seconds / 0.1)):
        await pilot.pause(0.1)
        if getattr(app, attr, None):
            return getattr(app, attr)
    raise AssertionError(f"no {attr} after {seconds}s")


@pytest.mark.asyncio
async def test_r_reruns_the_selected_ops_call_with_the_current_source(recorded, tmp_path,  # noqa: F811
                                                                      monkeypatch):
    fixed = _fixed_copy(recorded, tmp_path / "fixed")
    monkeypatch.chdir(fixed)
    monkeypatch.setenv("PYTHONPATH", ROOT)
    app = ReplayApp(str(fixed / "t.jsonl"), show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("home", "right", "right")     # run 1: shift ran (and made NaN)
        app.query_one(OpList).select("shift")
        await pilot.press("r")
        assert await _wait_for(pilot, app, "last_rerun") == "fixed: 0 NaN, was 8"
        log = "\n".join(str(line) for line in app.query_one("#log").lines)
        assert "re-run of op 'shift' (run 1) with the current source" in log
        assert "* nan     8" in log


@pytest.mark.asyncio
async def test_s_and_r_on_an_op_without_a_captured_call_say_why(tmp_path):
    import numpy as np
    import pyfunc_debug as pfd
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: v + 1, [x], pfd.float32, name="fine")
    with pfd.trace(tmp_path / "c.jsonl", capture="fault"), pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.ones(2, np.float32)})
    app = ReplayApp(str(tmp_path / "c.jsonl"), show_timings=False)
    async with app.run_test(size=(80, 24)) as pilot:
        app.query_one(OpList).select("fine")
        await pilot.press("r")
        await pilot.pause(0.1)
        texts = [n.message for n in app._notifications]
        assert any("no captured inputs: record with --capture fault" in t for t in texts)


def test_s_opens_the_replay_under_pdb_in_the_terminal_and_comes_back(recorded):  # noqa: F811
    pexpect = pytest.importorskip("pexpect")
    from test_tui_e2e import Screen
    env = dict(os.environ, HOME=str(recorded), TERM="xterm-256color", PDBPP_COLORS="0",
               PYTHONPATH=ROOT, PYTHONWARNINGS="ignore", COLUMNS="120", LINES="40")
    child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "view", "t.jsonl"], env=env,
                          cwd=str(recorded), dimensions=(40, 120), encoding="utf-8", timeout=60)
    screen = Screen(child)
    screen.wait_for(r"replay in pdb")                  # the view is drawn, its footer too
    screen.send("s")                                   # the failed run's op: lookup
    screen.wait_for(r"\((Pdb\+\+|Pdb)\)")
    screen.send("p x.tolist()\r")
    screen.wait_for(r"\[0\.0, 1\.0, 2\.0\]")
    screen.send("c\r")
    screen.wait_for(r"replay in pdb")                  # pdb ended: the view is back
    screen.send("q")
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.asyncio
async def test_x_in_view_exports_the_trace_for_perfetto(tmp_path, monkeypatch):
    """The docs say "press x" for a Chrome trace; in view it did nothing, and the palette
    had no export: a recorded .jsonl could not become a Perfetto file."""
    import json

    import numpy as np

    import pyfunc_debug as pfd
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32)
        y = pfd.numpy_function(lambda v: v * 2, [x], pfd.float32, name="double")
    with pfd.trace(tmp_path / "t.jsonl"), pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.float32(1)})
    monkeypatch.chdir(tmp_path)
    app = ReplayApp(str(tmp_path / "t.jsonl"), show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("x")
        await pilot.pause(0.1)
        await pilot.press("enter")   # the default name, trace.json
        await pilot.pause(0.2)
        titles = [title for title, _, _ in DebugCommands(app.screen)._ours()]
    doc = json.loads((tmp_path / "trace.json").read_text())
    assert [e["name"] for e in doc["traceEvents"] if e.get("cat") == "op"] == ["double"]
    assert "Export the trace (x)" in titles and not any("Break when" in t for t in titles)
    assert "Go to op double" in titles


@pytest.mark.asyncio
async def test_a_trace_that_ends_mid_run_shows_its_last_op_unfinished_not_running(tmp_path):
    """A program killed during an op leaves a trace without the op's end or the run's: at
    the trace's end the view said RUNNING and "no values yet: it is running", forever."""
    import numpy as np

    import pyfunc_debug as pfd
    from pyfunc_debug.tui.widgets.inspector import Inspector
    from pyfunc_debug.tui.widgets.status_bar import StatusBar
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32)
        y = pfd.numpy_function(lambda v: v * 2, [x], pfd.float32, name="double")
    path = tmp_path / "t.jsonl"
    with pfd.trace(path), pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.float32(1)})
    lines = path.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if line.startswith('["OpStart"')) + 1
    path.write_text("".join(lines[:cut]))
    app = ReplayApp(str(path), show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.1)
        assert app.model.rows["double"].status == "unfinished"
        assert "UNFINISHED" in str(app.query_one(StatusBar).render())
        assert "the trace ends while this call ran" in app.query_one(Inspector)._reason
        await pilot.press("left")   # one event back: the run had begun, the op not yet
        assert app.model.rows["double"].status == "pending"
        await pilot.press("right")
        assert app.model.rows["double"].status == "unfinished"
