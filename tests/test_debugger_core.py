"""The debugger core (SPEC §4) driven by a scripted frontend, no console, no TUI.

A frontend is a callable ``on_pause(pause) -> action``; ``Script`` records what
each pause showed (op, when, breakpoint id, parent, copies of inputs/outputs)
and answers from a list of actions.
"""
from __future__ import annotations

import io
import sys
import threading

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug.debug import Debugger, PdbRunner


# -- helpers ---------------------------------------------------------------------------------

def _copy(values):
    if values is None:
        return None
    return [np.array(v, copy=True) for v in values]


class Script:
    """A frontend: records each pause, answers the next scripted action (then ``default``)."""

    def __init__(self, actions=(), default="continue"):
        self.actions = list(actions)
        self.default = default
        self.pauses: list[dict] = []

    def __call__(self, pause):
        bp = pause.breakpoint
        self.pauses.append(dict(
            op=pause.op_name, when=pause.when, bp=None if bp is None else bp.id,
            parent=pause.parent, op_obj=pause.op, op_type=pause.op_type,
            inputs=_copy(pause.inputs), outputs=_copy(pause.outputs), error=pause.error,
            thread=threading.get_ident()))
        return self.actions.pop(0) if self.actions else self.default

    @property
    def seen(self):
        """(op_name, when) per pause."""
        return [(p["op"], p["when"]) for p in self.pauses]


def scripted_pdb(script: str) -> tuple[PdbRunner, io.StringIO]:
    out = io.StringIO()
    return PdbRunner(stdin=io.StringIO(script), stdout=out), out


def chain_graph():
    """x -> a (Neg) -> b (Square) -> c (Identity) -> d (Abs); returns (g, x, d)."""
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.negative(x, name="a")
        b = pfd.square(a, name="b")
        c = pfd.identity(b, name="c")
        d = pfd.abs(c, name="d")
    return g, x, d


def _log(v):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log(v)


def nan_chain():
    """Ten ops; op4 (numpy_function(np.log) of a negative value) makes the NaN."""
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        t = pfd.identity(x, name="op1")
        t = pfd.negative(t, name="op2")
        t = pfd.identity(t, name="op3")
        t = pfd.numpy_function(_log, [t], pfd.float32, name="op4")
        t = pfd.identity(t, name="op5")
        t = pfd.negative(t, name="op6")
        t = pfd.abs(t, name="op7")
        t = pfd.identity(t, name="op8")
        t = pfd.negative(t, name="op9")
        t = pfd.identity(t, name="op10")
    return g, x, t


@pytest.fixture(autouse=True)
def _no_leftover_debugger():
    yield
    from pyfunc_debug.debug.debugger import attached
    from pyfunc_debug.runtime import hooks
    assert attached() == (), "a test left a debugger attached"
    assert hooks.runner is None


# -- where to pause ----------------------------------------------------------------------------

def test_break_on_exact_op_name_pauses_before_that_op_only():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    bp = dbg.break_on(op="b")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(d, {x: [1.0, 2.0]})
    np.testing.assert_allclose(result, [1.0, 4.0])
    assert fe.seen == [("b", "before")]
    p = fe.pauses[0]
    assert p["bp"] == bp.id
    assert p["op_type"] == "Square"
    assert p["op_obj"] is g.get_operation_by_name("b")
    np.testing.assert_allclose(p["inputs"][0], [-1.0, -2.0])
    assert p["outputs"] is None
    assert bp.hits == 1


def test_break_on_op_glob_matches_every_matching_name():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        la = pfd.square(x, name="loss_a")
        other = pfd.negative(la, name="other")
        lb = pfd.abs(other, name="loss_b")
        out = pfd.identity(lb, name="out")
    fe = Script()
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op="loss*")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out, {x: [3.0]})
    np.testing.assert_allclose(result, [9.0])
    assert fe.seen == [("loss_a", "before"), ("loss_b", "before")]


def test_break_on_op_type():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op_type="Abs")
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(d, {x: [1.0]})
    assert fe.seen == [("d", "before")]
    assert fe.pauses[0]["op_type"] == "Abs"


