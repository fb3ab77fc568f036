"""The light UI stays true (issue 24): the op list redraws only the rows whose line
changed, the log keeps the lines it drew (also as the oldest are dropped), every tick
with events updates the op list, log and status at least 4 times a second; and the
UI's import leaves the debugger core for when it is used (issue 28)."""
from __future__ import annotations

import contextlib
import gc
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev

pytest.importorskip("textual")
from pyfunc_debug.tui import app as app_module  # noqa: E402
from pyfunc_debug.tui.app import PfdApp  # noqa: E402
from pyfunc_debug.tui.widgets import event_log  # noqa: E402
from pyfunc_debug.tui.widgets.event_log import EventLog  # noqa: E402
from pyfunc_debug.tui.widgets.op_list import OpList  # noqa: E402
from pyfunc_debug.tui.widgets.status_bar import StatusBar  # noqa: E402
from programs import step_chain  # noqa: E402

SIZE = (120, 40)


def _recorded(runs: int, chain: int) -> list:
    g, x, y = step_chain(chain)
    with pfd.trace() as tr, pfd.Session(graph=g) as sess:
        for i in range(runs):
            sess.run(y, {x: np.float32(i)})
    return tr.events


def _screen_lines(widget) -> list[str]:
    """The text of each line the widget shows now (as the compositor takes it)."""
    return ["".join(seg.text for seg in widget.render_line(y))
            for y in range(widget.size.height)]


def _fresh_lines(ops: OpList) -> list[str]:
    """What a full redraw of the op list would show."""
    ops._drawn.clear()
    return _screen_lines(ops)


def test_ticks_come_at_least_4_times_a_second():
    assert app_module.TICK <= 0.25


@pytest.mark.asyncio
async def test_every_tick_updates_op_list_log_and_status_and_rows_drawn_stay_true():
    """Events fed by hand, one op's call a tick: each tick changes the op list's rows for
    that op only, and what the list shows equals a full redraw; the log's last line and
    the status follow the same tick."""
    events = _recorded(1, 10)
    start, ops_events, end = events[0], events[1:-1], events[-1]
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        app._ticker.pause()
        put = app.bridge._on_event
        put(start)
        app.tick()
        await pilot.pause()
        ops = app.query_one(OpList)
        refreshed = []
        real = OpList.refresh_line
        ops.refresh_line = lambda y: (refreshed.append(y), real(ops, y))
        for i in range(0, len(ops_events), 2):
            refreshed.clear()
            put(ops_events[i])
            put(ops_events[i + 1])
            app.tick()
            await pilot.pause()
            name = ops_events[i].op
            index = app.model.index_of(name)
            assert index in refreshed or not refreshed   # nothing drawn yet: all of it
            assert set(refreshed) <= {index, ops.cursor}
            shown = _screen_lines(ops)
            assert shown == _fresh_lines(ops)
            assert "✓" in shown[index] and name in shown[index]
            assert app.query_one(EventLog).lines[-1] == app.model.line(ops_events[i + 1],
                                                                       False)
            assert f"ops {i // 2 + 1}/10" in str(app.query_one(StatusBar).render())
        put(end)
        app.tick()
        await pilot.pause()
        assert _screen_lines(ops) == _fresh_lines(ops)
        assert "FINISHED" in str(app.query_one(StatusBar).render())
        app.stop_ticking()


@pytest.mark.asyncio
async def test_the_log_shows_its_last_lines_as_the_oldest_are_dropped(monkeypatch):
    """A full log drops lines at the top while it follows the end: the lines on screen
    are always its last ones (the lines it drew are kept, and move with the drop)."""
    monkeypatch.setattr(event_log, "MAX_LINES", 50)
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        app.stop_ticking()
        log = app.query_one(EventLog)
        log.max_lines = 50
        n = 0
        for batch in (30, 15, 20, 7, 40):
            log.add([f"line {n + k}" for k in range(batch)])
            n += batch
            await pilot.pause()
            assert log.line_count == min(n, 50)
            shown = [line.rstrip() for line in _screen_lines(log)]
            visible = [line for line in shown if line]
            assert visible == list(log.lines)[-len(visible):]
            assert visible[-1] == f"line {n - 1}"


def test_importing_the_ui_leaves_the_debugger_core_and_script_runner():
    """``view`` and ``attach`` never use them: they load when the app is built."""
    code = ("import sys, pyfunc_debug.tui.app; "
            "print(sorted(m for m in sys.modules if m.startswith('pyfunc_debug.debug') "
            "or m == 'pyfunc_debug.script'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.asyncio
async def test_the_program_starts_once_the_first_screen_is_drawn(monkeypatch):
    """The program's first event comes after the first screen was drawn."""
    # the wait is bounded (FIRST_SCREEN); a loaded CI machine can take longer than
    # that to draw, so the bound is lifted here: this checks the order, not the time
    monkeypatch.setattr(app_module, "FIRST_SCREEN", 60.0)
    seen = []

    def target():
        seen.append(app._first_screen.is_set())
        return 0

    app = PfdApp(target, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        while not app.target_done:
            await pilot.pause(0.05)
        app.stop_ticking()
    assert seen == [True]
    assert not any(isinstance(e, ev.OpError) for e in app.bridge.recorded)


@pytest.mark.asyncio
async def test_the_apps_start_up_garbage_is_collected_before_the_program_starts(monkeypatch):
    """The app's start-up objects would bring the collector's next full pass into the
    program's run (0.23 s of a tf.data pipeline's, with TensorFlow's heap to walk): it runs
    once before the program's first line, and the program starts with the pass behind it."""
    monkeypatch.setattr(app_module, "FIRST_SCREEN", 60.0)
    full_passes = []

    def note(phase, info):
        if phase == "stop" and info["generation"] == 2:
            full_passes.append(threading.get_ident())

    seen = []

    def target():
        seen.append(list(full_passes))
        return 0

    app = PfdApp(target, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    gc.callbacks.append(note)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while not app.target_done:
                await pilot.pause(0.05)
            app.stop_ticking()
    finally:
        gc.callbacks.remove(note)
    assert seen and app.worker_thread.ident in seen[0]   # on the program's thread, before it


def test_the_full_pass_is_made_even_when_another_threads_pass_is_under_way():
    """``gc.collect()`` returns at once, collecting nothing, while another thread's pass runs
    Python code (a finalizer, a ``gc.callbacks`` entry): the app's pass before the program
    is then made once that one is over (CI saw it skipped)."""
    from pyfunc_debug.tui.app import _full_collection

    other_started, mine = threading.Event(), []

    def slow(phase, info):   # the other thread's pass lets this thread in meanwhile
        if threading.current_thread().name == "other" and phase == "start":
            other_started.set()
            time.sleep(0.03)
        elif threading.current_thread() is threading.main_thread() and phase == "stop" \
                and info["generation"] == 2:
            mine.append(info)

    gc.callbacks.append(slow)
    try:
        other = threading.Thread(target=gc.collect, name="other")
        other.start()
        assert other_started.wait(5)
        _full_collection()
        other.join()
    finally:
        gc.callbacks.remove(slow)
    assert mine, "no full pass was made on this thread"
