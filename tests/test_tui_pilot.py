"""Pilot tests of the TUI (SPEC §5): every key, the command palette, errors, 100k events.

Each test runs a ``PfdApp`` headless (``App.run_test``) on a small target that
builds a graph and runs a Session on the app's worker thread. Suspension is a
null context and pdb reads a scripted stdin, so ``s`` and ``p`` run pdb for
real without a terminal. The worker posts pauses through ``call_from_thread``
and a 50 ms timer drains events, so every wait is a ``pilot.pause`` loop with
a deadline (``_until``).
"""
from __future__ import annotations

import asyncio
import contextlib
import io
import json
import threading
import time

import numpy as np
import pytest
from textual.command import CommandPalette
from textual.widgets import Input, Label, OptionList, Static

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.errors import CancelledError, OpError
from pyfunc_debug.tui.app import PfdApp
from pyfunc_debug.tui.commands import DebugCommands
from pyfunc_debug.tui.screens.export import ExportScreen
from pyfunc_debug.tui.widgets.event_log import EventLog
from pyfunc_debug.tui.widgets.op_list import OpList
from pyfunc_debug.tui.widgets.status_bar import StatusBar

SIZE = (120, 40)
DEADLINE = 10.0


@pytest.fixture(autouse=True)
def no_user_pdbrc(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))


# -- targets --------------------------------------------------------------------------------

def double(x):
    twice = x * 2
    return twice


def add_one(x):
    return x + 1


def fails(x):
    bad_index = 10
    return x[bad_index]


def make_nan(x):
    with np.errstate(invalid="ignore"):
        return np.log(x - 100).astype(np.float32)


def nap(x):
    time.sleep(0.002)
    return x


class Target:
    """``target()`` builds x → double → add_one → out and runs it ``runs`` times.

    ``failing=True`` also fetches ``fails`` (an IndexError inside the wrapped
    function); ``nan=True`` fetches ``make_nan`` (all NaN). ``gate`` (an Event)
    holds the target back until the test sets it; ``loop_until`` (an Event)
    makes it run again and again (with a 2 ms ``nap`` op) until it is set.
    """

    def __init__(self, runs=1, failing=False, nan=False, gate=None, loop_until=None,
                 feed=(1.0, 2.0)):
        self.runs, self.failing, self.nan = runs, failing, nan
        self.gate, self.loop_until, self.feed = gate, loop_until, feed
        self.results: list = []
        self.errors: list = []

    def __call__(self):
        if self.gate is not None and not self.gate.wait(60):
            raise RuntimeError("the test never opened the gate")
        g = pfd.Graph()
        with g.as_default():
            x = pfd.compat.v1.placeholder(pfd.float32, name="x")
            a = pfd.numpy_function(double, [x], pfd.float32, name="double")
            b = pfd.numpy_function(add_one, [a], pfd.float32, name="add_one")
            fetches = [pfd.identity(b, name="out")]
            if self.nan:
                fetches.append(pfd.numpy_function(make_nan, [b], pfd.float32, name="make_nan"))
            if self.failing:
                fetches.append(pfd.numpy_function(fails, [b], pfd.float32, name="fails"))
            if self.loop_until is not None:
                fetches.append(pfd.numpy_function(nap, [b], pfd.float32, name="nap"))
        feed = np.array(self.feed, np.float32)
        with pfd.Session(graph=g) as sess:
            i = 0
            while i < self.runs or (self.loop_until is not None and not self.loop_until.is_set()
                                    and i < 20_000):
                try:
                    self.results.append(sess.run(fetches, {x: feed}))
                except OpError as e:          # CancelledError included (q aborts)
                    self.errors.append(e)
                    if isinstance(e, CancelledError):
                        return 1
                i += 1
        return 0


# -- helpers -------------------------------------------------------------------------------

def _app(target, pdb_input: str = "c\n", **kw) -> tuple[PfdApp, io.StringIO]:
    """A PfdApp with null suspension, pdb reading ``pdb_input``; no breakpoints by default."""
    pdb_out = io.StringIO()
    kw.setdefault("break_on", ())
    app = PfdApp(target, suspend=contextlib.nullcontext, pdb_io=(io.StringIO(pdb_input), pdb_out),
                 show_timings=False, **kw)
    return app, pdb_out


