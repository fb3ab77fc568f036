"""The UI is light on a running program (issue 24): the program's threads never wait for
the UI unless paused, the screen catches up with every event, and a tick draws only what
changed (the inspector follows a running op every few ticks, a pause or the run's end at
once)."""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.tui import app as app_module
from pyfunc_debug.tui.app import PfdApp
from pyfunc_debug.tui.widgets.event_log import EventLog
from pyfunc_debug.tui.widgets.inspector import Inspector
from pyfunc_debug.tui.widgets.status_bar import StatusBar
from programs import step_chain

pytest.importorskip("textual")
from textual.widgets import Static  # noqa: E402

SIZE = (120, 40)
CHAIN, RUNS = 8, 40
STALL = 60.0   # a worker that needs the stalled UI never finishes: this only ends the test


async def _until(pilot, cond, what: str, deadline: float = 30.0) -> None:
    end = time.monotonic() + deadline
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await pilot.pause(0.05)


@pytest.mark.asyncio
async def test_the_program_runs_on_while_the_ui_is_stalled_and_the_screen_catches_up():
    """The UI's event loop is blocked while the program runs all its ops (and prints): had
    any event, print or status gone through the UI thread, the program would wait for
    it and never finish. Then every event is on screen: counts, op list, log, status."""
    g, x, y = step_chain(CHAIN)
    finished = threading.Event()
    results = []

    def target():
        with pfd.Session(graph=g) as sess:
            for i in range(RUNS):
                results.append(float(sess.run(y, {x: np.float32(i)})))
                print(f"run {i} done")
        finished.set()
        return 0

    seen = []
    sub = ev.subscribe(seen.append)
    # the UI's defaults: a breakpoint on error (which never fires here)
    app = PfdApp(target, suspend=contextlib.nullcontext, show_timings=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            # the worker starts as the app mounts; from here the UI's loop is blocked
            ran_alone = finished.wait(STALL)
            assert ran_alone, "the program waited for the stalled UI"
            assert results == [float(i + CHAIN) for i in range(RUNS)]
            await _until(pilot, lambda: app.target_done and not app.bridge.events,
                         "the UI to catch up")
            await pilot.pause(0.1)
            n = RUNS * (2 + 2 * CHAIN)          # RunStart, RunEnd, each op's start and end
            assert len(app.bridge.recorded) == app.model.events == n
            assert sum(type(e) in (ev.RunStart, ev.OpStart, ev.OpEnd, ev.RunEnd)
                       for e in seen) == n
            status = str(app.query_one(StatusBar).render())
            # the status bar says the run's id, as the log does: the last of RUNS runs
            first = next(e.run_id for e in app.bridge.recorded if type(e) is ev.RunStart)
            assert app.model.run_id == first + RUNS - 1
            assert "FINISHED" in status and f"run {app.model.run_id} " in status
            assert f"ops {CHAIN}/{CHAIN}" in status and f"events {n:,}" in status
            lines = list(app.query_one(EventLog).lines)
            assert f"  [stdout] run {RUNS - 1} done" in lines
            assert [line for line in lines if "[stdout]" in line] == \
                [f"  [stdout] run {i} done" for i in range(RUNS)]
            assert all(app.model.rows[f"step{i}"].status == "done" for i in range(CHAIN))
            app.stop_ticking()
    finally:
        sub.close()
    await asyncio.to_thread(app.worker_thread.join, 10)


def _applied(app, events) -> None:
    """The app, its ticker paused, with ``events`` applied as one tick applies them."""
    app._ticker.pause()
    for e in events:
        app.bridge._on_event(e)
    app.tick()


def _recorded(runs: int, chain: int) -> list:
    g, x, y = step_chain(chain)
    with pfd.trace() as tr, pfd.Session(graph=g) as sess:
        for i in range(runs):
            sess.run(y, {x: np.float32(i)})
    return tr.events


@pytest.mark.asyncio
async def test_a_tick_draws_only_what_changed_and_the_inspector_follows_every_few_ticks(
        monkeypatch):
    """Events fed by hand, one op's call per tick: the op list, log and status follow each
    tick; the inspector shows the selected op every ``INSPECT_TICKS`` ticks and at the
    run's end; a tick with nothing new updates no widget."""
    events = _recorded(1, 12)
    start, ops, end = events[0], events[1:-1], events[-1]
    assert type(start) is ev.RunStart and type(end) is ev.RunEnd
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        app._ticker.pause()          # ticks by hand from here
        put = app.bridge._on_event
        put(start)
        put(ops[0])
        put(ops[1])
        app.tick()
        await pilot.pause()          # the op list's first row is selected and shown
        assert app.query_one("#ops").selected == "step0"

        shown = []
        real_show = Inspector.show
        monkeypatch.setattr(Inspector, "show",
                            lambda self, row, *a, **k: (shown.append(row and row.name),
                                                        real_show(self, row, *a, **k)))
        updates = []
        real_update = Static.update
        monkeypatch.setattr(Static, "update",
                            lambda self, *a, **k: (updates.append(self.id),
                                                   real_update(self, *a, **k)))
        per_tick = []
        for i in range(2, len(ops), 2):     # one op's start and end a tick
            put(ops[i])
            put(ops[i + 1])
            app.tick()
            per_tick.append(len(shown))
            assert app.model.ops_done == i // 2 + 1
            assert f"ops {i // 2 + 1}/" in str(app.query_one(StatusBar).render())
            assert app.query_one(EventLog).lines[-1] == app.model.line(ops[i + 1], False)
        every = app_module.INSPECT_TICKS
        assert per_tick == [(k + 1) // every for k in range(len(per_tick))]
        put(end)
        app.tick()                            # the run's end: shown at once
        assert len(shown) == per_tick[-1] + 1
        assert "FINISHED" in str(app.query_one(StatusBar).render())

        await pilot.pause()
        shown.clear()
        updates.clear()
        for _ in range(3):                    # nothing new: nothing drawn
            app.tick()
        assert shown == [] and updates == []
        app.stop_ticking()


@pytest.mark.asyncio
async def test_between_full_updates_the_inspector_header_never_contradicts_the_op_list():
    """The inspector's values follow once a second, but its header (status, duration)
    follows every tick: it never says DONE while the op list shows the op running."""
    events = _recorded(2, 4)
    second = next(i for i, e in enumerate(events) if type(e) is ev.RunStart and i > 0)
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        app._ticker.pause()
        put = app.bridge._on_event
        for e in events[:second]:
            put(e)
        app.tick()                           # run 1 ends: everything shown
        await pilot.pause()
        selected = app.query_one("#ops").selected
        assert "DONE" in str(app.query_one("#insp-header").render())
        starts = [e for e in events[second:] if type(e) is ev.OpStart and e.op == selected]
        put(events[second])                  # run 2 starts ...
        put(starts[0])                       # ... and the selected op is running
        app.tick()
        assert app.model.rows[selected].status == "running"
        assert app._ticks_since_shown < app_module.INSPECT_TICKS   # not a full update
        assert "RUNNING" in str(app.query_one("#insp-header").render())
        app.stop_ticking()


@pytest.mark.asyncio
async def test_a_running_ops_new_values_are_shown_without_laying_out_the_screen(monkeypatch):
    """Once a second the inspector shows the running op's latest values. When they take
    the room the old ones took (same shape, cells no wider), the parts and the value grid
    are updated in place: a layout of the screen redraws every pane and, on a program
    bound by the interpreter lock, costs it 30-60 ms each time. The grid still shows
    every new value in full; a wider one rebuilds it, wide enough."""
    from pyfunc_debug.tui.widgets.inspector import Values

    events = _recorded(1, 2)
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    rng = np.random.default_rng(0)
    async with app.run_test(size=SIZE) as pilot:
        _applied(app, events)
        await pilot.pause()
        inspector, row = app.query_one(Inspector), app.model.rows["step0"]
        grid = app.query_one("#insp-grid")
        first = rng.random((8, 8), dtype=np.float32)
        first[0] = -0.00123456          # each column's widest cell (11 characters)
        inspector.show(row, Values([first + 1], [first]))   # the output is shown first
        await pilot.pause()

        layouts = []
        real = app.screen._refresh_layout
        monkeypatch.setattr(app.screen, "_refresh_layout",
                            lambda *a, **k: (layouts.append(1), real(*a, **k))[1])
        for _ in range(40):   # the first values' layouts (some come when the app is idle)
            layouts.clear()
            await pilot.pause(0.05)
            await pilot.pause(0.05)
            if not layouts:
                break
        assert not layouts, "the screen never settled after the first values"
        shown = len(grid.labels) - 1   # the columns that fit whole (row labels first)
        assert 2 <= shown <= 8
        for _ in range(3):
            new = rng.random((8, 8), dtype=np.float32)
            inspector.show(row, Values([new], [new + 1]))
            await pilot.pause()
            want = [[f"{v:.6g}" for v in r[:shown]] for r in new + 1]
            assert [row[1:shown + 1] for row in grid.rows] == want
            # and on screen: each row's line, below the header, as drawn now
            assert [grid.render_line(r + 1).text.split()[1:shown + 1]
                    for r in range(8)] == want
        await pilot.pause(0.1)   # what the updates left for the idle app, too
        assert layouts == []

        wide = rng.random((8, 8), dtype=np.float32)
        wide[3, 1] = -1.2345678e-05     # wider than any cell so far: the grid is rebuilt
        inspector.show(row, Values([wide + 1], [wide]))
        await pilot.pause()
        assert grid.rows[3][2] == "-1.23457e-05"
        assert grid.widths[2] >= len("-1.23457e-05")
        await pilot.pause(0.1)
        assert layouts == [], "wider columns, as many rows: the screen was laid out again"
        app.stop_ticking()


@pytest.mark.asyncio
async def test_the_value_grid_holds_only_whole_columns_and_says_which():
    """A number cut at the inspector's edge reads as another number (``-0.686298`` as
    ``-0``): the grid holds the columns that fit whole, its caption names them, and a
    wider terminal shows more."""
    from pyfunc_debug.tui.widgets.inspector import Values
    from pyfunc_debug.tui.widgets.value_grid import ValueGrid

    events = _recorded(1, 2)
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    value = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)
    async with app.run_test(size=SIZE) as pilot:
        _applied(app, events)
        await pilot.pause()
        inspector = app.query_one(Inspector)
        inspector.show(app.model.rows["step0"], Values([value], [value]))
        await pilot.pause()
        grid = app.query_one("#insp-grid", ValueGrid)

        def shown() -> int:
            used = sum(map(grid.render_width, range(len(grid.labels))))
            assert used <= inspector.scrollable_content_region.width   # no cell cut
            assert used <= inspector.content_region.width - 2   # nor when it scrolls
            return len(grid.labels) - 1

        def caption() -> str:
            return str(app.query_one("#insp-caption", Static).render())

        narrow = shown()
        assert 1 <= narrow < 8
        assert f"columns 0–{narrow - 1} fit here" in caption()
        assert grid.rows[0][1:narrow + 1] == \
            [f"{v:.6g}" for v in value[0, :narrow]]
        await pilot.resize_terminal(220, 40)
        await pilot.pause()
        assert shown() == 8 and "fit here" not in caption()
        app.stop_ticking()


def test_an_op_rows_detail_is_cut_between_words_and_marked():
    """The op list's detail (the output's summary) cut at the pane's edge: never inside a
    number, which would read as another one; marked with "…", or the dtype alone."""
    from pyfunc_debug.tui.widgets.op_list import clip

    detail = "float32[8,8] min=-1.601 max=1.625 mean=2.387e-08"
    pieces = ["float32", "[8,8]", " min=-1.601", " max=1.625", " mean=2.387e-08"]
    wholes = ["".join(pieces[:k]) for k in range(1, len(pieces) + 1)]
    for width in range(0, len(detail) + 3):
        got = clip(detail, width)
        assert len(got) <= width
        if width >= len(detail):
            assert got == detail
        elif got == "float32":   # only the dtype fits
            assert width < len("float32…")
        elif width >= len("float32…"):
            assert got.endswith("…") and got[:-1] in wholes, (width, got)
    assert clip(detail, 20) == "float32[8,8]…" and clip(detail, 7) == "float32"
    assert clip(detail, -3) == clip(detail, 0) == ""   # no room left by the name columns


@pytest.mark.asyncio
@pytest.mark.parametrize("remote_status", [None, 1])
async def test_a_program_that_ends_while_paused_is_not_shown_paused(remote_status):
    """A parallel framework call pauses at its error while another thread's failure ends
    the program (or, attached, the target's process): nothing is left to continue, so the
    status says how it ended, not PAUSED; attached, with the target's exit status."""
    import types

    events = _recorded(1, 2)
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        _applied(app, events)
        app.bridge.link.target_status = remote_status
        app.model.mark_paused("step0")
        app.pause = types.SimpleNamespace(op_name="step0")
        app._target_done(0)
        await pilot.pause()
        status = str(app.query_one(StatusBar).render())
        assert app.pause is None and "PAUSED" not in status
        if remote_status:
            assert "FAILED" in status
            assert "the target ended with exit status 1 while step0 was paused" in status
        else:
            assert "FINISHED" in status and "done while step0 was paused" in status
        app.stop_ticking()


@pytest.mark.asyncio
async def test_continue_after_the_program_ended_says_so(monkeypatch):
    """c once the program has ended: not "space pauses at the next op" (there is none)."""
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    said = []
    async with app.run_test(size=SIZE) as pilot:
        monkeypatch.setattr(app, "notify", lambda text, **kw: said.append(text))
        app.action_resume("continue")
        app._target_done(0)
        await pilot.pause()
        app.action_resume("continue")
        app.action_interrupt()   # space: no op is left to pause at either
        app.stop_ticking()
    assert said[0].startswith("Not paused. (space pauses")
    assert said[1] == "The program has ended: nothing to continue (q quits, x exports the trace)."
    assert said[2] == "The program has ended: no op is left to pause at (q quits)."
    assert app.message != "pausing at the next op…"
