"""Diagnostics are events (SPEC §4a): each likely root cause that raises no error is a
``Warning`` with op, kind, message, creation site and fix hint — in subscribers, traces,
``view``, the UI (marker, count, ``w``, inspector) and the console (once each)."""
from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.debug import ConsoleFrontend, Debugger
from pyfunc_debug.debug.console import DiagnosticPrinter
from pyfunc_debug.tui.replay import ReplayApp
from pyfunc_debug.tui.widgets.op_list import OpList

from test_tui_pilot import _app, _finished, _text


def _warnings(events, kind=None):
    return [e for e in events if type(e) is ev.Warning and (kind is None or e.kind == kind)]


def random_augment(x):
    return (x + np.random.default_rng().normal(size=x.shape)).astype(np.float32)


def _folded_graph():
    g = pfd.Graph()
    with g.as_default():
        base = pfd.constant(np.zeros(3, np.float32), name="base")
        aug = pfd.numpy_function(random_augment, [base], pfd.float32, stateful=False,
                                 name="augment")
        out = pfd.multiply(aug, 2.0, name="out")
    return g, out


def _run(g, fetch, times=3, feed=None):
    with pfd.Session(graph=g) as sess:
        return [sess.run(fetch, feed) for _ in range(times)]


# -- the engine reports them ---------------------------------------------------------------

def test_a_folded_stateless_function_is_reported_with_its_fix():
    g, out = _folded_graph()
    with pfd.trace() as tr:
        results = _run(g, out)
    np.testing.assert_array_equal(results[0], results[2])     # the bug: identical every run
    folded = _warnings(tr.events, "folded")
    assert [w.op for w in folded] == ["augment"] * 3           # one per run
    assert "runs once, in this run" in folded[0].message
    assert "did not run" in folded[1].message
    assert "stateful=True" in folded[0].hint
    assert folded[0].source.endswith(".py:" + folded[0].source.rsplit(":", 1)[1])
    assert "test_diagnostics.py" in folded[0].source


def test_a_deduplicated_call_is_reported_on_the_op_that_did_not_run():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.numpy_function(random_augment, [x], pfd.float32, stateful=False, name="a")
        b = pfd.numpy_function(random_augment, [x], pfd.float32, stateful=False, name="b")
    with pfd.trace() as tr:
        _run(g, [a, b], 1, {x: np.zeros(2, np.float32)})
    (w,) = _warnings(tr.events, "deduplicated")
    assert w.op == "b" and "'a'" in w.message and "stateful=True" in w.hint


def test_a_blocked_gradient_is_an_event_naming_the_op():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: v * 2, [x], pfd.float32, name="scale_np")
        loss = pfd.reduce_sum(y * y)
        with pfd.trace() as tr, warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            grads = pfd.gradients(loss, [x])
    assert grads == [None]
    (w,) = _warnings(tr.events, "blocked_gradient")
    assert w.op == "scale_np" and w.run_id is None
    assert "pfd." not in w.message and "py_function" in w.hint    # neutral names


def test_the_op_that_makes_a_nan_is_reported_not_the_ones_that_pass_it_on():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        with np.errstate(all="ignore"):
            bad = pfd.numpy_function(lambda v: np.log(v - 10).astype(np.float32), [x],
                                     pfd.float32, name="log_shift")
        passed_on = pfd.multiply(bad, 2.0, name="passed_on")
    with pfd.trace() as tr, np.errstate(all="ignore"):
        _run(g, passed_on, 1, {x: np.ones(4, np.float32)})
    (w,) = _warnings(tr.events, "non_finite")
    assert w.op == "log_shift" and "4 NaN" in w.message


def test_a_wrapped_function_that_drops_a_dimension_is_reported():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, shape=(16, 1), name="x")
        flat = pfd.numpy_function(lambda v: v[:, 0] * 2, [x], pfd.float32, name="score")
        wrong = pfd.subtract(x, flat, name="residual")   # (16, 1) - (16,) -> (16, 16)
    with pfd.trace() as tr:
        (r,) = _run(g, wrong, 1, {x: np.ones((16, 1), np.float32)})
    assert r.shape == (16, 16)
    (w,) = _warnings(tr.events, "shape_change")
    assert w.op == "score" and "(16,)" in w.message and "(16, 1)" in w.message