def test_hit_count_pauses_from_the_nth_hit_on_and_hits_counts_every_match():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    bp = dbg.break_on(op="a", hit_count=3)
    paused_runs = []
    with dbg, pfd.Session(graph=g) as sess:
        for run in range(1, 5):
            before = len(fe.pauses)
            sess.run(d, {x: [float(run)]})
            if len(fe.pauses) > before:
                paused_runs.append(run)
    assert paused_runs == [3, 4]
    assert bp.hits == 4
    np.testing.assert_allclose(fe.pauses[0]["inputs"][0], [3.0])


def test_disabled_breakpoint_stops_pausing():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    bp = dbg.break_on(op="c")
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(d, {x: [1.0]})
        assert len(fe.pauses) == 1
        bp.enabled = False
        result = sess.run(d, {x: [2.0]})
        assert len(fe.pauses) == 1
        bp.enabled = True
        sess.run(d, {x: [3.0]})
    np.testing.assert_allclose(result, [4.0])
    assert len(fe.pauses) == 2


def test_removed_breakpoint_stops_pausing():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    bp = dbg.break_on(op="c")
    keep = dbg.break_on(op="a")
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(d, {x: [1.0]})
        assert fe.seen == [("a", "before"), ("c", "before")]
        dbg.remove(bp)
        sess.run(d, {x: [2.0]})
    assert bp not in dbg.breakpoints and keep in dbg.breakpoints
    assert fe.seen == [("a", "before"), ("c", "before"), ("a", "before")]


# -- conditions ------------------------------------------------------------------------------

def test_callable_condition_on_inputs_pauses_before_when_true():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    seen_by_condition = []

    def big(pause):
        seen_by_condition.append(pause.op_name)
        return float(np.max(pause.inputs[0])) > 10

    dbg.break_on(op="a", when=big)
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(d, {x: [1.0]})
        assert fe.pauses == []
        sess.run(d, {x: [11.0]})
    assert seen_by_condition == ["a", "a"]
    assert fe.seen == [("a", "before")]
    np.testing.assert_allclose(fe.pauses[0]["inputs"][0], [11.0])


def test_callable_condition_reading_outputs_pauses_after():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op="b", when=lambda p: p.outputs[0].sum() > 3)
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(d, {x: [1.0]})
        sess.run(d, {x: [2.0]})
    assert fe.seen == [("b", "after")]
    np.testing.assert_allclose(fe.pauses[0]["outputs"][0], [4.0])


def test_has_nan_pauses_after_every_op_whose_outputs_hold_nan():
    g, x, out = nan_chain()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    dbg.break_on(when="has_nan")
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out, {x: [-1.0, -4.0]})          # op2 negates: log of 1 and 4, finite
        assert fe.pauses == []
        result = sess.run(out, {x: [-1.0, 4.0]})  # log(1) fine, log(-4) NaN
    assert np.isnan(result[1]) and result[0] == 0
    assert fe.seen == [(f"op{i}", "after") for i in range(4, 11)]


def test_has_inf_or_nan_catches_inf_that_has_nan_ignores():
    def make_inf(v):
        with np.errstate(divide="ignore"):
            return (v / np.float32(0)).astype(np.float32)

    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.numpy_function(make_inf, [x], pfd.float32, name="inf_maker")
        out = pfd.identity(a, name="out")
    fe_nan, fe_inf = Script(), Script()
    dbg_nan = Debugger(on_pause=fe_nan)
    dbg_nan.break_on(when="has_nan")
    dbg_inf = Debugger(on_pause=fe_inf)
    dbg_inf.break_on(when="has_inf_or_nan")
    with pfd.Session(graph=g) as sess:
        with dbg_nan:
            sess.run(out, {x: [1.0]})
        with dbg_inf:
            result = sess.run(out, {x: [1.0]})
    assert np.isinf(result[0])
    assert fe_nan.pauses == []
    assert fe_inf.seen == [("inf_maker", "after"), ("out", "after")]
    assert np.isinf(fe_inf.pauses[0]["outputs"][0][0])


