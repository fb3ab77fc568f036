"""The UI tells the truth and fits any terminal (SPEC §5a), driven with Pilot.

Values belong to the current run or say which run they are from; an op that
wrote into its input shows the input as given and as left; a dtype error shows
what the function returned; ``v`` works whatever has focus; what the script
prints sits in the log in order with the events; at 80x24 every footer key
shows and op names stay apart; Ctrl+C pauses, then quits; the palette lists
our commands first.
"""
from __future__ import annotations

import io

import numpy as np
import pytest
from textual.command import DiscoveryHit
from textual.widgets._footer import FooterKey

import pyfunc_debug as pfd
from pyfunc_debug.errors import OpError
from pyfunc_debug.tui.commands import DebugCommands
from pyfunc_debug.tui.widgets.event_log import EventLog
from pyfunc_debug.tui.widgets.inspector import Inspector
from pyfunc_debug.tui.widgets.op_list import OpList, fit
from pyfunc_debug.tui.widgets.value_grid import ValueGrid

from test_tui_pilot import _app, _finished, _paused_at, _running, _text, _until


def _caption(app) -> str:
    return _text(app, "#insp-caption")


def _header(app) -> str:
    return _text(app, "#insp-header")


def _summaries(app, name: str) -> str:
    from rich.console import Console
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(app.query_one(Inspector)._summaries(app.model.rows[name], None))
    return console.export_text()


def _value_labels(app) -> list[str]:
    return [label for label, _ in app.query_one(Inspector)._values]


def _select(app, name: str) -> None:
    app.query_one(OpList).select(name)
    app._show_selected(name)


# -- targets ---------------------------------------------------------------------------------

def scale_then_fail_on_second_run():
    """Run 1: scale and check pass. Run 2: check raises (KeyError), so scale's outputs of
    run 2 exist but check's never do."""
    def scale(x):
        return (x * 2).astype(np.float32)

    def check(x):
        if x[0] > 10:
            raise KeyError(2)
        return x
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(scale, [x], pfd.float32, name="scale")
        z = pfd.numpy_function(check, [y], pfd.float32, name="check")
    with pfd.Session(graph=g) as sess:
        for feed in ([1.0, 2.0], [50.0, 60.0]):
            try:
                sess.run(z, {x: np.array(feed, np.float32)})
            except OpError:
                pass
    return 0


def writes_into_its_input():
    def clip_in_place(x):
        x[x > 1] = 1          # the bug: the caller's array changes
        return x * 10
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(clip_in_place, [x], pfd.float32, name="clip")
    with pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.array([0.5, 3.0, 7.0], np.float32)})
    return 0


def returns_the_wrong_dtype():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: v.astype(np.float64) + 0.5, [x], pfd.float32,
                               name="widen")
    with pfd.Session(graph=g) as sess:
        try:
            sess.run(y, {x: np.array([1.0, 2.0], np.float32)})
        except OpError:
            pass
    return 0


def prints_around_a_run():
    print("before the run")
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: v + 1, [x], pfd.float32, name="inc")
    with pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.float32(1)})
    print("after the run")
    return 0


def starts_a_process_pool():
    import concurrent.futures
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")  # as Dask's LocalCluster: a resource tracker too
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        print("child says", pool.submit(abs, -7).result())
    return 0


def names_alike():
    g = pfd.Graph()
    with g.as_default(), pfd.name_scope("combine"):
        x = pfd.constant(np.float32(1), name="x")
        a = pfd.add(x, x)
        b = pfd.add(a, x)
    with pfd.Session(graph=g) as sess:
        sess.run(b)
    return 0


# -- values belong to their run ---------------------------------------------------------------

@pytest.mark.asyncio
async def test_values_of_an_earlier_run_are_labelled_with_their_run():
    app, _ = _app(scale_then_fail_on_second_run)
    async with _running(app) as pilot:
        await _finished(pilot)
        assert app.model.runs == 2
        _select(app, "scale")                    # ran in run 2: its own values, no label
        await pilot.pause(0.1)
        assert "from run" not in _caption(app)
        assert "100" in app.query_one("#insp-grid", ValueGrid).rows[0]
        _select(app, "check")                    # failed in run 2: only run 1's values exist
        assert app.model.rows["check"].status == "error"
        await _until(pilot, lambda: "from run" in _caption(app),
                     lambda: f"a 'from run' label (caption: {_caption(app)!r})")
        # run ids are process-wide: the earlier run is the one before this run
        assert f"from run {app.model.run_id - 1}, not this run" in _caption(app)


@pytest.mark.asyncio
async def test_an_op_that_wrote_into_its_input_shows_it_as_given_and_as_left():
    app, _ = _app(writes_into_its_input)
    async with _running(app) as pilot:
        await _finished(pilot)
        _select(app, "clip")
        await pilot.pause(0.1)
        row = app.model.rows["clip"]
        assert row.inputs[0].max == 7.0              # as given
        assert row.inputs_after[0].max == 1.0        # as left
        assert "modified by this op" in _header(app)
        table = _summaries(app, "clip")
        assert "in 0 after" in table
        labels = _value_labels(app)
        assert "input 0 as given (modified by this op)" in labels
        assert "input 0 as the op left it" in labels
        given = dict(app.query_one(Inspector)._values)["input 0 as given (modified by this op)"]
        np.testing.assert_array_equal(given, [0.5, 3.0, 7.0])
        assert app.model.warnings and app.model.warnings[0].category == "input_modified"
        assert app.query_one(OpList).render_line(0).text[0] == "⚠"   # marked in the list