async def _stop(app) -> None:
    """Abort a run still paused or running, so no debugger stays attached after the test.

    Joined off the event loop: the worker's last ``call_from_thread`` needs the loop.
    """
    worker = app.worker_thread
    if worker is not None and worker.is_alive():
        app.bridge.quit()
        await asyncio.to_thread(worker.join, 5)
    assert worker is None or not worker.is_alive(), "the worker thread did not end"


def _stop_ticking(app) -> None:
    """Stop the app's 50 ms ``tick`` before ``run_test`` tears the app down."""
    app.stop_ticking()


@contextlib.asynccontextmanager
async def _running(app):
    """``app.run_test`` at 120x40; on the way out the run is aborted and the worker joined."""
    try:
        async with app.run_test(size=SIZE) as pilot:
            try:
                yield pilot
            finally:
                _stop_ticking(app)
    finally:
        await _stop(app)


async def _until(pilot, cond, what, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")
        await pilot.pause(0.05)


async def _paused_at(pilot, op: str, when: str = "before"):
    app = pilot.app
    await _until(pilot, lambda: app.pause is not None and app.pause.op_name == op
                 and app.pause.when == when,
                 lambda: f"a pause {when} {op!r} (now: "
                         f"{app.pause and (app.pause.op_name, app.pause.when)})")
    return app.pause


async def _finished(pilot) -> None:
    """The target returned and every event it emitted is applied."""
    app = pilot.app
    await _until(pilot, lambda: app.target_done and not app.bridge.events,
                 lambda: f"the target to finish (state {app.model.state}, pause {app.pause})")
    await pilot.pause(0.1)


def _status(app) -> str:
    return str(app.query_one(StatusBar).render())


def _text(app, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


# -- keys --------------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_c_continues_and_the_run_finishes():
    target = Target()
    app, _ = _app(target, breaks=("double",))
    async with _running(app) as pilot:
        pause = await _paused_at(pilot, "double")
        assert pause.breakpoint is not None and pause.breakpoint.op == "double"
        assert "PAUSED" in _status(app) and "before double" in _status(app)
        assert app.model.rows["double"].status == "paused"
        assert app.query_one(OpList).selected == "double"
        await pilot.press("c")
        await _finished(pilot)
        assert app.pause is None
        assert app.target_status == 0
        assert app.model.state == "finished"
        assert "FINISHED" in _status(app)
        assert {n: r.status for n, r in app.model.rows.items()} == \
            {"double": "done", "add_one": "done", "out": "done"}
    np.testing.assert_allclose(target.results[0][0], [3.0, 5.0])


@pytest.mark.asyncio
async def test_c_when_not_paused_only_warns():
    target = Target()
    app, _ = _app(target)
    async with _running(app) as pilot:
        await _finished(pilot)
        await pilot.press("c", "n")
        assert app.is_running and "FINISHED" in _status(app)


@pytest.mark.asyncio
async def test_n_pauses_at_the_following_op():
    target = Target()
    app, _ = _app(target, breaks=("double",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "double")
        await pilot.press("n")
        pause = await _paused_at(pilot, "add_one")
        assert pause.breakpoint is None                   # a step, not a breakpoint
        assert app.query_one(OpList).selected == "add_one"
        assert app.model.rows["double"].status == "done"
        np.testing.assert_allclose(pause.inputs[0], [2.0, 4.0])
        await pilot.press("n")
        await _paused_at(pilot, "out")
        await pilot.press("c")
        await _finished(pilot)
        assert "FINISHED" in _status(app)
    np.testing.assert_allclose(target.results[0][0], [3.0, 5.0])


@pytest.mark.asyncio
async def test_s_steps_into_the_wrapped_function_under_pdb():
    target = Target(feed=(3.0, 4.0))
    app, pdb_out = _app(target, breaks=("double",), pdb_input="p x\nn\np twice\nc\n")
    async with _running(app) as pilot:
        await _paused_at(pilot, "double")
        await pilot.press("s")
        await _finished(pilot)
        assert "FINISHED" in _status(app)
    text = pdb_out.getvalue()
    assert "double()" in text and "-> twice = x * 2" in text
    assert "array([3., 4.], dtype=float32)" in text        # p x: the real argument
    assert "array([6., 8.], dtype=float32)" in text        # p twice, after n
    np.testing.assert_allclose(target.results[0][0], [7.0, 9.0])


@pytest.mark.asyncio
async def test_s_is_refused_on_an_op_without_a_wrapped_function():
    target = Target()
    app, pdb_out = _app(target, breaks=("out",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "out")
        await pilot.press("s")
        await pilot.pause(0.2)
        assert app.pause is not None and app.pause.op_name == "out"   # still paused
        assert pdb_out.getvalue() == ""
        await pilot.press("c")
        await _finished(pilot)


@pytest.mark.asyncio
async def test_p_opens_post_mortem_at_an_error_pause():
    target = Target(failing=True)
    app, pdb_out = _app(target, break_on=("error",), pdb_input="p bad_index\np x\nc\n")
    async with _running(app) as pilot:
        pause = await _paused_at(pilot, "fails", when="error")
        assert "post_mortem" in pause.actions
        await pilot.press("p")
        await _finished(pilot)
        assert app.is_running
        assert app.model.rows["fails"].status == "error"
    text = pdb_out.getvalue()
    assert "fails()" in text and "-> return x[bad_index]" in text
    assert "++) 10\n" in text or "(Pdb) 10\n" in text        # p bad_index: a local
    assert "array([3., 5.], dtype=float32)" in text            # p x
    assert len(target.errors) == 1 and "IndexError" in target.errors[0].message


@pytest.mark.asyncio
async def test_p_is_refused_when_not_at_an_error():
    target = Target()
    app, pdb_out = _app(target, breaks=("double",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "double")
        await pilot.press("p")
        await pilot.pause(0.2)
        assert app.pause is not None and app.pause.op_name == "double"
        assert pdb_out.getvalue() == ""
        await pilot.press("c")
        await _finished(pilot)


@pytest.mark.asyncio
async def test_b_toggles_a_breakpoint_on_the_selected_op():
    target = Target(runs=2)
    app, _ = _app(target, breaks=("double",))
    dbg = app.bridge.debugger
    async with _running(app) as pilot:
        await _paused_at(pilot, "double")
        assert app.query_one(OpList).selected == "double"
        await pilot.press("down")
        assert app.query_one(OpList).selected == "add_one"
        await pilot.press("b")
        assert [bp.op for bp in dbg.breakpoints] == ["double", "add_one"]
        assert "op=add_one" in _text(app, "#breakpoints")
        await pilot.press("c")
        pause = await _paused_at(pilot, "add_one")          # the new breakpoint holds
        assert pause.breakpoint is not None and pause.breakpoint.op == "add_one"
        first_run = pause.run_id
        await pilot.press("b")                               # the same key removes it
        assert [bp.op for bp in dbg.breakpoints] == ["double"]
        assert "op=add_one" not in _text(app, "#breakpoints")
        await pilot.press("c")
        pause = await _paused_at(pilot, "double")            # run 2: only double is left
        assert pause.run_id != first_run
        await pilot.press("c")
        await _finished(pilot)
        assert "FINISHED" in _status(app) and app.model.runs == 2
    assert len(target.results) == 2


@pytest.mark.asyncio
async def test_b_on_an_op_then_the_next_run_pauses_there():
    target = Target(runs=2, feed=(1.0,))
    app, _ = _app(target, breaks=("out",))
    async with _running(app) as pilot:
        first = await _paused_at(pilot, "out")              # run 1: add_one has run already
        await pilot.press("up")
        assert app.query_one(OpList).selected == "add_one"
        await pilot.press("b")
        assert [bp.op for bp in app.bridge.debugger.breakpoints] == ["out", "add_one"]
        await pilot.press("c")
        pause = await _paused_at(pilot, "add_one")           # in the next run
        assert pause.run_id != first.run_id and app.model.runs == 2
        await pilot.press("c")
        await _paused_at(pilot, "out")
        await pilot.press("c")
        await _finished(pilot)


@pytest.mark.asyncio
async def test_e_and_N_toggle_the_error_and_nan_breakpoints():
    gate = threading.Event()
    target = Target(failing=True, nan=True, gate=gate)
    app, _ = _app(target, break_on=("error",))
    dbg = app.bridge.debugger

    def kinds():
        return sorted("error" if bp.on_error else bp.condition.label for bp in dbg.breakpoints)

    async with _running(app) as pilot:
        assert kinds() == ["error"]
        await pilot.press("e")
        assert kinds() == []
        await pilot.press("N")
        assert kinds() == ["nan_producer"]
        await pilot.press("N")
        assert kinds() == []
        await pilot.press("e", "N")
        assert kinds() == ["error", "nan_producer"]
        text = _text(app, "#breakpoints")
        assert "on_error" in text and "nan_producer" in text
        gate.set()
        pause = await _paused_at(pilot, "make_nan", when="after")
        assert np.isnan(pause.outputs[0]).all()
        await pilot.press("c")
        await _paused_at(pilot, "fails", when="error")
        await pilot.press("e")                               # off while paused at the error
        assert kinds() == ["nan_producer"]
        await pilot.press("c")
        await _finished(pilot)


@pytest.mark.asyncio
async def test_errors_do_not_pause_after_e_turns_them_off():
    gate = threading.Event()
    target = Target(failing=True, gate=gate)
    app, _ = _app(target, break_on=("error",))
    async with _running(app) as pilot:
        await pilot.press("e")
        gate.set()
        await _finished(pilot)
        assert app.bridge.debugger.hits == []
        assert app.model.rows["fails"].status == "error"


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["t.json", "t.jsonl"])
async def test_x_exports_the_trace(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)                              # a short path to type
    target = Target(runs=2)
    app, _ = _app(target)
    async with _running(app) as pilot:
        await _finished(pilot)
        await pilot.press("x")
        await _until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
        field = app.screen.query_one("#export-path", Input)
        assert field.value == "trace.json"
        field.value = ""
        await pilot.press(*name)
        assert field.value == name
        await pilot.press("enter")
        await _until(pilot, lambda: not isinstance(app.screen, ExportScreen), "the screen to close")
        recorded = len(app.bridge.recorded)
        assert f"wrote {recorded:,} events to {name}" in _status(app)
    path = tmp_path / name
    if name.endswith(".json"):
        data = json.loads(path.read_text())
        names = [e.get("name") for e in data["traceEvents"]]
        assert names.count("double") == 2 and names.count("add_one") == 2
    else:
        events = pfd.load_trace(path)
        assert len(events) == recorded
        assert [e.op for e in events if type(e) is ev.OpEnd].count("double") == 2
        assert sum(type(e) is ev.RunEnd and e.ok for e in events) == 2


@pytest.mark.asyncio
async def test_a_failed_export_says_why_in_full(tmp_path, monkeypatch):
    """The status line cuts a long message at the terminal's edge, where an OSError puts
    the path: a notification holds the whole of it, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    app, _ = _app(Target())
    bad = str(tmp_path / "no-such-directory" / "deeper" / "t.jsonl")
    said = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: said.append(message))
    async with _running(app) as pilot:
        await _finished(pilot)
        await pilot.press("x")
        await _until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
        app.screen.query_one("#export-path", Input).value = bad
        await pilot.press("enter")
        await _until(pilot, lambda: "export failed" in _status(app), "the failure")
        assert any(bad in m and "No such file or directory" in m for m in said), said
    assert list(tmp_path.iterdir()) == []


@pytest.mark.asyncio
async def test_x_rejects_other_suffixes_and_escape_cancels(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = Target()
    app, _ = _app(target)
    async with _running(app) as pilot:
        await _finished(pilot)
        await pilot.press("x")
        await _until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
        app.screen.query_one("#export-path", Input).value = "trace.txt"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert isinstance(app.screen, ExportScreen)
        assert "must end in .json or .jsonl" in str(app.screen.query_one("#export-prompt", Label).render())
        await pilot.press("escape")
        await _until(pilot, lambda: not isinstance(app.screen, ExportScreen), "cancel")
        assert "wrote" not in _status(app)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.asyncio
async def test_q_quits_while_paused_and_aborts_the_run():
    target = Target(runs=3)
    app, _ = _app(target, breaks=("add_one",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "add_one")
        await pilot.press("q")
        await _until(pilot, lambda: not app.is_running, "the app to exit", 5)
        await asyncio.to_thread(app.worker_thread.join, 5)
        assert not app.worker_thread.is_alive()
    assert app.return_code == 0
    assert target.results == []
    assert len(target.errors) == 1 and isinstance(target.errors[0], CancelledError)
    assert "aborted from the debugger at op 'add_one'" in target.errors[0].message


@pytest.mark.asyncio
async def test_ctrl_q_quits_while_paused_and_aborts_the_run():
    target = Target()
    app, _ = _app(target, breaks=("add_one",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "add_one")
        await pilot.press("ctrl+q")
        await _until(pilot, lambda: not app.is_running, "the app to exit", 5)
        await asyncio.to_thread(app.worker_thread.join, 2)
        assert not app.worker_thread.is_alive()


@pytest.mark.asyncio
async def test_space_pauses_a_running_target():
    stop = threading.Event()
    target = Target(runs=0, loop_until=stop)
    app, _ = _app(target)
    try:
        async with _running(app) as pilot:
            await _until(pilot, lambda: app.model.runs >= 2, "the target to be running")
            assert app.pause is None and "RUNNING" in _status(app)
            await pilot.press("space")
            await _until(pilot, lambda: app.pause is not None, "the interrupt to pause")
            assert app.pause.breakpoint is None              # an interrupt, not a breakpoint
            assert "PAUSED" in _status(app)
            runs_at_pause = len(target.results)
            await pilot.pause(0.3)
            assert len(target.results) == runs_at_pause      # it really is stopped
            stop.set()
            await pilot.press("c")
            await _finished(pilot)
            assert "FINISHED" in _status(app)
            assert len(target.results) >= runs_at_pause
    finally:
        stop.set()


# -- command palette ---------------------------------------------------------------------------

async def _palette(pilot, text: str, type_it: bool = True) -> list[str]:
    """Open the palette and type ``text`` (or set it); the hits shown, first lines only.

    Typing types the first word only and sets the rest: every key runs the palette's
    fuzzy search, and 30-odd of them took up to 28 s on a loaded 2-core machine."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await _until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
    if type_it:
        first = text.split(" ", 1)[0]
        await pilot.press(*first)
        await _until(pilot, lambda: app.screen.query_one(Input).value == first, "typed keys")
    app.screen.query_one(Input).value = text
    results = app.screen.query_one(OptionList)

    def prompts():
        return [str(results.get_option_at_index(i).prompt).split("\n")[0]
                for i in range(results.option_count)]

    await _until(pilot, lambda: app.screen.query_one(Input).value == text and any(
        text[-4:] in p or p.startswith("✗") for p in prompts()),
        lambda: f"hits for {text!r} (now {prompts()})")
    await pilot.pause(0.1)
    return prompts()


@pytest.mark.asyncio
async def test_palette_adds_a_conditional_breakpoint_that_pauses():
    gate = threading.Event()
    target = Target(gate=gate)
    app, _ = _app(target)
    dbg = app.bridge.debugger
    async with _running(app) as pilot:
        prompts = await _palette(pilot, "break when outputs[0].max() > 1")
        assert prompts[0] == "add breakpoint: break when outputs[0].max() > 1"
        await pilot.press("enter")
        await _until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the palette")
        assert [bp.condition.label for bp in dbg.breakpoints] == ["outputs[0].max() > 1"]
        assert "when=outputs[0].max() > 1" in _text(app, "#breakpoints")
        gate.set()
        pause = await _paused_at(pilot, "double", when="after")     # [2, 4]
        np.testing.assert_allclose(pause.outputs[0], [2.0, 4.0])
        for op in ("add_one", "out"):
            await pilot.press("c")
            await _paused_at(pilot, op, when="after")
        await pilot.press("c")
        await _finished(pilot)
        assert dbg.breakpoints[0].hits == 3


@pytest.mark.asyncio
async def test_palette_shows_a_syntax_error_and_adds_nothing():
    gate = threading.Event()
    target = Target(gate=gate)
    app, _ = _app(target)
    async with _running(app) as pilot:
        prompts = await _palette(pilot, "break when outputs[", type_it=False)
        assert len(prompts) == 1 and prompts[0].startswith("✗ "), prompts
        await pilot.press("enter")
        await pilot.pause(0.2)
        if isinstance(app.screen, CommandPalette):
            await pilot.press("escape")
        assert app.bridge.debugger.breakpoints == []
        # Enter on it says so: it closed the palette and dropped the condition silently
        assert any("No breakpoint added:" in str(n.message) for n in app._notifications), \
            list(app._notifications)
        gate.set()
        await _finished(pilot)
        assert app.bridge.debugger.hits == []


@pytest.mark.asyncio
async def test_palette_goes_to_an_op_by_name():
    target = Target()
    app, _ = _app(target, breaks=("double",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "double")
        prompts = await _palette(pilot, "add_one")
        assert prompts[0] == "Go to op add_one"
        await pilot.press("enter")
        await _until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the palette")
        assert app.query_one(OpList).selected == "add_one"
        assert _text(app, "#insp-header").startswith("add_one  PyFunc  PENDING")
        await pilot.press("c")
        await _finished(pilot)


@pytest.mark.asyncio
async def test_palette_provider_search():
    """The provider on its own: condition hits, ✗ hits, op hits, and running a hit."""
    target = Target()
    app, _ = _app(target, breaks=("double",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "double")
        provider = DebugCommands(app.screen)

        async def hits(query):
            return [h async for h in provider.search(query)]

        ok = await hits("when inputs[0].min() < 0")
        assert [str(h.text) for h in ok] == ["add breakpoint: break when inputs[0].min() < 0"]
        assert str((await hits("break when outputs["))[0].text).startswith("✗ ")
        assert "Go to op out" in [str(h.text) for h in await hits("out")]
        ok[0].command()
        assert _breakpoint_texts(app)[-1].endswith("when=inputs[0].min() < 0")
        await pilot.press("c")
        await _finished(pilot)


def _breakpoint_texts(app) -> list[str]:
    return [bp.describe() for bp in app.bridge.debugger.breakpoints]


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_an_error_in_a_wrapped_function_is_shown_and_the_app_stays_alive():
    target = Target(failing=True)
    app, _ = _app(target)                                    # break_on=(): no pause
    async with _running(app) as pilot:
        await _finished(pilot)
        assert app.model.rows["fails"].status == "error"
        app.select_op("fails")
        await pilot.pause(0.1)
        assert _text(app, "#insp-header").startswith("fails  PyFunc  ERROR")
        error = _text(app, "#insp-error")
        assert "IndexError" in error and "index 10 is out of bounds" in error
        assert "Traceback" in error and "return x[bad_index]" in error
        assert "FAILED" in _status(app)
        assert any("ERROR fails (PyFunc)" in line for line in app.query_one(EventLog).lines)
        assert app.is_running
        await pilot.press("up")                              # still responsive
        assert app.query_one(OpList).selected != "fails"
    assert len(target.errors) == 1


# -- throughput ---------------------------------------------------------------------------------

def inc(x):
    return x + 1


@pytest.mark.asyncio
async def test_100k_events_end_with_the_right_counts_on_screen():
    chain, runs = 1000, 50
    results = []

    def target():
        g = pfd.Graph()
        with g.as_default():
            x = pfd.compat.v1.placeholder(pfd.float32, name="x")
            y = x
            for i in range(chain):
                y = pfd.numpy_function(inc, [y], pfd.float32, name=f"f{i}")
        with pfd.Session(graph=g) as sess:
            for _ in range(runs):
                results.append(sess.run(y, {x: np.zeros(4, np.float32)}))
        return 0

    seen = []
    sub = ev.subscribe(seen.append)
    app, _ = _app(target)
    try:
        async with _running(app) as pilot:
            await _until(pilot, lambda: app.target_status is not None, "100k events", 45)
            await _until(pilot, lambda: not app.bridge.events
                         and app.model.events == len(app.bridge.recorded), "the drain")
            await pilot.pause(0.1)
            n = len(app.bridge.recorded)
            status = _status(app)
            log = app.query_one(EventLog)
            assert app.model.events == n
            assert "FINISHED" in status and f"events {n:,}" in status
            first = next(e.run_id for e in app.bridge.recorded if type(e).__name__ == 'RunStart')
            assert app.model.run_id == first + runs - 1   # the last run
            assert f"run {app.model.run_id} " in status and f"ops {chain}/{chain}" in status
            assert log.line_count <= log.max_lines
            assert "end   ok" in log.lines[-1]
    finally:
        sub.close()
    assert n == len(seen) == runs * (2 * chain + 2)
    assert float(results[-1][0]) == chain