def test_nan_producer_pauses_once_at_the_op_that_made_the_nan():
    g, x, out = nan_chain()
    fe = Script(["continue"])
    dbg = Debugger(on_pause=fe)
    bp = dbg.break_on(when="nan_producer")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out, {x: [2.0]})
    assert np.isnan(result[0])
    assert fe.seen == [("op4", "after")]
    p = fe.pauses[0]
    assert p["bp"] == bp.id
    np.testing.assert_allclose(p["inputs"][0], [-2.0])
    assert np.isnan(p["outputs"][0][0])


def test_expression_over_inputs_pauses_before():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op="a", when="np.any(inputs[0] > 5)")
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(d, {x: [1.0, 2.0]})
        assert fe.pauses == []
        result = sess.run(d, {x: [1.0, 6.0]})
    np.testing.assert_allclose(result, [1.0, 36.0])
    assert fe.seen == [("a", "before")]
    assert fe.pauses[0]["outputs"] is None


def test_expression_over_outputs_pauses_after_with_outputs_set():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op="b", when="outputs[0].sum() > 3")
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(d, {x: [1.0]})          # b gives 1
        assert fe.pauses == []
        sess.run(d, {x: [1.0, 2.0]})     # b gives 1 + 4
    assert fe.seen == [("b", "after")]
    np.testing.assert_allclose(fe.pauses[0]["outputs"][0], [1.0, 4.0])
    np.testing.assert_allclose(fe.pauses[0]["inputs"][0], [-1.0, -2.0])


def test_expression_syntax_error_raises_value_error_at_break_on():
    dbg = Debugger(on_pause=Script())
    with pytest.raises(ValueError):
        dbg.break_on(op="a", when="inputs[0] >")
    assert dbg.breakpoints == []


def test_expression_raising_at_run_time_is_a_warning_and_no_hit():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    bp = dbg.break_on(op="a", when="inputs[5] > 0")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(d, {x: [1.0, 2.0]})
    np.testing.assert_allclose(result, [1.0, 4.0])
    assert fe.pauses == []
    assert bp.hits == 0
    assert dbg.warnings, "expected a Warning event for the failing condition"
    w = dbg.warnings[0]
    assert isinstance(w, pfd.events.Warning)
    assert w.op == "a"
    assert "inputs[5] > 0" in w.message


# -- errors ----------------------------------------------------------------------------------

def _failing_graph():
    def fails(v):
        locals_name = 12345  # noqa: F841 - read from pdb
        raise ValueError("boom from the wrapped function")

    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.identity(x, name="a")
        bad = pfd.numpy_function(fails, [a], pfd.float32, name="bad")
        out = pfd.identity(bad, name="out")
    return g, x, out


def test_on_error_pauses_with_the_error_and_the_run_then_raises():
    g, x, out = _failing_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    bp = dbg.break_on(on_error=True)
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.InvalidArgumentError) as info:
            sess.run(out, {x: [1.5]})
    assert fe.seen == [("bad", "error")]
    p = fe.pauses[0]
    assert p["bp"] == bp.id
    assert p["error"] is not None
    assert p["error"] is info.value
    assert "boom from the wrapped function" in str(p["error"])
    np.testing.assert_allclose(p["inputs"][0], [1.5])


def test_post_mortem_opens_pdb_at_the_raising_frame(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    g, x, out = _failing_graph()
    runner, pdb_out = scripted_pdb("p locals_name\nc\n")
    fe = Script(["post_mortem"])
    dbg = Debugger(on_pause=fe, pdb_runner=runner)
    dbg.break_on(on_error=True)
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.InvalidArgumentError):
            sess.run(out, {x: [1.5]})
    assert fe.seen == [("bad", "error")]
    text = pdb_out.getvalue()
    assert "fails()" in text, text       # the user's raising frame, not the kernel's
    assert "12345" in text, text


# -- actions ---------------------------------------------------------------------------------