@pytest.mark.asyncio
async def test_a_dtype_error_shows_what_the_function_returned():
    app, _ = _app(returns_the_wrong_dtype, break_on=("error",))
    async with _running(app) as pilot:
        pause = await _paused_at(pilot, "widen", "error")
        assert "float64" in str(pause.error)
        labels = _value_labels(app)
        assert "returned 0 (rejected by the op)" in labels
        returned = dict(app.query_one(Inspector)._values)["returned 0 (rejected by the op)"]
        assert returned.dtype == np.float64
        np.testing.assert_array_equal(returned, [1.5, 2.5])


@pytest.mark.asyncio
async def test_v_cycles_values_while_the_op_list_has_focus():
    app, _ = _app(writes_into_its_input)
    async with _running(app) as pilot:
        await _finished(pilot)
        _select(app, "clip")
        await pilot.pause(0.1)
        assert app.focused is app.query_one(OpList)
        first = _caption(app)
        await pilot.press("v")
        await pilot.pause(0.05)
        assert _caption(app) != first


@pytest.mark.asyncio
async def test_printed_output_sits_in_the_log_in_order_with_the_events():
    app, _ = _app(prints_around_a_run)
    async with _running(app) as pilot:
        await _finished(pilot)
        lines = [str(line) for line in app.query_one(EventLog).lines]
        before = next(i for i, l in enumerate(lines) if "before the run" in l)
        start = next(i for i, l in enumerate(lines) if "start session" in l)
        done = next(i for i, l in enumerate(lines) if "done  inc" in l)
        after = next(i for i, l in enumerate(lines) if "after the run" in l)
        assert before < start < done < after


@pytest.mark.asyncio
async def test_a_script_can_start_worker_processes_under_the_ui():
    app, _ = _app(starts_a_process_pool)
    async with _running(app) as pilot:
        await _finished(pilot)
        assert app.target_status == 0, app.target_status
        assert any("child says 7" in str(line) for line in app.query_one(EventLog).lines)


@pytest.mark.asyncio
async def test_pdb_quit_aborts_and_leaves_no_op_running():
    app, _ = _app(writes_into_its_input, pdb_input="q\n", breaks=("clip",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "clip")
        await pilot.press("s")
        await _until(pilot, lambda: not app.is_running, "the app to leave (one q quits)")
    assert app.target_done and app.bridge.link.quit_in_pdb == "clip"
    assert app.model.rows["clip"].status == "aborted"       # what the exit summary reads
    assert all(r.status != "running" for r in app.model.rows.values())


# -- any terminal --------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_every_footer_key_shows_at_80x24_and_names_stay_apart():
    app, _ = _app(names_alike)
    async with app.run_test(size=(80, 24)) as pilot:
        try:
            await _finished(pilot)
            await pilot.pause(0.2)
            keys = {k.key: k for k in app.query(FooterKey)}
            assert set("cnspbeNxq") <= set(keys)
            for key in "cnspbeNxq":
                region = keys[key].region
                assert region.width > 0 and region.right <= 80, (key, region)
            ops = app.query_one(OpList)
            shown = [ops.render_line(i).text for i in range(len(app.model.order))]
            names = [line[3:3 + 18].strip() for line in shown]
            assert len(set(names)) == len(names), names
            assert any(n.endswith("AddV2_1") for n in names), names
        finally:
            app.stop_ticking()


def test_long_names_are_cut_in_the_middle_so_their_ends_differ():
    assert fit("combine/AddV2", 12) != fit("combine/AddV2_1", 12)
    assert fit("combine/AddV2_1", 12).endswith("AddV2_1") and len(fit("combine/AddV2_1", 12)) == 12
    assert fit("short", 12) == "short"


# -- Ctrl+C, the palette ---------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_ctrl_c_pauses_at_the_next_op_then_quits_with_130():
    from test_tui_pilot import Target
    import threading
    stop = threading.Event()
    app, _ = _app(Target(loop_until=stop))
    try:
        async with _running(app) as pilot:
            await _until(pilot, lambda: app.model.runs >= 2, "a few runs")
            await pilot.press("ctrl+c")
            await _until(pilot, lambda: app.pause is not None, "the pause Ctrl+C asked for")
            assert app.pause.breakpoint is None        # an interrupt, not a breakpoint
            await pilot.press("ctrl+c")
            await pilot.pause(0.1)
            assert app.return_code == 130 and app.bridge.interrupted
    finally:
        stop.set()


@pytest.mark.asyncio
async def test_the_palette_lists_our_commands_before_textuals():
    app, _ = _app(names_alike)
    async with _running(app) as pilot:
        await _finished(pilot)
        provider = DebugCommands(app.screen)
        titles = [hit.text async for hit in provider.discover()
                  if isinstance(hit, DiscoveryHit)]
        assert titles[0].startswith("Break when")
        ours_end = max(i for i, t in enumerate(titles) if t.startswith(("Go to op", "Export")))
        textuals = [i for i, t in enumerate(titles) if t in ("Quit", "Keys", "Theme")]
        assert textuals and min(textuals) > ours_end
