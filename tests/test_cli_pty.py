"""The real command in a real pseudo-terminal (SPEC §5a): exit status, quitting, Ctrl+C,
NO_COLOR, TERM=dumb, -m, --version — what a user sees, with no traceback where one
line is due."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest
from pdb_prompts import PROMPT_RE

pexpect = pytest.importorskip("pexpect")

from programs import KEYERROR, LOOP  # noqa: E402
from test_tui_e2e import ANSI, Screen  # noqa: E402

SCRIPTS = {
    "exit3.py": """
        import sys
        print("hello from the script")
        sys.exit(3)
    """,
    "keyerror.py": KEYERROR,
    "loop.py": LOOP,
    "syntax.py": "def broken(:\n    pass\n",
    "pfd_pty_module.py": """
        import sys
        import pyfunc_debug as tf
        print("module ran with", sys.argv[1:], tf.constant(2.0).numpy() * 2)
    """,
}


@pytest.fixture
def scripts(tmp_path):
    for name, text in SCRIPTS.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def _env(tmp_path, **extra):
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm-256color", PDBPP_COLORS="0",
               PYTHONUNBUFFERED="1", COLUMNS="120", LINES="40")
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


def _spawn(args, cwd, env):
    return pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", *args], env=env, cwd=str(cwd),
                         dimensions=(40, 120), encoding="utf-8", timeout=60)


def _finish(child, screen) -> str:
    """Wait for the process to end; what it printed on the terminal after the UI left the
    alternate screen (or all of it since the last send, if no UI), ANSI stripped."""
    child.expect(pexpect.EOF, timeout=30)
    raw = child.before or ""
    child.close()
    after = raw.rsplit("\x1b[?1049l", 1)[-1] if "\x1b[?1049l" in raw else screen.fresh + raw
    return ANSI.sub("", after)


# -- exit status, and what is on the terminal afterwards --------------------------------------

def test_ui_exit_status_is_the_scripts_sys_exit_code(scripts):
    child = _spawn(["run", str(scripts / "exit3.py")], scripts, _env(scripts))
    screen = Screen(child)
    screen.wait_for(r"exit status 3")                  # the status bar says how it ended
    screen.send("q")
    out = _finish(child, screen)
    assert child.exitstatus == 3
    assert "exit status 3" in out                      # and the terminal, after the UI


def test_ui_uncaught_error_exits_1_and_its_traceback_stays_on_the_terminal(scripts):
    child = _spawn(["run", "--break-on", "nan", str(scripts / "keyerror.py")], scripts,
                   _env(scripts))
    screen = Screen(child)
    screen.wait_for(r"the script ended")
    screen.send("q")
    out = _finish(child, screen)
    assert child.exitstatus == 1
    assert "Traceback" in out and "KeyError: 2" in out
    assert re.search(r"op 'lookup' \(PyFunc, .*keyerror\.py:\d+\) failed: KeyError: 2", out), out


def test_missing_script_and_bad_usage_exit_2_before_any_ui(scripts):
    for args in (["run", str(scripts / "nope.py")], ["run", "--brek", "x", "y.py"],
                 ["trace", "-o", str(scripts / "t.json"), str(scripts / "nope.py")]):
        r = subprocess.run([sys.executable, "-m", "pyfunc_debug", *args], capture_output=True,
                           text=True, env=_env(scripts), timeout=60)
        assert r.returncode == 2, (args, r.stderr)
        assert "\x1b[?1049h" not in r.stdout           # no alternate screen: no UI opened
    assert "no such script" in r.stderr
    assert not (scripts / "t.json").exists()           # trace creates no file


def test_syntax_error_prints_its_traceback_and_exits_1(scripts):
    child = _spawn(["run", str(scripts / "syntax.py")], scripts, _env(scripts))
    screen = Screen(child)
    out = _finish(child, screen)
    assert child.exitstatus == 1
    assert "SyntaxError" in out and "syntax.py" in out


# -- quitting -------------------------------------------------------------------------------------

def test_q_in_pdb_aborts_the_run_with_one_line(scripts):
    child = _spawn(["run", "--break", "slow", str(scripts / "loop.py")], scripts, _env(scripts))
    screen = Screen(child)
    screen.wait_for(r"before slow")
    screen.send("s")
    screen.wait_for(PROMPT_RE)
    screen.send("q\r")                                 # one q: the run and the app end
    out = _finish(child, screen)
    assert child.exitstatus == 1
    assert "run aborted at op 'slow'" in out
    assert "Traceback" not in out and "PdbQuit" not in out


def test_q_while_the_script_runs_aborts_with_one_line(scripts):
    child = _spawn(["run", str(scripts / "loop.py")], scripts, _env(scripts))
    screen = Screen(child)
    screen.wait_for(r"RUNNING")
    screen.send("q")
    out = _finish(child, screen)
    assert child.exitstatus == 1
    assert "run aborted at op 'slow'" in out
    assert "Traceback" not in out and "CancelledError" not in out


def test_q_at_the_console_prompt_aborts_with_one_line(scripts):
    child = _spawn(["run", "--console", "--break", "slow", str(scripts / "loop.py")], scripts,
                   _env(scripts))
    child.expect_exact("(pfd) ")
    child.sendline("q")
    child.expect(pexpect.EOF)
    out = ANSI.sub("", child.before)
    child.close()
    assert child.exitstatus == 1
    assert "run aborted at op 'slow'" in out and "Traceback" not in out


def test_ctrl_c_at_the_console_prompt_quits_with_130(scripts):
    child = _spawn(["run", "--console", "--break", "slow", str(scripts / "loop.py")], scripts,
                   _env(scripts))
    child.expect_exact("(pfd) ")
    child.sendintr()
    child.expect(pexpect.EOF)
    out = ANSI.sub("", child.before)
    child.close()
    assert child.exitstatus == 130
    assert "run aborted at op 'slow' (Ctrl+C)" in out and "Traceback" not in out


def test_ctrl_c_in_the_ui_pauses_then_quits_with_130(scripts):
    child = _spawn(["run", str(scripts / "loop.py")], scripts, _env(scripts))
    screen = Screen(child)
    screen.wait_for(r"RUNNING")
    screen.send("\x03")
    screen.wait_for(r"PAUSED")                          # as PuDB breaks in
    screen.send("\x03")
    out = _finish(child, screen)
    assert child.exitstatus == 130
    assert "interrupted (Ctrl+C)" in out and "Traceback" not in out


# -- any terminal -----------------------------------------------------------------------------------

def test_no_color_demo_opens_and_quits(scripts):
    child = _spawn(["demo"], scripts, _env(scripts, NO_COLOR="1"))
    screen = Screen(child)
    screen.wait_for(r"PAUSED")
    screen.send("q")
    out = _finish(child, screen)
    assert child.exitstatus == 0, out
    assert "Traceback" not in out


def test_term_dumb_falls_back_to_the_console(scripts):
    child = _spawn(["run", "--break", "slow", str(scripts / "loop.py")], scripts,
                   _env(scripts, TERM="dumb"))
    child.expect("using the console frontend")
    child.expect_exact("(pfd) ")
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1


def test_dash_m_runs_a_module_with_its_arguments(scripts):
    child = _spawn(["run", "--console", "-m", "pfd_pty_module", "--flag", "x"], scripts,
                   _env(scripts))
    child.expect(pexpect.EOF)
    out = ANSI.sub("", child.before)
    child.close()
    assert child.exitstatus == 0, out
    assert "module ran with ['--flag', 'x'] 4.0" in out


def test_version(scripts):
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "--version"], capture_output=True,
                       text=True, env=_env(scripts))
    assert r.returncode == 0 and re.match(r"pyfunc-debug \S+", r.stdout)