def test_continue_runs_to_the_end():
    g, x, d = chain_graph()
    fe = Script(["continue"])
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op="a")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(d, {x: [3.0]})
    np.testing.assert_allclose(result, [9.0])
    assert fe.seen == [("a", "before")]


def test_step_pauses_before_each_next_op():
    g, x, d = chain_graph()
    fe = Script(["step", "step", "continue"])
    dbg = Debugger(on_pause=fe)
    bp = dbg.break_on(op="a")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(d, {x: [3.0]})
        np.testing.assert_allclose(result, [9.0])
        assert fe.seen == [("a", "before"), ("b", "before"), ("c", "before")]
        assert [p["bp"] for p in fe.pauses] == [bp.id, None, None]
        np.testing.assert_allclose(fe.pauses[1]["inputs"][0], [-3.0])
        np.testing.assert_allclose(fe.pauses[2]["inputs"][0], [9.0])
        # "continue" ended stepping: the next run pauses only at the breakpoint
        sess.run(d, {x: [1.0]})
    assert fe.seen[3:] == [("a", "before")]


def test_step_from_a_py_function_pauses_at_its_eager_ops_then_the_next_graph_op():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        e = pfd.py_function(lambda v: pfd.exp(v) + 1.0, [x], pfd.float32, name="expo")
        out = pfd.identity(e, name="out")
    fe = Script(default="step")
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op="expo")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out, {x: [0.0]})
    np.testing.assert_allclose(result, [2.0])
    assert fe.seen[0] == ("expo", "before")
    assert fe.seen[-1] == ("out", "before")
    inner = fe.pauses[1:-1]
    assert inner, "stepping from a py_function paused at none of its eager ops"
    for p in inner:
        assert p["op_obj"] is None
        assert p["parent"] == "expo"
        assert p["when"] == "before"
    assert inner[0]["op_type"] == "Exp"
    assert fe.pauses[-1]["parent"] is None


def _traced(x):
    doubled = x * 2
    return doubled


def _wrapped_op(kind, x):
    if kind == "py_func":
        return pfd.compat.v1.py_func(_traced, [x], pfd.float32, name="wrapped")
    if kind == "numpy_function":
        return pfd.numpy_function(_traced, [x], pfd.float32, name="wrapped")
    return pfd.py_function(_traced, [x], pfd.float32, name="wrapped")


@pytest.mark.parametrize("kind", ["py_func", "numpy_function", "py_function"])
def test_step_into_runs_the_wrapped_function_under_pdb(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        w = _wrapped_op(kind, x)
        out = pfd.identity(w, name="out")
    runner, pdb_out = scripted_pdb("p x\nc\n")
    fe = Script(["step_into"])
    dbg = Debugger(on_pause=fe, pdb_runner=runner)
    dbg.break_on(op="wrapped")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out, {x: [41.5]})
    np.testing.assert_allclose(result, [83.0])
    assert fe.seen == [("wrapped", "before")]
    text = pdb_out.getvalue()
    assert "_traced()" in text and "-> doubled = x * 2" in text, text   # its first line
    assert "41.5" in text, text                                          # its real argument


def test_abort_raises_cancelled_and_the_same_session_runs_again():
    g, x, d = chain_graph()
    fe = Script(["abort"])
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op="b")
    with pfd.Session(graph=g) as sess:
        with dbg:
            with pytest.raises(pfd.errors.CancelledError):
                sess.run(d, {x: [3.0]})
            assert fe.seen == [("b", "before")]
            again = sess.run(d, {x: [2.0]})      # paused again, "continue" this time
        np.testing.assert_allclose(again, [4.0])
        assert fe.seen == [("b", "before"), ("b", "before")]
        plain = sess.run(d, {x: [5.0]})
    np.testing.assert_allclose(plain, [25.0])


# -- pfd.debug.breakpoint --------------------------------------------------------------------

