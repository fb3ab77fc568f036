"""The pytest plugin (SPEC §6) in inner pytest sessions: --pfd-trace writes only the failing
test's trace and names it in the report; --pfd-break-on pauses with capture suspended
(c continues, q fails that test in one line and the session goes on); --pdb opens at the
user's raising line; the pfd_trace fixture; nothing loaded or recorded without options."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.pytest_plugin.recording import file_name

pytest_plugins = ["pytester"]

GRAPH = '''import numpy as np
import pyfunc_debug as tf

def lookup(x):
    table = {0: 1.0, 1: 2.0}
    return np.float32(table[int(x)])          # RAISES

def halve_log(x):
    return np.log(x).astype(np.float32)

def run(fn, v, dtype):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype, [], name="x")
        y = tf.compat.v1.py_func(fn, [x], tf.float32, name=fn.__name__)
        with tf.compat.v1.Session() as sess:
            return sess.run(y, {x: v})
'''

TESTS = GRAPH + '''
def test_fails():
    print("printed by test_fails")
    assert run(lookup, 2, tf.int32) == 1.0

def test_passes():
    assert run(lookup, 1, tf.int32) == 2.0
'''

RAISE_LINE = next(i for i, line in enumerate(GRAPH.splitlines(), 1) if "# RAISES" in line)


# other plugins off in the inner sessions: faster, and no shared temporary files
QUIET = ("-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:asyncio")


def _env(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), PDBPP_COLORS="0", COLUMNS="120", LINES="40",
               PYTHONUNBUFFERED="1", TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    return env


def _inner(pytester, *args):
    """An inner pytest in this process."""
    return pytester.runpytest(*QUIET, *args)


def _run(pytester, *args, stdin=b""):
    """An inner pytest in a subprocess, its stdin given (the (pfd) prompt reads it)."""
    return pytester.run(sys.executable, "-m", "pytest", *QUIET, *args, stdin=stdin, timeout=60)


def _written(pytester) -> list:
    """The trace files in traces/ (not the failing calls' captured inputs beside them)."""
    return sorted(n for n in os.listdir(pytester.path / "traces")
                  if n.endswith(".jsonl") and ".jsonl." not in n)


# -- --pfd-trace ---------------------------------------------------------------------------

def test_trace_is_written_for_the_failing_test_only_and_named_in_its_report(pytester):
    pytester.makepyfile(test_inner=TESTS)
    result = _inner(pytester, "--pfd-trace=traces")
    result.assert_outcomes(failed=1, passed=1)
    written = _written(pytester)
    assert written == ["test_inner.py__test_fails.jsonl"]
    path = os.path.join("traces", written[0])
    result.stdout.fnmatch_lines([
        "*- pyfunc-debug trace -*",
        f"trace: {path} (* events; replay: pyfunc-debug view {path})",
        "first failing op: 'lookup' (PyFunc) created at test_inner.py:*",
        "error: KeyError: 2  [raised as UnknownError]",
    ])
    events = pfd.load_trace(str(pytester.path / path))
    errors = [e for e in events if type(e) is ev.OpError]
    assert [(e.op, e.op_type, e.error_type) for e in errors] == [("lookup", "PyFunc",
                                                                  "UnknownError")]
    assert "KeyError: 2" in errors[0].message


@pytest.mark.asyncio
async def test_a_trace_file_replays_in_the_viewer(pytester):
    pytester.makepyfile(test_inner=TESTS)
    _inner(pytester, "--pfd-trace=traces", "-k", "fails")
    from pyfunc_debug.tui.launch import view_app
    app = view_app(str(pytester.path / "traces" / "test_inner.py__test_fails.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert [(f.op, f.line) for f in app.model.failures] == [("lookup", "KeyError: 2")]


def test_a_test_that_fails_outside_the_graph_says_so(pytester):
    pytester.makepyfile(test_inner=GRAPH + '''
def test_wrong_value():
    assert run(lookup, 1, tf.int32) == 3.0
''')
    result = _inner(pytester, "--pfd-trace=traces")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["no op failed: the test failed outside the graph's ops"])
    assert os.listdir(pytester.path / "traces") == ["test_inner.py__test_wrong_value.jsonl"]


def test_a_run_quit_at_a_pause_is_not_reported_as_a_failing_op(pytester):
    pytester.makepyfile(test_inner=TESTS)
    result = _run(pytester, "--pfd-trace=traces", "--pfd-break-on=error", "-k", "fails",
                  stdin=b"q\n")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["first failing op: 'lookup' (PyFunc) created at *",
                                 "error: KeyError: 2  [raised as UnknownError]"])


def test_a_run_quit_where_no_op_failed_says_where_it_stopped(pytester):
    pytester.makepyfile(test_inner=GRAPH + '''
def test_nan():
    run(halve_log, -1.0, tf.float32)
''')
    result = _run(pytester, "--pfd-trace=traces", "--pfd-break-on=nan", stdin=b"q\n")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["no op failed; run 1 ended with CancelledError: run aborted "
                                 "from the debugger at op 'halve_log' (PyFunc), after"])


