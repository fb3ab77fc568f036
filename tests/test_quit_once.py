"""One ``q`` quits from anywhere, pdb included (SPEC §4b, §5a): quitting a pdb session the UI
or the ``(pfd)`` prompt opened aborts the run and ends it there — no second ``q``, one line
(``run aborted at op 'x'``), no traceback. Headless (Pilot) for each way into pdb, then
the real command in a pseudo-terminal, a ``--tf`` run included.
"""
from __future__ import annotations

import asyncio
import io
import os
import sys
import textwrap

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug.debug import ConsoleFrontend, Debugger, PdbRunner
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.debug.pdb_bridge import PdbQuit
from pyfunc_debug.errors import CancelledError
from pyfunc_debug.external_calls import CallbackRun

from programs import KEYERROR, LOOP
from test_tui_e2e import ANSI, Screen
from test_tui_pilot import Target, _app, _paused_at, _running, _until

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def no_user_pdbrc(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))


def lookup(x):
    table = {1: 2}
    return np.float32(table[int(x[0]) + 1])


def make_nan(x):
    with np.errstate(invalid="ignore"):
        return np.log(x - 100).astype(np.float32)


def _one_op(func, name):
    outcome: list = []

    def target():
        g = pfd.Graph()
        with g.as_default():
            x = pfd.compat.v1.placeholder(pfd.float32, name="x")
            y = pfd.numpy_function(func, [x], pfd.float32, name=name)
        with pfd.Session(graph=g) as sess:
            try:
                sess.run(y, {x: np.ones(2, np.float32)})
            except pfd.errors.OpError as e:
                outcome.append(e)
                return 1
        return 0
    return target, outcome


def callbacks():
    """Two calls of a framework's callback op in one run (as TF's ``Dataset.map`` makes)."""
    outcome: list = []

    def target():
        run = CallbackRun("tensorflow")
        op = ExternalOp("features/scale", "PyFunc", "pipeline.py:7")
        try:
            for i in range(2):
                run.call(op, lambda v: v * 2, [np.arange(3, dtype=np.float32) + i])
        except CancelledError as e:
            outcome.append(e)
            return 1
        finally:
            run.end()
        return 0
    return target, outcome


async def _quits_after_pdb(app, pilot, key: str) -> None:
    """``key`` opens pdb, which reads ``q``: the app leaves with no other key."""
    await pilot.press(key)
    await _until(pilot, lambda: not app.is_running,
                 lambda: f"the app to exit (state {app.model.state}, message {app.message!r})")
    await asyncio.to_thread(app.worker_thread.join, 5)
    assert not app.worker_thread.is_alive()
    assert app.return_code == 0
    assert app.bridge.quitting