def test_breakpoint_op_is_an_identity_without_a_debugger():
    from pyfunc_debug.debug.debugger import attached
    from pyfunc_debug.runtime import hooks
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.debug.breakpoint(pfd.square(x, name="sq"), name="bp")
    assert y.op.name == "bp"
    assert attached() == () and hooks.runner is None
    with pfd.Session(graph=g) as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 3.0]}), [1.0, 9.0])
    eager = pfd.debug.breakpoint(pfd.constant([2.0, 5.0]))
    np.testing.assert_allclose(np.asarray(eager), [2.0, 5.0])


def test_breakpoint_op_pauses_before_it_when_a_debugger_is_attached():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.debug.breakpoint(pfd.square(x, name="sq"), name="bp")
        out = pfd.identity(y, name="out")
    fe = Script()
    dbg = Debugger(on_pause=fe)          # no break_on at all
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out, {x: [1.0, 3.0]})
    np.testing.assert_allclose(result, [1.0, 9.0])
    assert fe.seen == [("bp", "before")]
    assert fe.pauses[0]["op_type"] == "Breakpoint"
    np.testing.assert_allclose(fe.pauses[0]["inputs"][0], [1.0, 9.0])


# -- guard_mutation ----------------------------------------------------------------------------

def _mutating_graph():
    def mutate(v):
        v += 1
        return v

    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.identity(x, name="a")
        m = pfd.numpy_function(mutate, [a], pfd.float32, name="mutator")
        out = pfd.identity(m, name="out")
    return g, x, out


def test_guard_mutation_warns_naming_the_op_and_the_input():
    g, x, out = _mutating_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe, guard_mutation=True)
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out, {x: [1.0, 2.0]})
    np.testing.assert_allclose(result, [2.0, 3.0])
    assert fe.pauses == []
    mutation = [w for w in dbg.warnings if "mutator" in w.message and "input 0" in w.message]
    assert len(mutation) == 1, dbg.warnings
    assert isinstance(mutation[0], pfd.events.Warning)
    assert mutation[0].op == "mutator"


def test_without_guard_mutation_no_warning():
    g, x, out = _mutating_graph()
    dbg = Debugger(on_pause=Script(), guard_mutation=False)
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out, {x: [1.0, 2.0]})
    np.testing.assert_allclose(result, [2.0, 3.0])
    assert dbg.warnings == []


# -- events ----------------------------------------------------------------------------------

def test_breakpoint_hits_are_recorded_and_reach_subscribers():
    g, x, d = chain_graph()
    fe = Script()
    dbg = Debugger(on_pause=fe)
    dbg.break_on(op="c")
    received = []
    handle = pfd.events.subscribe(received.append)
    try:
        with dbg, pfd.Session(graph=g) as sess:
            sess.run(d, {x: [1.0]})
            assert len(dbg.hits) == 1
            sess.run(d, {x: [2.0]})
    finally:
        handle.close()
    assert len(dbg.hits) == 2 == len(fe.pauses)
    assert all(isinstance(h, pfd.events.BreakpointHit) for h in dbg.hits)
    assert [(h.op, h.when) for h in dbg.hits] == [("c", "before"), ("c", "before")]
    got = [e for e in received if isinstance(e, pfd.events.BreakpointHit)]
    assert got == dbg.hits
    assert dbg.hits[0].seq < dbg.hits[1].seq


# -- builtin breakpoint() --------------------------------------------------------------------

def _builtin_breakpoint_run(pdb_script):
    def with_breakpoint(v):
        marker_value = v * 3
        breakpoint()
        return marker_value

    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        out = pfd.numpy_function(with_breakpoint, [x], pfd.float32, name="bpfn")
    runner, pdb_out = scripted_pdb(pdb_script)
    saved = sys.breakpointhook
    fe = Script()
    dbg = Debugger(on_pause=fe, pdb_runner=runner)
    try:
        with dbg, pfd.Session(graph=g) as sess:
            hook_inside = sys.breakpointhook
            result = sess.run(out, {x: [7.0]})
    finally:
        sys.settrace(None)
    return saved, hook_inside, result, pdb_out.getvalue(), fe