def test_diagnostics_round_trip_through_a_jsonl_trace(tmp_path):
    g, out = _folded_graph()
    with pfd.trace(tmp_path / "t.jsonl"):
        _run(g, out, 2)
    loaded = _warnings(pfd.load_trace(tmp_path / "t.jsonl"), "folded")
    assert loaded and loaded[0].hint and loaded[0].source and loaded[0].op == "augment"


# -- the debugger and the console -----------------------------------------------------------

def test_break_on_warning_pauses_right_after_the_op_that_raised_it():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        with np.errstate(all="ignore"):
            bad = pfd.numpy_function(lambda v: np.sqrt(v - 10).astype(np.float32), [x],
                                     pfd.float32, name="sqrt_shift")
        out = pfd.multiply(bad, 2.0, name="out")
    seen = []
    dbg = Debugger(on_pause=lambda p: seen.append(p) or "continue")
    dbg.break_on(on_warning=True)
    with dbg, np.errstate(all="ignore"):
        _run(g, out, 1, {x: np.ones(3, np.float32)})
    assert [(p.op_name, p.when) for p in seen] == [("sqrt_shift", "after")]
    assert seen[0].warning.kind == "non_finite"


def test_a_breakpoint_on_a_folded_op_pauses_on_its_run_then_says_it_cannot_fire():
    g, out = _folded_graph()
    seen = []
    dbg = Debugger(on_pause=lambda p: seen.append((p.op_name, p.run_id)) or "continue")
    dbg.break_on(op="augment")
    with dbg:
        _run(g, out, 3)
    assert len(seen) == 1 and seen[0][0] == "augment"          # the run where it executes
    notes = [w for w in dbg.warnings if w.kind == "breakpoint_cannot_fire"]
    assert len(notes) == 1 and "folded" in notes[0].message      # said once, not per run


def test_the_console_prints_each_diagnostic_once_with_its_fix():
    g, out = _folded_graph()
    text = io.StringIO()
    with ev.subscribe(DiagnosticPrinter(text), capture="summary"):
        _run(g, out, 3)
    printed = text.getvalue()
    assert printed.count("warning: op 'augment'") == 1
    assert "fix: a stateless function" in printed


def test_a_console_pause_names_each_inputs_producer():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="feed_x")
        y = pfd.numpy_function(lambda v: v + 1, [x], pfd.float32, name="inc")
    out = io.StringIO()
    frontend = ConsoleFrontend(stdin=io.StringIO("c\n"), stdout=out)
    dbg = Debugger(on_pause=frontend)
    dbg.break_on(op="inc")
    with dbg:
        _run(g, y, 1, {x: np.float32(1)})
    assert "input 0 (from 'feed_x')" in out.getvalue()


# -- on screen -------------------------------------------------------------------------------

def folded_target():
    g, out = _folded_graph()
    _run(g, out, 2)
    return 0


@pytest.mark.asyncio
async def test_the_ui_marks_counts_jumps_to_and_explains_diagnostics():
    app, _ = _app(folded_target)
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await _finished(pilot)
            ops = app.query_one(OpList)
            row = app.model.order.index("augment")
            assert ops.render_line(row).text[0] == "⚠"
            assert "⚠ 1 warning — w" in _text(app, "#status")
            ops.cursor = (row + 1) % len(app.model.order)
            await pilot.press("w")
            await pilot.pause(0.05)
            assert ops.selected == "augment"
            header = _text(app, "#insp-header")
            assert "did not run" in header and "fix: a stateless function" in header
            assert app.model.rows["augment"].op_type == "PyFuncStateless"   # type kept
        finally:
            app.stop_ticking()


@pytest.mark.asyncio
async def test_view_shows_the_diagnostics_of_a_recorded_trace(tmp_path):
    g, out = _folded_graph()
    with pfd.trace(tmp_path / "t.jsonl"):
        _run(g, out, 2)
    app = ReplayApp(str(tmp_path / "t.jsonl"), show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.05)
        row = app.model.order.index("augment")
        assert app.query_one(OpList).render_line(row).text[0] == "⚠"