@pytest.mark.parametrize("nodeid, name", [
    ("tests/test_x.py::test_a", "tests_test_x.py__test_a.jsonl"),
    ("test_x.py::TestK::test_b[1-a/b]", "test_x.py__TestK__test_b_1-a_b.jsonl"),
    ("../up.py::test_c", "up.py__test_c.jsonl"),
])
def test_file_names_are_safe(nodeid, name):
    assert file_name(nodeid) == name


def test_long_test_ids_stay_short_and_distinct():
    a, b = "t.py::test_" + "x" * 300 + "[1]", "t.py::test_" + "x" * 300 + "[2]"
    assert len(file_name(a)) <= 130 and file_name(a) != file_name(b)


# -- the pfd_trace fixture -----------------------------------------------------------------

def _sqrt(v):
    with np.errstate(invalid="ignore"):
        return np.sqrt(v)


def test_pfd_trace_fixture_records_the_current_test(pfd_trace):
    x = pfd.compat.v1.placeholder(pfd.float32, [], name="x")
    y = pfd.compat.v1.py_func(_sqrt, [x], pfd.float32, name="root")
    with pfd.compat.v1.Session() as sess:
        sess.run(y, {x: 4.0})
        sess.run(y, {x: -1.0})
    ends = [e for e in pfd_trace.events if type(e) is ev.OpEnd and e.op == "root"]
    assert len(ends) == 2
    assert ends[1].outputs[0].nan == 1      # the NaN producer is visible to asserts


def test_pfd_trace_fixture_is_the_written_recording_under_pfd_trace(pytester):
    pytester.makepyfile(test_inner=GRAPH + '''
def test_uses_fixture(pfd_trace):
    run(lookup, 0, tf.int32)
    assert pfd_trace.op_count == 1
    assert False, "fail on purpose"
''')
    result = _inner(pytester, "--pfd-trace=traces")
    result.assert_outcomes(failed=1)
    events = pfd.load_trace(str(pytester.path / "traces" / "test_inner.py__test_uses_fixture.jsonl"))
    assert sum(type(e) is ev.OpEnd for e in events) == 1


# -- without options -------------------------------------------------------------------------

def test_without_options_nothing_is_recorded_registered_or_imported(pytester, monkeypatch):
    pytester.makepyfile(test_inner=GRAPH + '''
import sys

def test_inert(request):
    pm = request.config.pluginmanager
    assert pm.has_plugin("pyfunc_debug.pytest_plugin") or pm.has_plugin("pyfunc_debug")
    assert not pm.has_plugin("pyfunc_debug-trace") and not pm.has_plugin("pyfunc_debug-break")
    run(lookup, 1, tf.int32)
    from pyfunc_debug import events
    assert not events._bus.subs
    loaded = [m for m in sys.modules if m.split(".")[0] == "textual" or m.startswith("pyfunc_debug.tui")
              or m.startswith("pyfunc_debug.pytest_plugin.")]
    assert loaded == []

def test_fails():
    run(lookup, 2, tf.int32)
''')
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")   # only our plugin, by name
    result = pytester.run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                          "-p", "pyfunc_debug.pytest_plugin", timeout=60)
    result.assert_outcomes(failed=1, passed=1)
    assert "pyfunc-debug trace" not in result.stdout.str()
    assert not (pytester.path / "traces").exists()