def test_builtin_breakpoint_goes_to_the_debuggers_pdb_and_the_hook_is_restored(
        tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PYTHONBREAKPOINT", raising=False)
    saved, hook_inside, result, text, fe = _builtin_breakpoint_run("c\n")
    assert hook_inside is not saved
    assert sys.breakpointhook is saved
    np.testing.assert_allclose(result, [21.0])
    assert "(Pdb" in text, text       # the scripted runner's pdb, not one on the terminal
    assert fe.pauses == []


def test_builtin_breakpoint_stops_in_the_calling_function(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PYTHONBREAKPOINT", raising=False)
    _, _, result, text, _ = _builtin_breakpoint_run("p marker_value\nc\n")
    np.testing.assert_allclose(result, [21.0])
    assert "with_breakpoint" in text, text
    assert "array([21.]" in text, text


# -- robustness --------------------------------------------------------------------------------

def test_a_raising_frontend_is_a_warning_and_the_run_continues():
    g, x, d = chain_graph()

    def broken(pause):
        raise RuntimeError("frontend exploded")

    dbg = Debugger(on_pause=broken)
    dbg.break_on(op="b")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(d, {x: [3.0]})
    np.testing.assert_allclose(result, [9.0])
    assert len(dbg.warnings) == 1
    assert isinstance(dbg.warnings[0], pfd.events.Warning)
    assert "frontend exploded" in dbg.warnings[0].message


def test_other_threads_keep_running_while_one_is_paused():
    g_a = pfd.Graph()
    with g_a.as_default():
        xa = pfd.compat.v1.placeholder(pfd.float32, name="x")
        ya = pfd.square(pfd.identity(xa, name="stop_here"), name="ya")
    g_b = pfd.Graph()
    with g_b.as_default():
        xb = pfd.compat.v1.placeholder(pfd.float32, name="x")
        yb = pfd.negative(pfd.square(xb, name="sq_b"), name="yb")

    paused = threading.Event()
    other_done = threading.Event()
    waited = []

    def frontend(pause):
        paused.set()
        waited.append(other_done.wait(timeout=5))
        return "continue"

    dbg = Debugger(on_pause=frontend)
    dbg.break_on(op="stop_here")
    results, errors = {}, []

    def run(key, g, x, y, value, after=None):
        try:
            with pfd.Session(graph=g) as sess:
                results[key] = sess.run(y, {x: value})
        except BaseException as e:  # surfaced below
            errors.append(e)
        finally:
            if after is not None:
                after.set()

    with dbg:
        ta = threading.Thread(target=run, args=("a", g_a, xa, ya, [3.0]), daemon=True)
        ta.start()
        assert paused.wait(timeout=5), "thread A never paused"
        tb = threading.Thread(target=run, args=("b", g_b, xb, yb, [2.0], other_done), daemon=True)
        tb.start()
        tb.join(timeout=5)
        assert not tb.is_alive(), "thread B was blocked by thread A's pause"
        ta.join(timeout=10)
        assert not ta.is_alive()
    assert errors == []
    assert waited == [True]
    np.testing.assert_allclose(results["a"], [9.0])
    np.testing.assert_allclose(results["b"], [-4.0])


def test_two_debuggers_each_see_their_own_breakpoints():
    g, x, d = chain_graph()
    fe1, fe2 = Script(), Script()
    dbg1 = Debugger(on_pause=fe1)
    dbg2 = Debugger(on_pause=fe2)
    bp1 = dbg1.break_on(op="a")
    bp2 = dbg2.break_on(op="c")
    with dbg1, dbg2, pfd.Session(graph=g) as sess:
        result = sess.run(d, {x: [2.0]})
    np.testing.assert_allclose(result, [4.0])
    assert fe1.seen == [("a", "before")]
    assert fe2.seen == [("c", "before")]
    assert (bp1.hits, bp2.hits) == (1, 1)
    assert len(dbg1.hits) == 1 and len(dbg2.hits) == 1


def test_a_condition_naming_an_unknown_variable_is_refused_at_creation():
    dbg = pfd.debug.Debugger(on_pause=lambda pause: "continue")
    with pytest.raises(ValueError, match="unknown name 'output'"):
        dbg.break_on(when="output[0] > 1")  # a typo of outputs
    assert dbg.breakpoints == []
    dbg.break_on(when="any(x.max() > 0 for x in inputs)")  # its own loop variable is fine


def test_a_condition_that_raises_is_said_once_as_a_note_on_its_breakpoint():
    """A typo (np.anyy) raises at every op: it was a warning on each op (48 in the UI,
    burying the real diagnostic); now one note, on the breakpoint, naming the first op."""
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32)
        y = x
        for i in range(4):
            y = pfd.numpy_function(lambda v: v + 1, [y], pfd.float32, name=f"op{i}")
    dbg = Debugger(on_pause=lambda p: "continue")
    dbg.break_on(when="np.anyy(outputs[0] > 0.4)")
    with dbg, pfd.Session(graph=g) as sess:
        for _ in range(2):
            assert sess.run(y, {x: np.float32(1)}) == 5
    [w] = dbg.warnings
    assert w.kind == "breakpoint_cannot_fire" and w.op == "op0"
    assert w.message == ("breakpoint 1: when=np.anyy(outputs[0] > 0.4) cannot fire where its "
                         "condition raises AttributeError: module 'numpy' has no attribute "
                         "'anyy' (first at op 'op0'); it counts as no hit there")


@pytest.mark.parametrize("commands, pauses", [
    ("n\nn\nn\n", [("first", "before"), ("second", "before")]),   # n past the return
    ("n\nc\n", [("first", "before")]),                             # c: runs on
])
def test_stepping_out_of_a_stepped_into_function_pauses_before_the_next_op(commands, pauses,
                                                                         tmp_path, monkeypatch):
    """``n`` past the function's ``--Return--`` left pdb and ran the program to its end;
    as ``n`` at a pause, it now pauses before the next op."""
    monkeypatch.setenv("HOME", str(tmp_path))

    def first(x):
        y = x + 1
        return y
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32)
        a = pfd.numpy_function(first, [x], pfd.float32, name="first")
        b = pfd.numpy_function(lambda v: v * 2, [a], pfd.float32, name="second")
        c = pfd.numpy_function(lambda v: v * 3, [b], pfd.float32, name="third")
    seen = []

    def on_pause(p):
        seen.append((p.op_name, p.when))
        return "step_into" if len(seen) == 1 else "continue"
    dbg = Debugger(on_pause=on_pause, pdb_runner=PdbRunner(io.StringIO(commands), io.StringIO()))
    dbg.break_on(op="first")
    with dbg, pfd.Session(graph=g) as sess:
        assert sess.run(c, {x: np.float32(1)}) == 12
    assert seen == pauses


