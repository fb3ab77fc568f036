"""Every request is honoured or refused aloud (issue 23, SPEC §4, §4a, §4b), at the core
and then through the UI (Pilot): a pause shows inputs as they were when the op started;
``on_warning`` pauses for every diagnostic kind (``runtime.diagnose.KINDS``) or says why
not; post-mortem opens at the user's code (a dtype error: the wrapped function's frame,
its result as ``__return__``); ``s`` after an op ran calls it again under pdb; ``q`` in
pdb, post-mortem too, aborts the run.
"""
from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.debug import Debugger
from pyfunc_debug.debug.pdb_bridge import PdbQuit
from pyfunc_debug.runtime.diagnose import KINDS
from pyfunc_debug.tui.widgets.inspector import Inspector

from test_debugger_core import Script, scripted_pdb
from test_tui_pilot import _app, _finished, _paused_at, _running, _until


@pytest.fixture(autouse=True)
def no_user_pdbrc(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))


GIVEN = np.array([0.5, 3.0, 7.0], np.float32)


def clip_in_place(x):
    x[x > 1] = 1          # the bug: writes into the array it was handed
    return x * 10


def clip_then_nan(x):
    x[x > 1] = 1
    return np.where(x < 1, np.nan, x).astype(np.float32)


def clip_then_fail(x):
    x[x > 1] = 1
    raise ValueError("after writing into its input")


def _one_op(func, name="clip"):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        first = pfd.identity(x, name="first")
        y = pfd.numpy_function(func, [first], pfd.float32, name=name)
    return g, x, y


# -- inputs as they were when the op started ----------------------------------------------

PAUSE_KINDS = {   # kind -> (function, breakpoint, frontend actions, the pause looked at)
    "warning": (clip_in_place, dict(on_warning=True), [], ("clip", "after")),
    "nan": (clip_then_nan, dict(when="nan_producer"), [], ("clip", "after")),
    "condition": (clip_in_place, dict(when="np.any(outputs[0] > 5)"), [], ("clip", "after")),
    "callable": (clip_in_place, dict(when=lambda p: p.outputs is not None), [],
                 ("clip", "after")),
    "error": (clip_then_fail, dict(on_error=True), [], ("clip", "error")),
    "step": (clip_then_fail, dict(op="first"), ["step", "step"], ("clip", "error")),
}


@pytest.mark.parametrize("observed", [False, True], ids=["quiet", "observed"])
@pytest.mark.parametrize("kind", sorted(PAUSE_KINDS))
def test_inputs_are_shown_as_given_in_every_kind_of_pause(kind, observed):
    func, bp, actions, wanted = PAUSE_KINDS[kind]
    g, x, y = _one_op(func)
    fe = Script(actions)
    dbg = Debugger(on_pause=fe)
    dbg.break_on(**bp)
    pauses = []
    dbg.on_pause = lambda p: pauses.append(p) or fe(p)
    sub = ev.subscribe(lambda e: None, capture="summary") if observed else None
    fed = GIVEN.copy()
    try:
        with dbg, pfd.Session(graph=g) as sess:
            try:
                sess.run(y, {x: fed})
            except pfd.errors.OpError:
                pass
    finally:
        if sub is not None:
            sub.close()
    np.testing.assert_array_equal(fed, [0.5, 1.0, 1.0])   # the bug did happen
    pause = next(p for p in pauses if (p.op_name, p.when) == wanted)
    np.testing.assert_array_equal(pause.inputs[0], GIVEN)            # as given
    np.testing.assert_array_equal(pause.inputs_after[0], [0.5, 1.0, 1.0])   # as left
    np.testing.assert_array_equal(pause.input_summaries()[0].max, 7.0)


def test_a_pause_after_an_op_that_left_its_inputs_alone_has_no_inputs_after():
    g, x, y = _one_op(lambda v: v * 10)
    pauses = []
    dbg = Debugger(on_pause=lambda p: pauses.append(p) or "continue")
    dbg.break_on(op="clip", when="np.any(outputs[0] > 5)")
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(y, {x: GIVEN.copy()})
    (pause,) = pauses
    assert pause.inputs_after is None


# -- break_on(on_warning=True) pauses for every diagnostic kind ----------------------------

def random_augment(x):
    return (x + np.random.default_rng().normal(size=x.shape)).astype(np.float32)


def _folded():
    g = pfd.Graph()
    with g.as_default():
        base = pfd.constant(np.zeros(3, np.float32), name="base")
        aug = pfd.numpy_function(random_augment, [base], pfd.float32, stateful=False,
                                 name="augment")
        out = pfd.multiply(aug, 2.0, name="out")
    return g, out, None, "augment"