def test_the_entry_point_is_installed():
    from importlib.metadata import entry_points
    eps = entry_points(group="pytest11")
    assert [ep.value for ep in eps if ep.name == "pyfunc_debug"] == ["pyfunc_debug_pytest"]


# -- --pfd-break-on --------------------------------------------------------------------------

def test_break_on_error_c_continues_and_the_test_fails_with_its_error(pytester):
    pytester.makepyfile(test_inner=TESTS)
    result = _run(pytester, "--pfd-break-on=error", stdin=b"p\nc\n")
    out = result.stdout.str()
    assert "paused at error in op 'lookup' (PyFunc)" in out
    assert "(pfd) input 0: int32[]" in out                      # p answered on the terminal
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*KeyError: 2*", "*printed by test_fails*"])  # capture resumed


def test_break_on_error_q_fails_that_test_in_one_line_and_the_session_goes_on(pytester):
    pytester.makepyfile(test_inner=TESTS + '''
def test_fails_too():
    run(lookup, 5, tf.int32)
''')
    result = _run(pytester, "--pfd-break-on=error", stdin=b"q\nc\n")
    result.assert_outcomes(failed=2, passed=1)
    out = result.stdout.str()
    first = out.split("_ test_fails _", 1)[1].split("_ test_fails_too _", 1)[0]
    assert "CancelledError: run aborted from the debugger at op 'lookup' (PyFunc), error" in first
    assert "Traceback" not in first and "script_ops" not in first
    assert "KeyError: 5" in out                                 # the next test paused, went on


def test_break_on_nan_pauses_at_the_producer(pytester):
    pytester.makepyfile(test_inner=GRAPH + '''
def test_nan():
    assert np.isnan(run(halve_log, -1.0, tf.float32))
''')
    result = _run(pytester, "--pfd-break-on=nan", stdin=b"p out\nc\n")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "paused after op 'halve_log' (PyFunc)" in out and "when=nan_producer" in out
    assert "(pfd) output 0: float32[] nan=1\nnp.float32(nan)" in out


def test_a_breakpoint_added_at_the_prompt_holds_for_the_later_tests_until_cleared(pytester):
    """`b GLOB` at a paused test's prompt went with that test: the next test did not pause."""
    pytester.makepyfile(test_inner=GRAPH + '''
def test_fails():
    run(lookup, 2, tf.int32)

def test_logs():
    assert run(halve_log, 4.0, tf.float32) > 0

def test_logs_again():
    assert run(halve_log, 4.0, tf.float32) > 0
''')
    result = _run(pytester, "--pfd-break-on=error", stdin=b"b halve_log\nc\nbl\ncl 2\nc\n")
    result.assert_outcomes(failed=1, passed=2)
    out = result.stdout.str()
    assert "added breakpoint 2: op=halve_log, for the rest of this pytest session " \
           "(cl 2 removes it)" in out
    # test_logs paused there; the command line's breakpoint is in its list once
    assert out.count("paused before op 'halve_log' (PyFunc)") == 1
    listed = out.split("(pfd) ")[3]
    assert listed.split("\n")[:2] == ["  <breakpoint 1: on_error, hits=0>",
                                      "  <breakpoint 2: op=halve_log, hits=1>"]
    assert "removed breakpoint 2: op=halve_log" in out   # and test_logs_again ran on


