"""What a pause knows, on screen (SPEC §4b, issue 23): the inputs as the op left them beside
those it was given, a pause at an op that did not run says so, every diagnostic the pause
is for (once each), why ``s``/``p`` cannot be done here, the user's exception line and
frame before the wrapped error, and a failed call's values kept on its row when the pause
at its error ends.
"""
from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest
from textual.app import App

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.debug.pause import Pause
from pyfunc_debug.errors import CancelledError
from pyfunc_debug.external_calls import CallbackRun
from pyfunc_debug.tui.rows import OpRow
from pyfunc_debug.tui.widgets.inspector import Inspector

from test_requests_honoured import GIVEN, clip_in_place, clip_then_fail, no_user_pdbrc  # noqa: F401
from test_tui_pilot import _app, _finished, _paused_at, _running, _status, _until
from test_tui_truth_more import _app as _timed_app, _shown


def _one_op(func, name="clip", feed=GIVEN):
    def target():
        g = pfd.Graph()
        with g.as_default():
            x = pfd.compat.v1.placeholder(pfd.float32, name="x")
            y = pfd.numpy_function(func, [x], pfd.float32, name=name)
        with pfd.Session(graph=g) as sess:
            try:
                sess.run(y, {x: feed.copy()})
            except pfd.errors.OpError:
                return 1
        return 0
    return target


def _lines(app, selector: str) -> list[str]:
    return [line for line in _shown(app, selector) if line.strip()]


def _columns(line: str) -> dict:
    """A summary row's cells from its shape on (the label may hold spaces)."""
    cells = line.split()
    at = next(i for i, c in enumerate(cells) if c.startswith("("))
    return dict(zip(("shape", "dtype", "min", "max", "mean", "nan", "inf"), cells[at:]))


def _labels(app) -> list[str]:
    return [label for label, _ in app.query_one(Inspector)._values]


# -- inputs as given, and as the op left them ----------------------------------------------------

@pytest.mark.asyncio
@pytest.mark.parametrize("func,bp,when", [
    (clip_in_place, dict(breaks=(), break_on=("warning",)), "after"),
    (clip_then_fail, dict(break_on=("error",)), "error"),
], ids=["after", "error"])
async def test_a_pause_shows_the_inputs_as_given_and_as_the_op_left_them(func, bp, when):
    app, _ = _app(_one_op(func), **bp)
    async with _running(app) as pilot:
        pause = await _paused_at(pilot, "clip", when)
        assert pause.inputs_after is not None
        await pilot.pause(0.2)
        rows = _lines(app, "#insp-summaries")[1:]
        given = [r for r in rows if r.startswith("in 0 ") and not r.startswith("in 0 after")]
        left = [r for r in rows if r.startswith("in 0 after")]
        assert len(given) == 1 and len(left) == 1, rows
        assert _columns(given[0])["max"] == "7", rows         # as given
        assert _columns(left[0])["max"] == "1", rows          # as left
        assert "input modified by this op" in "\n".join(_lines(app, "#insp-header"))
        labels = _labels(app)
        assert "input 0 as given (modified by this op)" in labels
        assert "input 0 as the op left it" in labels
        values = dict(app.query_one(Inspector)._values)
        np.testing.assert_array_equal(values["input 0 as given (modified by this op)"], GIVEN)
        np.testing.assert_array_equal(values["input 0 as the op left it"], [0.5, 1, 1])
        await pilot.press("c")
        await _finished(pilot)


# -- a pause at an op that did not run -----------------------------------------------------------

def random_augment(x):
    return (x + np.random.default_rng().normal(size=x.shape)).astype(np.float32)


def deduplicated():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.numpy_function(random_augment, [x], pfd.float32, stateful=False, name="aug1")
        b = pfd.numpy_function(random_augment, [x], pfd.float32, stateful=False, name="aug2")
        out = pfd.subtract(a, b, name="out")
    with pfd.Session(graph=g) as sess:
        sess.run(out, {x: np.zeros(3, np.float32)})
    return 0