def _deduplicated():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.numpy_function(random_augment, [x], pfd.float32, stateful=False, name="aug1")
        b = pfd.numpy_function(random_augment, [x], pfd.float32, stateful=False, name="aug2")
        out = pfd.subtract(a, b, name="out")
    return g, out, {x: np.zeros(3, np.float32)}, "aug2"


def _blocked_gradient():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: v * 2, [x], pfd.float32, name="f")
        loss = pfd.reduce_sum(pfd.square(y), name="loss")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pfd.gradients(loss, [x])
    return g, loss, {x: np.ones(3, np.float32)}, "f"


def _non_finite():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: np.full_like(v, np.nan), [x], pfd.float32,
                               name="nan_maker")
    return g, y, {x: np.ones(3, np.float32)}, "nan_maker"


def _shape_change():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: v.reshape(-1), [x], pfd.float32, name="flatten")
    return g, y, {x: np.ones((3, 1), np.float32)}, "flatten"


def _input_modified():
    g, x, y = _one_op(clip_in_place)
    return g, y, {x: GIVEN.copy()}, "clip"


def _tout_mismatch():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")

        def body(t):   # an eager numpy_function whose result a graph would reject
            r = pfd.numpy_function(lambda v: v.astype(np.float64), [t], pfd.float32)
            return pfd.cast(r, pfd.float32)
        y = pfd.py_function(body, [x], pfd.float32, name="outer")
    return g, y, {x: np.ones(3, np.float32)}, "outer"


DIAGNOSTICS = {   # kind -> a program that raises it, and the op a pause is at
    "non_finite": _non_finite,
    "shape_change": _shape_change,
    "input_modified": _input_modified,
    "mutation": _input_modified,          # with Debugger(guard_mutation=True)
    "folded": _folded,
    "deduplicated": _deduplicated,
    "blocked_gradient": _blocked_gradient,
    "tout_mismatch": _tout_mismatch,
}


def test_every_diagnostic_kind_has_a_program_here():
    assert set(DIAGNOSTICS) == set(KINDS)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_break_on_warning_pauses_for_each_diagnostic_kind(kind):
    pauses = []
    dbg = Debugger(on_pause=lambda p: pauses.append(p) or "continue",
                   guard_mutation=kind == "mutation")
    bp = dbg.break_on(on_warning=True)
    with dbg:   # attached before the graph is built: a blocked gradient is seen then
        g, fetch, feed, op = DIAGNOSTICS[kind]()
        with pfd.Session(graph=g) as sess:
            sess.run(fetch, feed)
    mine = [p for p in pauses if any(w.kind == kind for w in p.warnings)]
    assert mine, f"no pause for {kind}: {[(p.op_name, p.warnings) for p in pauses]}"
    assert mine[0].op_name == op and mine[0].when == "after" and bp.hits >= 1
    assert kind in [w.kind for w in mine[0].warnings]
    assert not [w for w in dbg.warnings if w.kind == "breakpoint_cannot_fire"]


def test_a_folded_op_pauses_where_it_ran_then_where_its_value_is_reused():
    pauses = []
    dbg = Debugger(on_pause=lambda p: pauses.append(p) or "continue")
    dbg.break_on(on_warning=True)
    with dbg:
        g, fetch, _, _ = _folded()
        with pfd.Session(graph=g) as sess:
            first, second = sess.run(fetch), sess.run(fetch)
    np.testing.assert_array_equal(first, second)     # the bug the warning is about
    ran, reused = pauses
    assert ran.not_run == "" and "runs once, in this run" in ran.warning.message
    assert "did not run" in reused.describe() and "did not run" in reused.describe_short
    assert reused.not_run and "reused" in reused.not_run
    np.testing.assert_array_equal(reused.outputs[0], ran.outputs[0])   # the reused value
    np.testing.assert_array_equal(reused.inputs[0], np.zeros(3))       # its constant input


def test_a_deduplicated_op_pauses_after_the_op_whose_value_it_shares():
    pauses = []
    dbg = Debugger(on_pause=lambda p: pauses.append(p) or "continue")
    dbg.break_on(op="aug2", on_warning=True)      # only the op that does not run matches
    with dbg:
        g, fetch, feed, _ = _deduplicated()
        with pfd.Session(graph=g) as sess:
            assert not sess.run(fetch, feed).any()    # the same value twice
    (pause,) = pauses
    assert (pause.op_name, pause.warning.kind) == ("aug2", "deduplicated")
    assert "'aug1'" in pause.not_run and pause.outputs is not None
    assert not [w for w in dbg.warnings if w.kind == "breakpoint_cannot_fire"]   # it can