def test_break_on_error_in_a_pty_c_then_q(pytester, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    from test_tui_e2e import Screen
    pytester.makepyfile(test_inner=TESTS + '''
def test_fails_too():
    run(lookup, 5, tf.int32)
''')
    child = pexpect.spawn(sys.executable, ["-m", "pytest", *QUIET, "--pfd-break-on=error",
                                           "test_inner.py"],
                          env=_env(tmp_path), cwd=str(pytester.path), dimensions=(40, 120),
                          encoding="utf-8", timeout=60)
    screen = Screen(child)
    try:
        screen.wait_for(r"paused at error in op 'lookup'[\s\S]*\(pfd\) ")
        screen.send("c\r")
        screen.wait_for(r"KeyError: 5[\s\S]*\(pfd\) ")         # the next failing test pauses
        screen.send("q\r")
        out = screen.wait_for(r"2 failed, 1 passed")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close()
    assert "CancelledError: run aborted from the debugger at op 'lookup'" in out


# -- --pdb and post-mortem -----------------------------------------------------------------

def test_pdb_opens_at_the_users_raising_line(pytester, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    from test_tui_e2e import Screen
    pytester.makepyfile(test_inner=TESTS)
    child = pexpect.spawn(sys.executable, ["-m", "pytest", *QUIET, "--pdb", "-k", "fails",
                                           "test_inner.py"],
                          env=_env(tmp_path), cwd=str(pytester.path), dimensions=(40, 120),
                          encoding="utf-8", timeout=60)
    screen = Screen(child)
    try:
        out = screen.wait_for(r"\(Pdb\+*\) ")
        assert f"test_inner.py({RAISE_LINE})lookup()" in out
        assert "UnknownError" in out                              # TF's class in the report
        screen.send("p x, table\r")
        screen.wait_for(r"\(np\.int32\(2\), \{0: 1\.0, 1: 2\.0\}\)")   # the user's locals
        screen.send("q\r")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close()


def _last(tb):
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb


@pytest.mark.parametrize("wrap", ["py_func", "numpy_function", "py_function"])
def test_the_errors_traceback_ends_at_the_users_raise(wrap):
    def lookup(x):
        table = {0: 1.0}
        return np.float32(table[int(x)])
    raise_line = lookup.__code__.co_firstlineno + 2
    x = pfd.compat.v1.placeholder(pfd.int32, [], name="x")
    y = getattr(pfd.compat.v1, wrap, None) or getattr(pfd, wrap)
    y = y(lookup, [x], pfd.float32, name="lookup")
    with pfd.compat.v1.Session() as sess, pytest.raises(pfd.errors.UnknownError) as info:
        sess.run(y, {x: 2})
    err = info.value
    for tb in (err.__traceback__, err.original_traceback):   # pdb.post_mortem(tb) stops here
        last = _last(tb)
        assert (last.tb_frame.f_code, last.tb_lineno) == (lookup.__code__, raise_line)
    assert "Detected at node 'lookup'" in str(err) and "KeyError: 2" in str(err)
    assert isinstance(err.__cause__, KeyError)


def test_the_plugin_never_imports_the_ui():
    code = ("import sys, pyfunc_debug.pytest_plugin.recording, pyfunc_debug.pytest_plugin.breaking; "
            "bad = [m for m in sys.modules if m.split('.')[0] == 'textual' or m.startswith('pyfunc_debug.tui')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# -- start-up cost: the entry point is light (SPEC 5b) -----------------------------------------

HEAVY = ("numpy", "pyfunc_debug", "pdbpp", "textual")   # not pdb: pytest's run imports it
LIGHT = dict(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")   # only the plugins named with -p


def _light_run(pytester, monkeypatch, *args):
    """An inner pytest in a subprocess loading no plugin but those named (fast, and nothing
    else installed can import numpy behind our back)."""
    for name, value in LIGHT.items():
        monkeypatch.setenv(name, value)
    return pytester.run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args,
                        timeout=120)


def test_importing_the_entry_point_adds_only_itself():
    code = ("import sys, pytest; before = set(sys.modules); import pyfunc_debug_pytest; "
            "print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['pyfunc_debug_pytest']"


def test_a_run_without_options_imports_no_engine(pytester, monkeypatch):
    pytester.makepyfile(test_inner=f'''
import sys

def test_light(request, pytestconfig):
    assert request.config.pluginmanager.has_plugin("pyfunc_debug")
    assert pytestconfig.getoption("pfd_trace") is None      # the options exist, unused
    heavy = [m for m in sys.modules if m.split(".")[0] in {HEAVY!r}]
    assert heavy == []
''')
    result = _light_run(pytester, monkeypatch, "-p", "pyfunc_debug")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("spelling", [
    ("-p", "pyfunc_debug", "-p", "pyfunc_debug.pytest_plugin"),
    ("-p", "pyfunc_debug.pytest_plugin", "-p", "pyfunc_debug"),
    ("-p", "pyfunc_debug.pytest_plugin", "conftest"),
])
def test_the_alias_and_the_entry_point_register_the_plugin_once(pytester, monkeypatch, spelling):
    if spelling[-1] == "conftest":
        pytester.makeconftest('pytest_plugins = ["pyfunc_debug.pytest_plugin"]')
        spelling = spelling[:-1]
    pytester.makepyfile(test_inner=GRAPH + '''
import pyfunc_debug_pytest

def test_once(request, pfd_trace):
    pm = request.config.pluginmanager
    assert [name for name, p in pm.list_name_plugin() if p is pyfunc_debug_pytest] == ["pyfunc_debug"]
    run(lookup, 2, tf.int32)
''')
    result = _light_run(pytester, monkeypatch, *spelling, "--pfd-trace=traces")
    result.assert_outcomes(failed=1)
    assert _written(pytester) == ["test_inner.py__test_once.jsonl"]
    listed = _light_run(pytester, monkeypatch, *spelling, "--fixtures")
    assert listed.stdout.str().count("pfd_trace") == 1


def test_the_help_shows_an_example_for_each_option(pytester):
    text = " ".join(_inner(pytester, "--help").stdout.str().split())   # argparse wraps lines
    assert "Example: pytest --pfd-trace=pfd-traces" in text
    assert "Example: pytest --pfd-break-on=error -x tests/test_model.py" in text


# -- a bad --pfd-trace DIR is a usage error -------------------------------------------------

@pytest.mark.parametrize("where, why", [
    ("a_file", "it exists and is not a directory"),
    ("a_file/traces", "a_file is not a directory"),
    ("/proc/pfd-no/traces", "cannot create entries in /proc"),
    ("", "--pfd-trace needs a directory"),
])
def test_an_unusable_trace_dir_is_a_usage_error_before_any_test(pytester, where, why):
    # paths, not permission bits: the suite may run as root, for whom chmod stops nothing
    (pytester.path / "a_file").write_text("not a directory")
    pytester.makepyfile(test_inner="def test_never():\n    raise AssertionError('ran')\n")
    result = _inner(pytester, f"--pfd-trace={where}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert why in err and (not where or f"--pfd-trace={where}: cannot write traces to" in err)
    assert "ran" not in result.stdout.str()


def test_a_passing_run_leaves_no_trace_dir_behind(pytester):
    pytester.makepyfile(test_inner=TESTS)
    _inner(pytester, "--pfd-trace=new/traces", "-k", "passes").assert_outcomes(passed=1)
    assert not (pytester.path / "new").exists()
    assert not [p for p in os.listdir(pytester.path) if p.startswith(".pfd")]   # the check's probe


def test_a_tests_earlier_files_go_when_it_fails_elsewhere_or_passes(pytester, monkeypatch):
    """A test that failed in an earlier session left that call's captured inputs (.npy)
    in DIR when it failed at another call, and all its files when it passed: replay
    found the stale call. Other tests' files and the user's stay."""
    from pyfunc_debug.trace.faults import load_faults
    pytester.makepyfile(test_inner=GRAPH + '''
import os

def test_changes():
    for v in os.environ["PFD_INPUTS"].split(","):
        run(lookup, int(v), tf.int32)

def test_fails_too():
    run(lookup, 5, tf.int32)
''')
    traces = pytester.path / "traces"
    changes = traces / "test_inner.py__test_changes.jsonl"

    def files():
        return sorted(os.fspath(p.relative_to(traces)) for p in traces.rglob("*"))

    monkeypatch.setenv("PFD_INPUTS", "2")
    _inner(pytester, "--pfd-trace=traces").assert_outcomes(failed=2)
    (traces / "notes.txt").write_text("mine")
    others = [f for f in files() if not f.startswith("test_inner.py__test_changes")]

    monkeypatch.setenv("PFD_INPUTS", "1,3")   # fails at its second run's call now
    _inner(pytester, "--pfd-trace=traces", "-k", "changes").assert_outcomes(failed=1)
    _, calls = load_faults(changes)
    assert [c.inputs for c in calls] == [[3]]
    values = {f"{spec['key']}.npy" for c in calls for spec in c["inputs"]}
    assert set(os.listdir(f"{changes}.values")) == values       # no value of the old call

    monkeypatch.setenv("PFD_INPUTS", "1")     # passes now
    _inner(pytester, "--pfd-trace=traces", "-k", "changes").assert_outcomes(passed=1)
    assert files() == others and "notes.txt" in others


# -- pytest-xdist ------------------------------------------------------------------------------

def test_pfd_trace_under_xdist_each_worker_writes_its_failures(pytester, monkeypatch):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_inner=TESTS + '''
def test_fails_too():
    run(lookup, 5, tf.int32)
''')
    result = _light_run(pytester, monkeypatch, "-p", "xdist", "-p", "pyfunc_debug", "-n", "2",
                        "--pfd-trace=traces")
    result.assert_outcomes(failed=2, passed=1)
    written = _written(pytester)
    assert written == ["test_inner.py__test_fails.jsonl", "test_inner.py__test_fails_too.jsonl"]
    for name in written:     # the section came back to the controller with the report
        path = os.path.join("traces", name)
        result.stdout.fnmatch_lines([f"trace: {path} (* events; replay: pyfunc-debug view {path})"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_test_passing_without_xdist_removes_what_it_wrote_under_xdist(pytester, monkeypatch):
    """Under xdist a parameter id with a replaced character names its file with a digest;
    a run without xdist left that file behind when the test passed."""
    pytest.importorskip("xdist")
    pytester.makepyfile(test_inner=GRAPH + '''
import os
import pytest

@pytest.mark.parametrize("key", ["x/y"])
def test_param(key):
    run(lookup, int(os.environ["PFD_INPUT"]), tf.int32)
''')
    plugins = ("-p", "pyfunc_debug", "--pfd-trace=traces")
    monkeypatch.setenv("PFD_INPUT", "2")
    _light_run(pytester, monkeypatch, "-p", "xdist", "-n", "1", *plugins) \
        .assert_outcomes(failed=1)
    assert _written(pytester) == [file_name("test_inner.py::test_param[x/y]", unique=True)]
    monkeypatch.setenv("PFD_INPUT", "1")
    _light_run(pytester, monkeypatch, *plugins).assert_outcomes(passed=1)
    assert os.listdir(pytester.path / "traces") == []


def test_a_passing_test_does_not_remove_the_file_of_one_whose_name_sanitizes_alike(
        pytester, monkeypatch):
    """``[x/y]`` failed in one session; ``[x_y]`` passed in the next, run alone: it took
    the same file name and removed the other test's trace."""
    pytester.makepyfile(test_inner=GRAPH + '''
import os
import pytest

@pytest.mark.parametrize("key", ["x/y", "x_y"])
def test_param(key):
    run(lookup, 2 if key == "x/y" else 1, tf.int32)
''')
    plugins = ("-p", "pyfunc_debug", "--pfd-trace=traces")
    _light_run(pytester, monkeypatch, *plugins, "-k", "x/y").assert_outcomes(failed=1)
    written = _written(pytester)
    _light_run(pytester, monkeypatch, *plugins, "-k", "x_y").assert_outcomes(passed=1)
    assert _written(pytester) == written == [file_name("test_inner.py::test_param[x/y]",
                                                       unique=True)]


def test_break_on_is_refused_under_xdist(pytester, monkeypatch):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_inner="def test_never():\n    raise AssertionError('ran')\n")
    result = _light_run(pytester, monkeypatch, "-p", "xdist", "-p", "pyfunc_debug", "-n", "2",
                        "--pfd-break-on=error")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --pfd-break-on cannot be used with xdist (-n): "
                                 "the workers have no terminal; run without -n*"])
    assert "ran" not in result.stdout.str()


def test_break_on_with_xdist_installed_but_not_distributing_runs(pytester, monkeypatch):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_inner="def test_passes():\n    pass\n")
    result = _light_run(pytester, monkeypatch, "-p", "xdist", "-p", "pyfunc_debug", "-n", "0",
                        "--pfd-break-on=error")
    result.assert_outcomes(passed=1)


# -- the benchmark stays runnable ------------------------------------------------------------

def test_the_startup_benchmark_runs_at_a_tiny_size():
    script = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", "pytest_plugin.py")
    done = subprocess.run([sys.executable, script, "--isolated", "--rounds", "1", "--suite", "1",
                           "--suite-rounds", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "plugin vs without, CPU (median per round): " in done.stdout
    assert "import of the entry module after pytest: " in done.stdout


def test_a_nan_test_names_the_op_that_made_it(pytester):
    """It said "no op failed" and then "step into the call of op 'halve_log' that went
    wrong", naming neither the NaN nor where it came from."""
    pytester.makepyfile(test_inner=GRAPH + '''
def test_nan():
    assert not np.isnan(run(halve_log, -1.0, tf.float32))
''')
    result = _inner(pytester, "--pfd-trace=traces")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "no op failed: the test failed outside the graph's ops",
        "first op that went wrong: 'halve_log' (PyFunc) created at test_inner.py:*",
        "diagnostic: op 'halve_log' (PyFunc) made 1 NaN in output 0 from finite inputs*",
        "step into the call of op 'halve_log' that went wrong: pyfunc-debug replay * "
        "--op halve_log --pdb"])


def test_a_function_defined_in_the_test_gets_no_replay_command_it_cannot_run(pytester):
    pytester.makepyfile(test_inner=GRAPH + '''
def test_nested():
    def parse(x):
        raise KeyError(3)
    run(parse, 1.0, tf.float32)
''')
    result = _inner(pytester, "--pfd-trace=traces")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "op 'parse': its function test_nested.<locals>.parse is a lambda or is defined "
        "inside another function: replay cannot import it*"])
    assert "--pdb" not in result.stdout.str()   # no command that replay would refuse


def test_under_xdist_parameter_ids_that_sanitize_alike_get_distinct_files():
    a, b = "t.py::test_c[x/y]", "t.py::test_c[x_y]"
    assert file_name(a, unique=True) != file_name(b, unique=True)
    assert file_name(b, unique=True) == file_name(b) == "t.py__test_c_x_y.jsonl"


def test_breakpoint_under_break_on_talks_on_the_terminal_not_into_the_capture(pytester):
    """Under --pfd-break-on, breakpoint() (the debugger's hook) showed its prompts but
    pdb's output went into the test's captured stdout: `p x` printed nothing."""
    pytester.makepyfile(test_inner='''
def test_bp():
    x = 41
    breakpoint()
    assert x == 42
''')
    result = _run(pytester, "--pfd-break-on=error", stdin=b"p x\nc\n")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    before = out.split("= FAILURES =")[0]
    assert "test_bp()" in before and "41" in before, out
    assert "Captured stdout call" not in out