@pytest.mark.asyncio
async def test_a_pause_at_an_op_that_did_not_run_says_so():
    app = _timed_app(deduplicated, break_on=("warning",))      # durations on show
    async with _running(app) as pilot:
        pause = await _paused_at(pilot, "aug2", "after")
        assert pause.not_run
        await pilot.pause(0.2)
        header = "\n".join(_lines(app, "#insp-header"))
        assert "paused at it: it did not run in this run" in header, header
        assert "paused after it ran" not in header
        assert "µs" not in header.splitlines()[0] and "ms" not in header.splitlines()[0]
        status = _status(app)
        assert "at aug2 (it did not run)" in status and "after aug2" not in status, status
        await pilot.press("c")
        await _finished(pilot)


# -- every diagnostic the pause is for, once each -------------------------------------------------

def _warning(kind, message, hint=""):
    return ev.Warning(0, 1, 0, 0, "clip", "PyFunc", None, message, kind, (), "", hint)


class _InspectorApp(App):
    def compose(self):
        yield Inspector()


@pytest.mark.asyncio
async def test_the_inspector_shows_every_diagnostic_of_the_pause_once():
    made_nan = _warning("non_finite", "op 'clip' made 2 NaN", "look at its inputs")
    wrote = _warning("input_modified", "op 'clip' wrote into its input 0", "copy first")
    pause = Pause(None, "clip", "PyFunc", "after", [GIVEN], [GIVEN], warning=made_nan,
                  warnings=(made_nan, wrote, made_nan))
    row = OpRow("clip", "PyFunc", status="paused", warnings=[wrote])
    app = _InspectorApp()
    async with app.run_test(size=(120, 40)) as pilot:
        app.query_one(Inspector).show(row, None, pause)
        await pilot.pause()
        header = "\n".join(_lines(app, "#insp-header"))
    assert header.count("made 2 NaN") == 1 and header.count("wrote into its input 0") == 1
    assert header.index("made 2 NaN") < header.index("wrote into")      # the pause's first
    assert "fix: look at its inputs" in header and "fix: copy first" in header


# -- why s and p cannot be done here --------------------------------------------------------------