def test_an_eager_call_outside_any_op_is_refused_aloud():
    pauses = []
    dbg = Debugger(on_pause=lambda p: pauses.append(p) or "continue")
    bp = dbg.break_on(on_warning=True)
    with dbg:
        for _ in range(2):   # said once
            pfd.numpy_function(lambda v: v.astype(np.float64), [np.ones(2, np.float32)],
                               pfd.float32)
    assert not pauses and bp.hits == 0
    (note,) = [w for w in dbg.warnings if w.kind == "breakpoint_cannot_fire"]
    assert note.message.startswith("breakpoint 1: on_warning cannot pause for the "
                                   "tout_mismatch warning")
    assert "outside any graph op" in note.message and note.hint


def test_an_eager_call_inside_an_op_no_breakpoint_names_is_not_refused():
    pauses = []
    dbg = Debugger(on_pause=lambda p: pauses.append(p) or "continue")
    dbg.break_on(op="elsewhere*", on_warning=True)
    with dbg:
        g, fetch, feed, _ = _tout_mismatch()
        with pfd.Session(graph=g) as sess:
            sess.run(fetch, feed)
    assert not pauses
    assert not [w for w in dbg.warnings if w.kind == "breakpoint_cannot_fire"]


# -- post-mortem at the user's code -------------------------------------------------------------

def widen(v):
    scaled = v * 2
    return scaled.astype(np.float64)     # the fault: Tout says float32


def test_post_mortem_at_a_dtype_error_opens_in_the_wrapped_function_with_its_result():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(widen, [x], pfd.float32, name="widen")
    runner, out = scripted_pdb("p scaled\np __return__.dtype\nretval\nc\n")
    dbg = Debugger(on_pause=Script(["post_mortem"]), pdb_runner=runner)
    dbg.break_on(on_error=True)
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.InvalidArgumentError, match="float64"):
            sess.run(y, {x: np.array([1.0, 2.0], np.float32)})
    text = out.getvalue()
    assert "widen()" in text and "-> return scaled.astype(np.float64)" in text, text
    assert "what it returned is __return__" in text
    assert "array([2., 4.], dtype=float32)" in text      # p scaled: a local of widen
    assert "dtype('float64')" in text                    # p __return__.dtype
    assert "script_results" not in text.split("-> return")[0]   # not the library's check


def reshape_badly(v):
    wanted = (7,)
    return np.reshape(v, wanted)          # raises inside numpy


def test_post_mortem_opens_at_the_users_line_not_inside_numpy():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(reshape_badly, [x], pfd.float32, name="reshape")
    runner, out = scripted_pdb("p wanted\nc\n")
    dbg = Debugger(on_pause=Script(["post_mortem"]), pdb_runner=runner)
    dbg.break_on(on_error=True)
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.OpError):
            sess.run(y, {x: np.ones(3, np.float32)})
    text = out.getvalue()
    assert "reshape_badly()" in text and "-> return np.reshape(v, wanted)" in text, text
    assert "(7,)" in text


# -- s after the op ran ---------------------------------------------------------------------------

calls: list = []


def make_nan(v):
    calls.append(1)
    shifted = np.asarray(v) - 10
    with np.errstate(invalid="ignore"):
        return np.log(shifted).astype(np.float32)


@pytest.mark.parametrize("kind", ["numpy_function", "py_function"])
def test_s_after_an_op_ran_calls_its_function_again_under_pdb(kind):
    calls.clear()
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        wrap = pfd.numpy_function if kind == "numpy_function" else pfd.py_function
        y = wrap(make_nan, [x], pfd.float32, name="make_nan")
        z = pfd.identity(y, name="z")
    runner, out = scripted_pdb("n\nn\np shifted\nc\n")
    fe = Script(["step_into"])
    pauses = []
    dbg = Debugger(on_pause=lambda p: pauses.append(p) or fe(p), pdb_runner=runner)
    dbg.break_on(when="nan_producer")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(z, {x: np.array([1.0, 2.0], np.float32)})
    assert np.isnan(result).all()
    (pause,) = pauses
    assert pause.when == "after" and "step_into" in pause.actions
    text = out.getvalue()
    assert "already ran: this calls its function again on the inputs it was given" in text
    assert "make_nan()" in text and "array([-9., -8.], dtype=float32)" in text, text
    assert len(calls) == 2      # the run's call, and the one under pdb


def test_where_s_cannot_step_in_the_pause_says_why():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.negative(x, name="a")
        bad = pfd.numpy_function(clip_then_fail, [a], pfd.float32, name="bad")
    pauses = []
    dbg = Debugger(on_pause=lambda p: pauses.append(p) or "continue")
    dbg.break_on(op="a")
    dbg.break_on(on_error=True)
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.OpError):
            sess.run(bad, {x: np.ones(2, np.float32)})
    at_a, at_error = pauses
    assert "runs no Python function of yours" in at_a.why_not("step_into")
    assert "already failed: post-mortem (p)" in at_error.why_not("step_into")
    assert at_error.why_not("post_mortem") == ""
    assert "only possible at an error" in at_a.why_not("post_mortem")


