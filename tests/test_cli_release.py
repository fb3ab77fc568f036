"""The command line as the release ships it: shell completion, the shipped examples
(``demo --list`` / ``--example``), ``export``, ``view`` without a terminal, one line per
file error, a trace that recorded nothing saying why, and history at the ``(pfd)`` prompt."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import pyfunc_debug as pfd
from pyfunc_debug.cli import build_parser, main
from pyfunc_debug.cli.completion import render
from programs import LOOP

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env(home, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_STATE_HOME", "PYFUNC_DEBUG_HISTORY", "NO_COLOR")}
    env.update(HOME=str(home), TERM="xterm-256color", PDBPP_COLORS="0", PYTHONUNBUFFERED="1",
               COLUMNS="120", LINES="40")
    env.update(extra)
    return env


def _cli(args, cwd, stdin="", env=None, timeout=120):
    """The real command in a subprocess, no terminal: (status, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", *args], input=stdin, text=True,
                       capture_output=True, cwd=str(cwd), env=env or _env(cwd), timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


# -- shell completion ---------------------------------------------------------------------------

BASH_PROBE = """
source "$1"
complete_line() {   # the words of a command line; the last one is being completed
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _pyfunc_debug
    echo "${COMPREPLY[*]}"
}
"""


def _bash_complete(script, *words) -> list:
    probe = BASH_PROBE + "complete_line " + " ".join(f"'{w}'" for w in words) + "\n"
    r = subprocess.run(["bash", "--norc", "-c", probe, "probe", str(script)],
                       capture_output=True, text=True, cwd=script.parent, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.fixture
def bash_script(tmp_path):
    status, out, err = _cli(["--print-completion", "bash"], tmp_path)
    assert status == 0, err
    path = tmp_path / "pyfunc-debug.bash"
    path.write_text(out)
    return path


def test_bash_completion_script_is_valid_bash(bash_script):
    r = subprocess.run(["bash", "-n", str(bash_script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "complete -F _pyfunc_debug pyfunc-debug" in bash_script.read_text()


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_commands_options_choices_and_files(bash_script):
    (bash_script.parent / "train.py").write_text("")
    c = lambda *w: _bash_complete(bash_script, "pyfunc-debug", *w)  # noqa: E731
    assert c("tr") == ["trace"]
    assert c("") == ["demo", "run", "trace", "view", "diff", "export", "replay", "attach"]
    assert c("run", "--break-on", "") == ["nan", "error", "warning"]
    assert c("trace", "--capture", "") == ["none", "summary", "full", "fault"]
    assert c("export", "--format", "") == ["csv", "parquet"]
    assert c("export", "run.jsonl", "--f") == ["--format"]
    assert c("demo", "--example", "nan") == ["nan_hunt"]
    assert c("--print-completion", "") == ["bash", "zsh"]
    assert c("run", "--con") == ["--console"]
    assert c("run", "tra") == ["train.py"]                      # SCRIPT is a file
    assert c("view", "tra") == ["train.py"]                     # so is TRACE
    assert c("trace", "-o", "tra") == ["train.py"]              # and -o OUT
    assert c("run", "train.py", "--con") == []                  # after SCRIPT: the script's
    assert c("run", "-m", "") == []                             # a module name: no guess


def test_zsh_completion_script(tmp_path):
    script = render(build_parser(), "zsh")
    assert script.startswith("#compdef pyfunc-debug\n")
    assert "compdef _pyfunc_debug pyfunc-debug" in script
    for name in ("demo", "run", "trace", "view", "diff", "export", "replay", "attach"):
        assert f"'{name}:" in script and f"                {name}) _arguments" in script
    assert ":BREAK_ON:(nan error warning)" in script and ":FORMAT:(csv parquet)" in script
    assert "'1:SCRIPT:_files'" in script and "'*::program argument:_files'" in script
    if shutil.which("zsh") is None:
        return   # the structure above is all we can check here
    path = tmp_path / "_pyfunc-debug"
    path.write_text(script)
    r = subprocess.run(["zsh", "-n", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    pexpect = pytest.importorskip("pexpect")
    from test_tui_e2e import Screen
    z = pexpect.spawn("zsh", ["-f", "-i"], env=_env(tmp_path, TERM="xterm"), cwd=str(tmp_path),
                      encoding="utf-8", dimensions=(40, 200), timeout=30)
    screen = Screen(z)
    try:
        screen.send(f"PS1='> '; autoload -U compinit; compinit -u; source {path}; echo READY\r")
        screen.wait_for("READY")
        screen.send("pyfunc-debug tr\t")
        screen.wait_for("pyfunc-debug trace")
        screen.send("\x15pyfunc-debug run --break-on \t")   # Ctrl+U, then a fresh line
        screen.wait_for(r"error\s+nan\s+warning")
    finally:
        z.close(force=True)


def test_unknown_shell_is_a_usage_error(tmp_path):
    status, _, err = _cli(["--print-completion", "fish"], tmp_path)
    assert status == 2 and "invalid choice: 'fish'" in err


# -- the shipped examples -----------------------------------------------------------------------

def test_demo_list_names_each_example_with_its_first_docstring_line(capsys):
    assert main(["demo", "--list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  nan_hunt +Hunting a NaN: made far upstream", out, re.M)
    assert re.search(r"^  py_func_sinh +TensorFlow's documented compat.v1.py_func example", out,
                     re.M)
    assert re.search(r"^  tensorflow/dataset_map +A real TensorFlow .*\(runs with --tf\)$", out,
                     re.M)
    assert "__init__" not in out


def test_an_unknown_example_is_a_usage_error_listing_the_names(capsys):
    assert main(["demo", "--example", "nope"]) == 2
    err = capsys.readouterr().err
    assert _one_line(err).startswith("pyfunc-debug demo: no example named 'nope'; the examples "
                                     "are: dask_pipeline, log_huber,")
    assert "nan_hunt" in err


def test_example_without_a_name_is_a_usage_error_naming_them(capsys):
    assert main(["demo", "--example"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert err.startswith("pyfunc-debug demo: --example needs the NAME of an example: "
                          "dask_pipeline, log_huber,")
    assert "demo --list" in err


def test_example_nan_hunt_at_the_console_pauses_where_the_nan_is_made(tmp_path):
    status, out, err = _cli(["demo", "--example", "nan_hunt", "--console", "--break-on", "nan"],
                            tmp_path, stdin="p 0\nc\n")
    assert status == 0, err
    assert "paused after op 'features/log_intensity' (PyFunc)" in out
    assert "min=-0.05" in out                      # p 0: the negative reading it took np.log of
    assert "final loss 'loss/total:0' = nan" in out


def test_example_q_aborts_with_one_line_and_exit_1(tmp_path):
    status, out, err = _cli(["demo", "--example", "nan_hunt", "--console", "--break-on", "nan"],
                            tmp_path, stdin="q\n")
    assert status == 1
    assert "pyfunc-debug: run aborted at op 'features/log_intensity'" in err
    assert "Traceback" not in err and "final loss" not in out


def test_example_without_a_terminal_runs_as_run_does(tmp_path):
    status, out, err = _cli(["demo", "--example", "py_func_sinh"], tmp_path)
    assert status == 0, err
    assert "pyfunc-debug demo: not a terminal: using the console frontend" in err
    assert "py_func(np.sinh)(1.0) = np.float32(1.1752012)" in out


def _installed_layout(site):
    """The wheel's tree (setup.py's package_dir: tui/ and examples/ under pyfunc_debug/)
    in ``site``, without a build: source files and package data only."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(os.path.join(ROOT, "pyfunc_debug"), site / "pyfunc_debug", ignore=ignore)
    for folder in ("tui", "examples"):
        shutil.copytree(os.path.join(ROOT, folder), site / "pyfunc_debug" / folder,
                        ignore=ignore)


def test_examples_run_from_an_installed_package_without_a_checkout(tmp_path):
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    _installed_layout(site)
    elsewhere.mkdir()
    env = _env(elsewhere, PYTHONPATH=str(site))    # ahead of the editable install's finder
    status, out, err = _cli(["demo", "--list"], elsewhere, env=env)
    assert status == 0, err
    assert f"({site / 'pyfunc_debug' / 'examples'})" in out
    status, out, err = _cli(["demo", "--example", "py_func_sinh", "--console"], elsewhere,
                            env=env)
    assert status == 0, err
    assert "py_func(np.sinh)(1.0) = np.float32(1.1752012)" in out


# -- export -------------------------------------------------------------------------------------

def _record(path):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: v * 2, [x], pfd.float32, name="double")
    with pfd.trace(str(path)), pfd.Session(graph=g) as sess:
        for i in range(3):
            sess.run(y, {x: [1.0, float(i)]})
    return path


def test_export_writes_csv_and_says_how_many_rows(tmp_path, capsys):
    pytest.importorskip("pyfunc_debug.trace.export")
    trace = _record(tmp_path / "run.jsonl")
    out = tmp_path / "ops.csv"
    assert main(["export", str(trace), "-o", str(out)]) == 0
    assert capsys.readouterr().err == f"pyfunc-debug export: wrote 3 rows to {out}\n"
    lines = out.read_text().splitlines()
    assert lines[0].startswith("run,op,op_type,") and len(lines) == 4
    assert all(",double,PyFunc," in line for line in lines[1:])


def test_export_to_stdout(tmp_path, capsys):
    pytest.importorskip("pyfunc_debug.trace.export")
    trace = _record(tmp_path / "run.jsonl")
    assert main(["export", str(trace), "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("run,op,op_type,") and captured.out.count(",double,") == 3
    assert captured.err == "pyfunc-debug export: wrote 3 rows to stdout\n"


def test_export_errors_are_one_line_exit_2(tmp_path, capsys):
    pytest.importorskip("pyfunc_debug.trace.export")
    trace = _record(tmp_path / "run.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a trace\n")
    cases = {(str(tmp_path / "nope.jsonl"),): "nope.jsonl: No such file or directory",
             (str(bad),): "bad.jsonl",
             (str(trace), "-o", "/proc/x.csv"): "cannot write /proc/x.csv",
             (str(trace), "-o", str(tmp_path)): "is a directory"}
    for args, said in cases.items():
        assert main(["export", *args]) == 2, args
        line = _one_line(capsys.readouterr().err)
        assert line.startswith("pyfunc-debug export: ") and said in line, (args, line)


# -- view without a terminal --------------------------------------------------------------------

def test_view_without_a_terminal_refuses_with_one_line(tmp_path):
    trace = _record(tmp_path / "run.jsonl")
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "view", str(trace)],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       env=_env(tmp_path), timeout=60)
    assert r.returncode == 2
    assert r.stdout == "" and "\x1b" not in r.stderr          # no escape codes, no UI
    line = _one_line(r.stderr)
    assert line.startswith("pyfunc-debug view: needs a terminal (stdin and stdout are not "
                           "ttys); to read the trace without the UI use: pyfunc-debug export ")
    assert "pfd.load_trace(" in line


# -- file errors: one line naming the path, exit 2, before the script runs ---------------------

@pytest.fixture
def script(tmp_path):
    path = tmp_path / "script.py"
    path.write_text("print('the script ran')\n")
    return path


@pytest.mark.parametrize("out, said", [
    ("/proc/x.jsonl", "cannot write /proc/x.jsonl: cannot create a file in /proc"),
    ("{tmp}/no/such/dir/x.jsonl", "cannot write {tmp}/no/such/dir/x.jsonl: no such directory"),
    ("{tmp}/adir.jsonl", "{tmp}/adir.jsonl is a directory"),
    ("{tmp}/script.py/x.json", "{tmp}/script.py is not a directory"),
])
def test_trace_output_that_cannot_be_written(tmp_path, script, out, said):
    (tmp_path / "adir.jsonl").mkdir()
    out, said = out.format(tmp=tmp_path), said.format(tmp=tmp_path)
    status, stdout, err = _cli(["trace", "-o", out, str(script)], tmp_path)
    assert status == 2
    line = _one_line(err)
    assert line.startswith("pyfunc-debug trace: ") and said in line, line
    assert "the script ran" not in stdout


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into read-only directories")
def test_trace_into_a_read_only_directory(tmp_path, script):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        status, stdout, err = _cli(["trace", "-o", str(locked / "x.jsonl"), str(script)],
                                   tmp_path)
    finally:
        locked.chmod(0o700)
    assert status == 2 and "the script ran" not in stdout
    assert _one_line(err).startswith(f"pyfunc-debug trace: cannot write {locked}/x.jsonl")


def test_a_trace_that_cannot_be_finished_says_so_in_one_line(tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    script = tmp_path / "rm_out.py"
    script.write_text(textwrap.dedent(f"""
        import shutil
        import pyfunc_debug as tf
        print(tf.function(lambda x: x * 2)(tf.constant(1.0)))
        shutil.rmtree({str(out_dir)!r})
    """))
    status, stdout, err = _cli(["trace", "-o", str(out_dir / "t.json"), str(script)],
                               tmp_path)
    assert status == 1 and "pfd.Tensor(2.0" in stdout
    assert _one_line(err).startswith(f"pyfunc-debug trace: cannot write {out_dir}/t.json:")


@pytest.mark.parametrize("command", [["view"], ["diff", "{other}"], ["export"],
                                     ["view", "{other}", "--diff"]])
def test_missing_or_directory_trace_files(tmp_path, capsys, command):
    other = _record(tmp_path / "ok.jsonl")
    if command == ["export"]:
        pytest.importorskip("pyfunc_debug.trace.export")
    (tmp_path / "adir.jsonl").mkdir()
    for target, said in ((tmp_path / "nope.jsonl", "nope.jsonl: No such file or directory"),
                         (tmp_path / "adir.jsonl", "adir.jsonl is a directory, not a trace file")):
        args = [a.format(other=other) for a in command]
        args = (args[:1] + [str(target)] + args[1:]) if args[-1] != "--diff" else \
            args + [str(target)]
        assert main(args) == 2, args
        line = _one_line(capsys.readouterr().err)
        assert line.startswith(f"pyfunc-debug {command[0]}: ") and said in line, line


# -- a trace that recorded nothing says why --------------------------------------------------

EAGER_ONLY = """
    import numpy as np
    import pyfunc_debug as tf
    print(tf.constant(2.0) * 3)
    print(tf.py_function(lambda x: x * 2, [tf.constant(2.0)], tf.float32))
    print(tf.numpy_function(lambda x: x * 2, [np.float32(2.0)], tf.float32))
"""


def test_trace_of_eager_code_says_what_is_not_recorded(tmp_path):
    script = tmp_path / "eager.py"
    script.write_text(textwrap.dedent(EAGER_ONLY))
    out = tmp_path / "eager.jsonl"
    status, stdout, err = _cli(["trace", "-o", str(out), str(script)], tmp_path)
    assert status == 0, err
    assert stdout.count("pfd.Tensor(") == 3                 # it ran...
    assert pfd.load_trace(str(out)) == []                   # ...and recorded nothing
    assert _one_line(err) == (
        f"pyfunc-debug trace: wrote 0 events to {out}: the script ran no Session.run and no "
        "tf.function call (eager ops, and py_function/numpy_function/py_func called eagerly "
        "outside a tf.function, are not recorded: call them from a tf.function or a "
        "Session.run to trace them)")


def test_run_console_of_eager_code_says_why_nothing_was_watched(tmp_path):
    script = tmp_path / "eager.py"
    script.write_text(textwrap.dedent(EAGER_ONLY))
    status, stdout, err = _cli(["run", "--console", str(script)], tmp_path)
    assert status == 0 and stdout.count("pfd.Tensor(") == 3, err
    assert "pyfunc-debug run: no op ran: the script ran no Session.run" in _one_line(err)


def test_the_same_ops_in_a_tf_function_are_recorded(tmp_path):
    script = tmp_path / "fn.py"
    script.write_text(textwrap.dedent("""
        import pyfunc_debug as tf
        f = tf.function(lambda x: tf.py_function(lambda v: v * 2, [x], tf.float32))
        print(f(tf.constant(2.0)))
    """))
    out = tmp_path / "fn.jsonl"
    status, _, err = _cli(["trace", "-o", str(out), str(script)], tmp_path)
    assert status == 0, err
    assert re.search(r"wrote \d+ events \([1-9]\d* op runs? in 1 run\)", err), err
    assert "not recorded" not in err
    status, _, err = _cli(["run", "--console", str(script)], tmp_path)
    assert status == 0 and "no op ran" not in err, err


# -- history and line editing at the (pfd) prompt ----------------------------------------------

def _spawn_console(tmp_path, env):
    pexpect = pytest.importorskip("pexpect")
    (tmp_path / "loop.py").write_text(textwrap.dedent(LOOP))
    return pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "run", "--console", "--break",
                                          "slow", "loop.py"],
                         env=env, cwd=str(tmp_path), dimensions=(40, 120), encoding="utf-8",
                         timeout=60)


UP = "\x1b[A"


def _quit(child):
    import pexpect
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1


def test_up_arrow_recalls_commands_across_prompts_and_sessions(tmp_path):
    child = _spawn_console(tmp_path, _env(tmp_path))
    child.expect_exact("(pfd) ")
    child.sendline("hello")
    child.expect_exact("unknown command 'hello'")
    child.expect_exact("(pfd) ")
    child.sendline("n")                                     # the next pause: a new prompt
    child.expect("paused before op 'slow' .* run 2")
    child.expect_exact("(pfd) ")
    child.send(UP + UP + "\r")                              # n, then hello
    child.expect_exact("unknown command 'hello'")
    _quit(child)
    history = tmp_path / ".local" / "state" / "pyfunc-debug" / "history"
    assert history.read_text().splitlines() == ["hello", "n", "hello", "q"]

    child = _spawn_console(tmp_path, _env(tmp_path))        # a new session reads it back
    child.expect_exact("(pfd) ")
    child.send(UP + UP + UP + "\r")                         # q, hello, then n
    child.expect("paused before op 'slow' .* run 2")
    _quit(child)


def test_tab_completes_the_prompt_s_commands(tmp_path):
    child = _spawn_console(tmp_path, _env(tmp_path))
    child.expect_exact("(pfd) ")
    child.send("he\t\r")
    child.expect_exact("commands at the (pfd) prompt:")
    _quit(child)


def test_a_history_file_that_cannot_be_written_changes_nothing(tmp_path):
    env = _env(tmp_path, PYFUNC_DEBUG_HISTORY="/proc/no/history")
    child = _spawn_console(tmp_path, env)
    child.expect_exact("(pfd) ")
    child.sendline("hello")
    child.expect_exact("unknown command 'hello'")
    child.expect_exact("(pfd) ")
    child.send(UP + "\r")                                   # the session's history works
    child.expect_exact("unknown command 'hello'")
    child.expect_exact("(pfd) ")
    assert "Error" not in child.before and "Traceback" not in child.before
    _quit(child)


def test_without_a_terminal_the_prompt_reads_plain_lines_and_keeps_no_history(tmp_path):
    (tmp_path / "loop.py").write_text(textwrap.dedent(LOOP))
    status, out, err = _cli(["run", "--console", "--break", "slow", "loop.py"], tmp_path,
                            stdin="hello\nq\n")
    assert status == 1
    assert "(pfd) unknown command 'hello'" in out            # the prompt, then the answer
    assert not (tmp_path / ".local").exists()