@pytest.mark.asyncio
@pytest.mark.parametrize("typed", ["q\n", ""], ids=["q", "ctrl-d"])
async def test_one_q_in_pdb_after_s_quits_the_app(typed):
    target = Target(runs=3)
    app, _ = _app(target, pdb_input=typed, breaks=("add_one",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "add_one")
        await _quits_after_pdb(app, pilot, "s")
    assert app.bridge.link.quit_in_pdb == "add_one"
    assert target.results == [] and isinstance(target.errors[0], PdbQuit)


@pytest.mark.asyncio
async def test_one_q_in_post_mortem_pdb_quits_the_app():
    target, outcome = _one_op(lookup, "lookup")
    app, pdb_out = _app(target, pdb_input="q\n", break_on=("error",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "lookup", "error")
        await _quits_after_pdb(app, pilot, "p")
    assert "lookup()" in pdb_out.getvalue()
    assert isinstance(outcome[0], PdbQuit) and outcome[0].pfd_aborted_at == "lookup"


@pytest.mark.asyncio
async def test_one_q_in_pdb_after_s_at_a_pause_after_the_op_quits_the_app():
    target, outcome = _one_op(make_nan, "make_nan")
    app, pdb_out = _app(target, pdb_input="q\n", break_on=("nan",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "make_nan", "after")
        await _quits_after_pdb(app, pilot, "s")     # its function again, under pdb
    assert "already ran" in pdb_out.getvalue()
    assert isinstance(outcome[0], PdbQuit)


@pytest.mark.asyncio
async def test_one_q_in_pdb_at_a_framework_callback_quits_the_app():
    target, outcome = callbacks()
    app, _ = _app(target, pdb_input="q\n", breaks=("features/*",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "features/scale")
        await _quits_after_pdb(app, pilot, "s")
    assert isinstance(outcome[0], CancelledError)
    assert app.model.rows["features/scale"].calls <= 1


def stops_itself(x):
    y = x + 1
    breakpoint()
    return y


@pytest.mark.asyncio
async def test_one_q_in_a_breakpoint_of_the_scripts_own_quits_the_app():
    target, _ = _one_op(stops_itself, "stops")
    app, pdb_out = _app(target, pdb_input="q\n")
    async with _running(app) as pilot:
        await _until(pilot, lambda: not app.is_running,
                     lambda: f"the app to exit (state {app.model.state})")
    assert "stops_itself()" in pdb_out.getvalue()
    assert app.return_code == 0 and app.target_done


@pytest.mark.asyncio
async def test_continue_in_pdb_keeps_the_app():
    target = Target(runs=1)
    app, _ = _app(target, pdb_input="c\n", breaks=("add_one",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "add_one")
        await pilot.press("s")
        await _until(pilot, lambda: app.target_done, "the run to end")
        await pilot.pause(0.3)
        assert app.is_running and app.bridge.link.quit_in_pdb is None


# -- the console: q in pdb aborts and ends, as q at (pfd) does ---------------------------------

def _console(commands, pdb_input):
    out, pdb_out = io.StringIO(), io.StringIO()
    fe = ConsoleFrontend(io.StringIO("".join(c + "\n" for c in commands)), out)
    dbg = Debugger(on_pause=fe, pdb_runner=PdbRunner(io.StringIO(pdb_input), pdb_out))
    fe.debugger = dbg
    return dbg, out, pdb_out


@pytest.mark.parametrize("command,bp", [("pm", dict(on_error=True)), ("s", dict(op="lookup"))])
def test_console_one_q_in_pdb_aborts_the_run(command, bp):
    dbg, out, pdb_out = _console([command, "c", "c"], "q\n")
    dbg.break_on(**bp)
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lookup, [x], pfd.float32, name="lookup")
    with dbg, pfd.Session(graph=g) as sess:
        with pytest.raises(PdbQuit) as info:
            sess.run(y, {x: np.ones(2, np.float32)})
    assert info.value.pfd_aborted_at == "lookup"
    assert out.getvalue().count("(pfd) ") == 1          # no second prompt: the run ended
    assert "lookup()" in pdb_out.getvalue()


# -- the real command ---------------------------------------------------------------------------


def _spawn(tmp_path, args, script=None):
    pexpect = pytest.importorskip("pexpect")
    if script is not None:
        (tmp_path / "script.py").write_text(textwrap.dedent(script))
        args = [*args, str(tmp_path / "script.py")]
    # TF_CPP_MIN_LOG_LEVEL: TensorFlow's own C++ log of its cancelled parallel calls (with
    # their Python traceback) is TensorFlow's, with or without us: not what is tested here
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm-256color", PDBPP_COLORS="0",
               PYTHONUNBUFFERED="1", COLUMNS="120", LINES="40", TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "run", *args], env=env,
                          cwd=ROOT if script is None else str(tmp_path), dimensions=(40, 120),
                          encoding="utf-8", timeout=60)
    return pexpect, child


def _after_pdb_q(pexpect, child, screen, timeout: float = 60) -> str:
    """Wait for pdb's prompt, type ``q`` once; what the terminal shows until the process
    ends (ANSI stripped)."""
    screen.wait_for(r"\(Pdb\+*\) ", timeout)
    screen.send("q\r")
    child.expect(pexpect.EOF, timeout=30)
    out = screen.fresh + ANSI.sub("", child.before or "")
    child.close()
    return out


@pytest.mark.parametrize("key,script,args", [
    ("s", LOOP, ["--break", "slow"]),
    ("p", KEYERROR, []),
], ids=["s", "post-mortem"])
def test_pty_one_q_in_pdb_ends_the_ui_with_one_line(tmp_path, key, script, args):
    pexpect, child = _spawn(tmp_path, args, script)
    screen = Screen(child)
    op = "slow" if key == "s" else "lookup"
    screen.wait_for(r"(before|error) " + op + " — keys")
    screen.send(key)
    out = _after_pdb_q(pexpect, child, screen)
    assert child.exitstatus == 1
    assert f"run aborted at op '{op}'" in out
    assert "Traceback" not in out and "PdbQuit" not in out


def test_pty_console_one_q_in_post_mortem_pdb_ends_the_run(tmp_path):
    pexpect, child = _spawn(tmp_path, ["--console", "--break-on", "error"], KEYERROR)
    screen = Screen(child)
    screen.wait_for(r"\(pfd\) ")
    screen.send("pm\r")
    out = _after_pdb_q(pexpect, child, screen)
    assert child.exitstatus == 1
    assert "run aborted at op 'lookup'" in out
    assert "(pfd)" not in out and "Traceback" not in out


def test_pty_tf_one_q_in_pdb_ends_the_ui_with_one_line(tmp_path):
    pytest.importorskip("tensorflow")
    pexpect, child = _spawn(tmp_path, ["--tf", "--break", "features/*",
                                       os.path.join("examples", "tensorflow", "dataset_map.py")])
    screen = Screen(child)
    screen.wait_for(r"before features/standardize — keys", 120)
    screen.send("s")
    out = _after_pdb_q(pexpect, child, screen)
    assert child.exitstatus == 1
    assert "run aborted at op 'features/standardize'" in out
    assert "Traceback" not in out and "PdbQuit" not in out


def test_an_aborted_ops_error_reads_as_the_abort_not_a_traceback():
    """While the app closes after ``q`` in pdb it may draw once more: the aborted op's
    error pane says what the user did, not PdbQuit's traceback."""
    from pyfunc_debug.tui.failure_text import error_text
    try:
        raise PdbQuit(None, None, "the run was aborted from pdb (quit) in op 'slow'")
    except PdbQuit as e:
        e.pfd_aborted_at = "slow"
        text = error_text(e)
    assert text == "run aborted at op 'slow'"