def test_a_breakpoint_that_matched_no_op_is_named_with_the_nearest_name():
    """A typo in a glob (featurs/*) paused nowhere and said nothing."""
    from pyfunc_debug.debug.breakpoints import Breakpoint, unmatched
    seen = {("features/energy", "Square"), ("features/log_intensity", "PyFunc"),
            ("loss/total", "AddV2")}
    bps = [Breakpoint(op="featurs/*", id=1), Breakpoint(op="features/*", id=2),
           Breakpoint(op_type="PyFnuc", id=3), Breakpoint(on_error=True, id=4),
           Breakpoint(op="gone", id=5)]
    bps[4].hits = 1                      # it matched an op of an earlier graph: no note
    assert unmatched(bps, seen) == [
        "breakpoint 1: op=featurs/* matched no op that ran (did you mean 'features/*'?)",
        "breakpoint 3: type=PyFnuc matched no op that ran (did you mean 'PyFunc'?)"]


def test_run_console_names_a_breakpoint_that_matched_no_op(tmp_path):
    import os
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "run", "--console", "--break",
                        "featurs/*", os.path.join(root, "examples", "nan_hunt.py")],
                       input="c\n", capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, HOME=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert "pyfunc-debug run: note: breakpoint 1: op=featurs/* matched no op that ran " \
           "(did you mean 'features/*'?)" in r.stderr