@pytest.mark.asyncio
async def test_s_where_it_is_not_possible_says_why():
    def target():
        g = pfd.Graph()
        with g.as_default():
            x = pfd.compat.v1.placeholder(pfd.float32, name="x")
            pfd.identity(x, name="ident")
        with pfd.Session(graph=g) as sess:
            sess.run("ident:0", {x: GIVEN})
        return 0
    app, _ = _app(target, breaks=("ident",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "ident")
        await pilot.press("s")
        await pilot.press("p")
        await pilot.pause(0.2)
        said = [n.message for n in app._notifications]
        assert any("op 'ident' (Identity) runs no Python function of yours" in m
                   for m in said), said
        assert any("post-mortem is only possible at an error pause" in m for m in said), said
        assert not any("before they run" in m for m in said)
        await pilot.press("c")
        await _finished(pilot)


# -- the user's exception line and frame first ------------------------------------------------------

def lookup(x):
    table = {1: 2}
    return np.float32(table[int(x[0]) + 1])


@pytest.mark.asyncio
async def test_an_error_pause_shows_the_users_line_and_frame_before_the_wrapped_error():
    app, _ = _app(_one_op(lookup, "lookup", np.ones(2, np.float32)), break_on=("error",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "lookup", "error")
        await pilot.pause(0.2)
        lines = _lines(app, "#insp-error")
        assert lines[0] == "KeyError: 2", lines
        assert lines[1].startswith("  at tests/test_tui_pause_fields.py:") or \
            "test_tui_pause_fields.py:" in lines[1], lines
        assert "in lookup(): return np.float32(table[int(x[0]) + 1])" in " ".join(lines[1:3])
        assert lines.index("the whole error:") > 1
        assert any("Graph execution error" in line for line in lines)
        await pilot.press("c")
        await _finished(pilot)
        app.select_op("lookup")             # the same, from the row, after the run
        await pilot.pause(0.2)
        assert _lines(app, "#insp-error")[0] == "KeyError: 2"


# -- the failed call stays on its row when the pause at its error ends -----------------------------

def pick(x):
    return np.float32({0: 1.0}[int(x[0])])


def two_failing_calls(second_may_start: threading.Event):
    """Two calls of one framework op, on two threads: the second fails while the first is
    paused at its error (as TF's parallel ``Dataset.map`` does)."""
    def target():
        run = CallbackRun("tensorflow")
        op = ExternalOp("features/pick", "PyFunc", "pipeline.py:9")

        def call(value):
            try:
                run.call(op, pick, [np.full(2, value, np.float32)])
            except (KeyError, CancelledError):
                pass

        def second():
            second_may_start.wait(30)
            call(20.0)
        other = threading.Thread(target=second)
        other.start()
        try:
            call(10.0)
        finally:
            other.join(30)
            run.end()
        return 1
    return target


@pytest.mark.asyncio
async def test_the_paused_failed_call_stays_on_its_row_after_pdb_quits_the_run():
    go = threading.Event()
    app, _ = _app(two_failing_calls(go), pdb_input="q\n", break_on=("error",))
    model = app.model
    async with _running(app) as pilot:
        await _paused_at(pilot, "features/pick", "error")
        go.set()                                   # the second call fails meanwhile
        await _until(pilot, lambda: model.rows["features/pick"].calls == 2, "the second error")
        await pilot.pause(0.2)
        assert _lines(app, "#insp-error")[0] == "KeyError: 10"     # the paused call's
        assert "KeyError: 20" in model.rows["features/pick"].error
        await pilot.press("p")                      # pdb: q aborts the run, the app leaves
        end = time.monotonic() + 10
        while app.is_running and time.monotonic() < end:
            await pilot.pause(0.05)
        await asyncio.to_thread(app.worker_thread.join, 5)
    row = model.rows["features/pick"]
    assert [s.max for s in row.inputs] == [10.0], row.inputs
    assert row.error.startswith("KeyError: 10") or "KeyError: 10" in row.error.splitlines()[-1]
    assert app.bridge.latest("features/pick").inputs[0][0] == 10.0


def test_a_scripts_end_names_the_failed_call_it_saw_not_the_last_one():
    from pyfunc_debug.tui.exit_summary import ending
    from pyfunc_debug.tui.model import RunModel
    from pyfunc_debug.tui.rows import Failure
    model = RunModel()        # two calls of a framework op failed; the script saw the first
    model.failures = [Failure(1, "lookup", "PyFunc", "s.py:9", "KeyError", f"KeyError: {i}")
                      for i in (2, 3)]

    class Outcome:
        status = 1
        error = RuntimeError("Error in user-defined function passed to ParallelMapDatasetV2: "
                             "KeyError: 2\nTraceback (most recent call last):\n  ...\n"
                             "KeyError: 2\n\t [[{{node lookup}}]] [Op:IteratorGetNext]")
    assert ending(Outcome(), model) == "KeyError: 2 (op 'lookup') (exit status 1)"


def make_nan(x):
    with np.errstate(invalid="ignore"):
        return np.log(x - 100).astype(np.float32)


def nan_then_clean():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(make_nan, [x], pfd.float32, name="make_nan")
    with pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.array([1.0], np.float32)})       # NaN: a diagnostic in run 1
        sess.run(y, {x: np.array([200.0], np.float32)})     # fine
    return 0


@pytest.mark.asyncio
async def test_warnings_of_earlier_runs_say_which_run_and_w_says_where_they_are():
    app, _ = _app(nan_then_clean)
    async with _running(app) as pilot:
        await _finished(pilot)
        # run ids count per process: this app's first run
        first = next(e.run_id for e in app.bridge.recorded if type(e).__name__ == 'RunStart')
        assert f"⚠ 1 warning (run {first})" in _status(app) and "— w" not in _status(app)
        await pilot.press("w")
        await pilot.pause(0.2)
        said = [n.message for n in app._notifications]
        assert any(f"No op of this run carries a diagnostic (the warnings came in run {first}"
                   in m for m in said), said