# -- q in pdb aborts the run --------------------------------------------------------------------

@pytest.mark.parametrize("typed", ["q\n", ""], ids=["q", "ctrl-d"])
def test_quitting_post_mortem_pdb_aborts_the_run(typed):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(clip_then_fail, [x], pfd.float32, name="bad")
    runner, _ = scripted_pdb(typed)
    dbg = Debugger(on_pause=Script(["post_mortem"]), pdb_runner=runner)
    dbg.break_on(on_error=True)
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(PdbQuit) as info:
            sess.run(y, {x: np.ones(2, np.float32)})
    assert info.value.pfd_aborted_at == "bad"             # the CLI's one line
    assert isinstance(info.value, pfd.errors.CancelledError)
    assert runner.quit_in == "bad"


def test_continue_in_post_mortem_lets_the_error_go_on():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(clip_then_fail, [x], pfd.float32, name="bad")
    runner, _ = scripted_pdb("c\n")
    dbg = Debugger(on_pause=Script(["post_mortem"]), pdb_runner=runner)
    dbg.break_on(on_error=True)
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.InvalidArgumentError):
            sess.run(y, {x: np.ones(2, np.float32)})
    assert runner.quit_in is None


# -- through the UI --------------------------------------------------------------------------------

def writes_into_its_input():
    g, x, y = _one_op(clip_in_place)
    with pfd.Session(graph=g) as sess:
        sess.run(y, {x: GIVEN.copy()})
    return 0


def returns_the_wrong_dtype():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(widen, [x], pfd.float32, name="widen")
    with pfd.Session(graph=g) as sess:
        try:
            sess.run(y, {x: np.array([1.0, 2.0], np.float32)})
        except pfd.errors.OpError:
            return 1
    return 0


def makes_a_nan():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.py_function(make_nan, [x], pfd.float32, name="make_nan")
    with pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.array([1.0, 2.0], np.float32)})
    return 0


def _input_rows(app) -> dict:
    return dict(app.query_one(Inspector)._values)


@pytest.mark.asyncio
async def test_ui_break_on_warning_shows_the_input_as_it_was_given():
    app, _ = _app(writes_into_its_input, break_on=("warning",))
    async with _running(app) as pilot:
        pause = await _paused_at(pilot, "clip", "after")
        assert pause.warning.kind == "input_modified"
        given = [v for label, v in _input_rows(app).items() if label.startswith("input 0")]
        np.testing.assert_array_equal(given[0], GIVEN)
        assert pause.input_summaries()[0].max == 7.0
        await pilot.press("c")
        await _finished(pilot)


@pytest.mark.asyncio
async def test_ui_p_at_a_dtype_error_opens_pdb_in_the_wrapped_function():
    app, pdb_out = _app(returns_the_wrong_dtype, break_on=("error",),
                        pdb_input="p scaled\nretval\nc\n")
    async with _running(app) as pilot:
        await _paused_at(pilot, "widen", "error")
        await pilot.press("p")
        await _finished(pilot)
    text = pdb_out.getvalue()
    assert "widen()" in text and "-> return scaled.astype(np.float64)" in text, text
    assert "array([2., 4.])" in text                      # retval: what it returned


@pytest.mark.asyncio
async def test_ui_s_at_a_nan_pause_steps_into_a_second_call():
    calls.clear()
    app, pdb_out = _app(makes_a_nan, break_on=("nan",), pdb_input="n\nn\np shifted\nc\n")
    async with _running(app) as pilot:
        pause = await _paused_at(pilot, "make_nan", "after")
        assert "step_into" in pause.actions
        await pilot.press("s")
        await _finished(pilot)
        assert app.target_status == 0
    text = pdb_out.getvalue()
    assert "make_nan()" in text and "array([-9., -8.], dtype=float32)" in text, text


@pytest.mark.asyncio
async def test_ui_q_in_post_mortem_pdb_aborts_the_run():
    app, _ = _app(returns_the_wrong_dtype, break_on=("error",), pdb_input="q\n")
    async with _running(app) as pilot:
        await _paused_at(pilot, "widen", "error")
        await pilot.press("p")
        await _until(pilot, lambda: app.target_done or not app.is_running,
                     "the run to end")
        assert app.bridge.link.quit_in_pdb == "widen"   # the UI leaves as for its own q
        if app.target_done:
            status = app.target_status
            assert isinstance(status, PdbQuit) or status == 1, status
