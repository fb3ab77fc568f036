"""The ``pyfunc-debug`` command line."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pyfunc_debug import demo
from pyfunc_debug.cli import main


def test_help_lists_the_commands(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_demo_runs_three_runs_with_nan_and_error(capsys):
    assert main(["demo", "--print"]) == 0
    out = capsys.readouterr().out
    assert "run 1: loss=" in out and "has_nan=False" in out
    assert "run 2: loss=np.float32(nan) has_nan=True" in out
    assert "run 3: InvalidArgumentError at op 'validate' (PyFunc)" in out
    assert "demo.py:" in out  # the op's creation site is shown


def test_demo_results_are_real():
    results = demo.run(out=lambda line: None)
    assert np.isfinite(results[0]["loss"]) and not results[0]["has_nan"]
    assert results[1]["has_nan"] == 1
    assert results[2].op.name == "validate"


def test_python_dash_m_works():
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "--help"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and "demo" in r.stdout



# -- help: every command says what it does and shows examples ------------------------------

COMMANDS = ("demo", "run", "trace", "view", "diff", "export", "attach")


def test_main_help_lists_each_command_with_one_line_and_three_examples():
    from pyfunc_debug.cli import build_parser
    text = build_parser().format_help()
    listed = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    for name in COMMANDS:
        assert f"\n  {name} " in "\n" + listed, name
    examples = text.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(examples) == 3 and all(e.startswith("  pyfunc-debug ") for e in examples)
    assert 'eval "$(pyfunc-debug --print-completion bash)"' in text


def test_every_command_help_has_examples_and_a_description(capsys):
    for name in COMMANDS:
        with pytest.raises(SystemExit) as exit_:
            main([name, "--help"])
        assert exit_.value.code == 0
        text = capsys.readouterr().out
        assert "\nexamples:\n" in text, name
        body = text.split("\nexamples:\n", 1)[1]
        assert f"  pyfunc-debug {name} " in body or f"pyfunc-debug {name}\n" in body, name
        description = text.split("\n\n", 2)[1]
        assert not description.startswith(("options:", "positional")), (name, description)


def test_script_commands_help_keeps_python_s_usage(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["trace", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: pyfunc-debug trace -o OUT.json|OUT.jsonl")
    assert "SCRIPT|-m MODULE [ARGS...]" in text


def test_q_in_the_programs_own_breakpoint_aborts_with_one_line(tmp_path):
    """``breakpoint()`` in the user's code, then ``q``: one line naming the user's line,
    status 1, no ``BdbQuit`` traceback (at top level and inside a wrapped function)."""
    import subprocess
    import sys
    (tmp_path / "top.py").write_text("x = 1\nbreakpoint()\nprint('after')\n")
    (tmp_path / "inop.py").write_text(
        "import pyfunc_debug as tf\n"
        "def f(v):\n"
        "    breakpoint()\n"
        "    return v\n"
        "x = tf.compat.v1.placeholder(tf.float32)\n"
        "y = tf.compat.v1.py_func(f, [x], tf.float32, name='f')\n"
        "with tf.compat.v1.Session() as s:\n"
        "    print(s.run(y, {x: 1.0}))\n")
    for script, line in (("top.py", 3), ("inop.py", 4)):
        r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "run", "--console", script],
                           input="q\n", capture_output=True, text=True, cwd=tmp_path,
                           timeout=120)
        assert r.returncode == 1, r.stderr
        assert "Traceback" not in r.stderr and "BdbQuit" not in r.stderr, r.stderr
        assert f"run aborted (q in pdb) at {script}:" in r.stderr, r.stderr
        assert "\nafter" not in r.stdout    # the script did not go on (pdb shows the line)


def test_a_script_run_or_traced_sees_its_own_path_as_python_gives_it(tmp_path):
    """``python sub/s.py`` makes ``__file__`` and ``co_filename`` absolute (3.9+); ``run`` and
    ``trace`` gave them as typed, so a script that changed directory then read a file
    beside itself failed only under pyfunc-debug. Screens show a source relative to the
    working directory when it lies below it (the docs' examples), else whole."""
    import subprocess
    import sys
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.txt").write_text("42")
    (tmp_path / "sub" / "s.py").write_text(
        "import os\n"
        "import pyfunc_debug as tf\n"
        "here = os.path.dirname(__file__)\n"
        "os.chdir(os.path.expanduser('~'))\n"
        "print('isabs', os.path.isabs(__file__), os.path.isabs(tf.Graph.__init__.__code__"
        ".co_filename), os.path.isabs((lambda: 0).__code__.co_filename))\n"
        "print('data', open(os.path.join(here, 'data.txt')).read())\n"
        "x = tf.compat.v1.placeholder(tf.float32)\n"
        "y = tf.compat.v1.py_func(lambda v: v * 2, [x], tf.float32, name='f')\n"
        "with tf.compat.v1.Session() as s:\n"
        "    print(s.run(y, {x: 1.0}))\n")
    for cmd in (["run", "--console", "--break", "f"], ["trace", "-o", str(tmp_path / "t.jsonl")]):
        r = subprocess.run([sys.executable, "-m", "pyfunc_debug", *cmd, "sub/s.py"],
                           input="c\n", capture_output=True, text=True, cwd=tmp_path,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        assert "isabs True True True" in r.stdout and "data 42" in r.stdout, r.stdout
        if cmd[0] == "run":   # the script left the folder: its source is shown whole
            assert f"paused before op 'f' (PyFunc) created at {tmp_path}/sub/s.py:8" in r.stdout


@pytest.mark.parametrize("computes", [False, True])
def test_trace_suggests_jax_only_to_a_script_that_computed_with_it(tmp_path, computes):
    """TensorFlow 2.21 imports JAX when it is installed: a TF script that recorded nothing
    must not be told it imported JAX; a script that computed with JAX is told of --jax."""
    pytest.importorskip("jax")
    if not computes:
        pytest.importorskip("tensorflow")
    script = tmp_path / "s.py"
    script.write_text("import jax.numpy as jnp\nprint(float(jnp.ones(3).sum()))\n" if computes
                      else "import tensorflow\n")
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "trace",
                        *([] if computes else ["--tf"]), "-o", str(tmp_path / "t.jsonl"),
                        str(script)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "wrote 0 events" in r.stderr
    assert ("the script imported JAX: add --jax" in r.stderr) is computes, r.stderr
