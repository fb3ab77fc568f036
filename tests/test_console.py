"""Transcript tests of the console frontend: feed commands, compare what it prints."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from pdb_prompts import PROMPT

import pyfunc_debug as pfd
from pyfunc_debug.debug import ConsoleFrontend, Debugger, PdbRunner


@pytest.fixture(autouse=True)
def no_user_pdbrc(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))


def double(x):
    twice = x * 2
    return twice


def fails(x):
    bad_index = 10
    return x[bad_index]


def _graph():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.numpy_function(double, [x], pfd.float32, name="double")
        b = pfd.py_function(lambda v: pfd.exp(v) + 1.0, [a], pfd.float32, name="expo")
        out = pfd.identity(b, name="out")
        broken = pfd.numpy_function(fails, [x], pfd.float32, name="fails")
    return g, x, out, broken


def _session(commands, breaks=(), when=None, on_error=False, pdb_input=""):
    out = io.StringIO()
    fe = ConsoleFrontend(io.StringIO("".join(c + "\n" for c in commands)), out)
    pdb_out = io.StringIO()
    dbg = Debugger(on_pause=fe, pdb_runner=PdbRunner(io.StringIO(pdb_input), pdb_out))
    fe.debugger = dbg
    for glob in breaks:
        dbg.break_on(op=glob)
    if when:
        dbg.break_on(when=when)
    if on_error:
        dbg.break_on(on_error=True)
    return dbg, out, pdb_out


def _pauses(text):
    return re.findall(r"── paused (before|after|at error in) op '([^']+)'", text)


def test_c_continues_and_the_run_result_is_right():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["c"], breaks=["double"])
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out_t, {x: [1.0, 2.0]})
    np.testing.assert_allclose(result, np.exp([2.0, 4.0]) + 1, rtol=1e-6)
    text = out.getvalue()
    assert _pauses(text) == [("before", "double")]
    assert "[breakpoint 1: op=double]" in text
    assert "input 0 (from 'x'):  float32[2] min=1 max=2 mean=1.5" in text  # and its producer
    assert "keys: c continue, n next op, s step into, q abort" in text


def test_n_steps_through_ops_and_into_the_eager_ops_of_a_py_function():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["n", "n", "n", "n", "n", "c"], breaks=["double"])
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out_t, {x: [1.0]})
    assert _pauses(out.getvalue()) == [
        ("before", "double"), ("before", "expo"), ("before", "Exp"), ("before", "AddV2"),
        ("before", "out")]
    assert "op 'Exp' (Exp) inside 'expo'" in out.getvalue()


def test_p_prints_values_and_p_i_one_input():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["p", "p 0", "p 3", "p out", "c"], breaks=["double"])
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out_t, {x: [1.5, 2.5]})
    text = out.getvalue()
    assert text.count("array([1.5, 2.5], dtype=float32)") == 2
    assert "no input '3': op 'double' has 1 input (p 0; p alone prints it)" in text
    assert "no outputs yet: the op has not run" in text


def test_p_after_the_op_shows_outputs():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["p out 0", "c"], when="outputs[0].max() > 3")
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out_t, {x: [1.0, 2.0]})
    text = out.getvalue()
    assert _pauses(text)[0] == ("after", "double")
    assert "output 0: float32[2] min=2 max=4" in text
    assert "array([2., 4.], dtype=float32)" in text


def test_s_steps_into_the_wrapped_function_under_pdb():
    g, x, out_t, _ = _graph()
    dbg, out, pdb_out = _session(["s", "c"], breaks=["double"], pdb_input="p x\nn\np twice\nc\n")
    with dbg, pfd.Session(graph=g) as sess:
        result = sess.run(out_t, {x: [3.0]})
    np.testing.assert_allclose(result, np.exp([6.0]) + 1, rtol=1e-6)
    pdb_text = pdb_out.getvalue()
    assert "double()" in pdb_text and "-> twice = x * 2" in pdb_text
    assert "array([3.], dtype=float32)" in pdb_text
    assert "array([6.], dtype=float32)" in pdb_text


def test_s_on_an_op_without_a_wrapped_function_is_refused():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["s", "c"], breaks=["out"])
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out_t, {x: [1.0]})
    assert "cannot step into here: op 'out' (Identity) runs no Python function of yours" \
        in out.getvalue()


def test_pm_opens_pdb_at_the_raising_frame():
    g, x, _, broken = _graph()
    dbg, out, pdb_out = _session(["pm"], on_error=True, pdb_input="p bad_index\nc\n")
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.UnknownError, match="IndexError"):
            sess.run(broken, {x: [1.0]})
    text = out.getvalue()
    assert _pauses(text) == [("at error in", "fails")]
    assert "error: UnknownError: IndexError" in text
    assert "fails()" in pdb_out.getvalue() and f"{PROMPT} 10\n" in pdb_out.getvalue()


def test_pm_is_refused_before_an_error():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["pm", "c"], breaks=["double"])
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out_t, {x: [1.0]})
    assert "cannot post-mortem here: post-mortem is only possible at an error" in out.getvalue()


def test_q_aborts_and_the_session_stays_usable():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["q", "c"], breaks=["expo"])
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(pfd.errors.CancelledError, match="aborted from the debugger at op 'expo'"):
            sess.run(out_t, {x: [1.0]})
        result = sess.run(out_t, {x: [1.0]})
    np.testing.assert_allclose(result, np.exp([2.0]) + 1, rtol=1e-6)


def test_b_adds_a_breakpoint_and_bl_lists_them():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["b ou*", "bl", "c", "c"], breaks=["double"])
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out_t, {x: [1.0]})
    text = out.getvalue()
    assert "added breakpoint 2: op=ou*" in text
    assert "<breakpoint 1: op=double, hits=1>" in text
    assert _pauses(text) == [("before", "double"), ("before", "out")]


def test_help_and_unknown_commands():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session(["help", "frobnicate", "c"], breaks=["double"])
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out_t, {x: [1.0]})
    text = out.getvalue()
    for cmd in ("c ", "n ", "s ", "pm ", "p ", "b GLOB", "q "):
        assert f"\n  {cmd}" in text
    assert "unknown command 'frobnicate'; type help for the list" in text


def test_end_of_input_continues():
    g, x, out_t, _ = _graph()
    dbg, out, _ = _session([], breaks=["double"])
    with dbg, pfd.Session(graph=g) as sess:
        sess.run(out_t, {x: [1.0]})
    assert "(end of input: continuing)" in out.getvalue()


def test_break_on_nan_stops_at_the_producer_only():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = x
        for i in range(8):
            if i == 3:
                y = pfd.numpy_function(lambda v: np.sqrt(v - 100), [y], pfd.float32, name="producer")
            else:
                y = pfd.numpy_function(lambda v: v + np.float32(1), [y], pfd.float32, name=f"pass{i}")
    dbg, out, _ = _session(["c", "c", "c"], when="nan_producer")
    with dbg, pfd.Session(graph=g) as sess, np.errstate(invalid="ignore"):
        result = sess.run(y, {x: [1.0, 200.0]})
    assert np.isnan(result[0]) and np.isfinite(result[1])
    assert _pauses(out.getvalue()) == [("after", "producer")]
    assert "output 0: float32[2] min=10.15 max=10.15 mean=10.15 nan=1" in out.getvalue()


@pytest.mark.parametrize("which", ["default", "standard"])
def test_pdb_set_trace_in_a_wrapped_function_uses_the_debuggers_pdb(tmp_path, which):
    """A direct pdb.set_trace() joins the debugger's pdb (its streams and its ``around``,
    where the TUI suspends), with pdbpp (its per-thread instance) and with the standard pdb
    (which a default install and Python 3.13 get: its own session read the terminal the UI
    holds, and the program hung). Detached, ``pdb.set_trace`` is the standard library's
    again. In a subprocess: pytest replaces pdb.set_trace with its own."""
    script = tmp_path / "settrace.py"
    script.write_text(textwrap.dedent("""
        import io, pdb
        import pyfunc_debug as pfd
        from pyfunc_debug.debug import Debugger, PdbRunner

        def traced(x):
            marker = x * 3
            pdb.set_trace()
            return marker

        entered = []

        class Around:
            def __enter__(self):
                entered.append("in")

            def __exit__(self, *exc):
                entered.append("out")

        g = pfd.Graph()
        with g.as_default():
            p = pfd.compat.v1.placeholder(pfd.float32)
            y = pfd.numpy_function(traced, [p], pfd.float32, name="traced")
        out = io.StringIO()
        dbg = Debugger(on_pause=lambda pause: "continue",
                       pdb_runner=PdbRunner(io.StringIO("p marker\\nc\\n"), out, around=Around))
        plain = pdb.set_trace
        with dbg, pfd.Session(graph=g) as sess:
            result = sess.run(y, {p: 7.0})
        print(repr(out.getvalue()), entered, result, pdb.set_trace is plain)
    """))
    env = dict(os.environ, HOME=str(tmp_path))
    if which == "standard":   # pdbpp cannot be imported: the standard pdb serves
        fakes = tmp_path / "fakes"
        fakes.mkdir()
        (fakes / "pdbpp.py").write_text("raise ImportError('No module named pdbpp')\n")
        env.update(PDBPP_HIJACK_PDB="0", PYTHONPATH=os.pathsep.join(
            [str(fakes)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                       env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert "traced()" in r.stdout and "np.float32(21.0)" in r.stdout
    assert "['in', 'out'] 21.0 True" in r.stdout
    if which == "standard":
        assert "using the standard pdb" in r.stdout


# -- what the pause knows (issue 23) ----------------------------------------------------------

def _warning(kind, message, hint=""):
    from pyfunc_debug import events as ev
    return ev.Warning(0, 1, 0, 0, "clip", "PyFunc", None, message, kind, (), "", hint)


def test_show_prints_every_diagnostic_of_the_pause_once_and_the_inputs_as_left():
    from pyfunc_debug.debug.pause import Pause
    made_nan = _warning("non_finite", "op 'clip' made 2 NaN", "look at its inputs")
    wrote = _warning("input_modified", "op 'clip' wrote into its input 0", "copy first")
    given, left = np.array([0.5, 3.0, 7.0], np.float32), np.array([0.5, 1, 1], np.float32)
    pause = Pause(None, "clip", "PyFunc", "after", [given], [left * 10], warning=made_nan,
                  warnings=(made_nan, wrote, made_nan), inputs_after=[left])
    out = io.StringIO()
    assert ConsoleFrontend(io.StringIO("c\n"), out)(pause) == "continue"
    text = out.getvalue()
    assert text.count("⚠ op 'clip' made 2 NaN") == 1 and text.count("wrote into its input 0") == 1
    assert "fix: look at its inputs" in text and "fix: copy first" in text
    assert "input 0:  float32[3] min=0.5 max=7" in text
    assert "input 0 after (modified by this op):  float32[3] min=0.5 max=1" in text


class _RemotePause:
    """What an attached process's pause offers: no ``why_not``, ``warnings`` or ``not_run``."""

    op_name, op_type, when, inputs, outputs, error = "out", "Identity", "before", [], None, None
    warning, breakpoint, actions = None, None, ("continue", "step", "abort")

    def describe(self):
        return "paused before op 'out' (Identity)"

    def input_summaries(self):
        return []

    def producers(self):
        return []


def test_a_remote_pause_still_says_why_s_and_pm_are_refused():
    out = io.StringIO()
    assert ConsoleFrontend(io.StringIO("s\npm\nc\n"), out)(_RemotePause()) == "continue"
    text = out.getvalue()
    assert "cannot step into here: op 'out' (Identity) has no Python function to step into" \
        in text
    assert "cannot post-mortem here: post-mortem is only possible at an error" in text
