"""Trace files: Chrome JSON for Perfetto, JSONL written as the run goes, load_trace, the CLI."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.trace.jsonl import TraceFormatError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_demo_like(sess_kwargs=None, runs=2):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[None], name="x")
        a = tf.numpy_function(lambda v: v * np.float32(2), [x], tf.float32, name="double")
        b = tf.numpy_function(lambda v: v + np.float32(1), [x], tf.float32, name="inc")
        c = tf.py_function(lambda p, q: tf.reduce_sum(p * q), [a, b], tf.float32, name="dot")
        bad = tf.numpy_function(lambda v: v[10], [x], tf.float32, name="bad")
    with tf.Session(graph=g, **(sess_kwargs or {})) as sess:
        for _ in range(runs):
            sess.run(c, {x: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.UnknownError):
            sess.run(bad, {x: [1.0]})


def test_chrome_json_is_structurally_valid(tmp_path):
    path = tmp_path / "run.json"
    with tf.trace(path):
        _run_demo_like()
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    xs = [e for e in events if e["ph"] == "X"]
    assert xs and all({"name", "ts", "dur", "pid", "tid"} <= e.keys() for e in xs)
    assert all(e["dur"] >= 0 for e in xs)
    meta = {e["name"] for e in events if e["ph"] == "M"}
    assert {"process_name", "thread_name"} <= meta
    op_slices = [e for e in xs if e["cat"] == "op"]
    assert [e["name"] for e in op_slices].count("dot") == 2
    dot = next(e for e in op_slices if e["name"] == "dot")
    assert dot["args"]["type"] == "EagerPyFunc" and dot["args"]["outputs"]
    assert dot["args"]["source"].startswith(__file__)
    # eager ops inside the py_function sit inside its slice, on the same track
    children = [e for e in xs if e["cat"] == "eager" and e["args"]["run_id"] == dot["args"]["run_id"]]
    assert {e["name"] for e in children} == {"Mul", "Sum"}
    for child in children:
        assert child["tid"] == dot["tid"]
        assert dot["ts"] <= child["ts"] and child["ts"] + child["dur"] <= dot["ts"] + dot["dur"] + 1e-3
    # flows: every start has its finish, from producer to consumer
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    finishes = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and starts.keys() == finishes.keys()
    assert len(starts) == 4  # double->dot, inc->dot, in each of two runs
    instants = [e for e in events if e["ph"] == "i"]
    assert [e["name"] for e in instants] == ["OpError: bad"]
    assert "IndexError" in instants[0]["args"]["message"]


def test_concurrent_ops_are_on_separate_tracks(tmp_path):
    path = tmp_path / "par.json"
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        outs = [tf.numpy_function(lambda v, i=i: (time.sleep(0.05), v + np.float32(i))[1],
                                  [x], tf.float32, name=f"branch{i}") for i in range(2)]
    with tf.trace(path):
        with tf.Session(graph=g, inter_op_threads=2) as sess:
            sess.run(outs, {x: 1.0})
    doc = json.loads(path.read_text())
    tids = {e["tid"] for e in doc["traceEvents"] if e["ph"] == "X" and e["name"].startswith("branch")}
    assert len(tids) == 2
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert any(n.startswith("pfd-inter-op") for n in names)


def test_jsonl_round_trip_with_full_values(tmp_path):
    path = tmp_path / "run.jsonl"
    with tf.trace(path, capture="full") as tr:
        _run_demo_like()
    loaded = tf.load_trace(path)
    assert loaded.header["format"] == "pyfunc-debug-trace" and loaded.header["version"] == 3
    assert len(loaded) == len(tr.events)
    for mine, theirs in zip(tr.events, loaded):
        assert type(mine) is type(theirs)
        for name in mine._fields:
            a, b = getattr(mine, name), getattr(theirs, name)
            if name in ("inputs", "outputs"):
                for sa, sb in zip(a, b):
                    assert sa._replace(value=None) == sb._replace(value=None)
                    if sa.value is not None:
                        np.testing.assert_array_equal(sa.value, sb.value)
                        assert sb.value is not None
            else:
                assert a == b, name
    assert os.path.isdir(f"{path}.values")


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "run.jsonl"
    with tf.trace(path):
        _run_demo_like(runs=1)
    lines = path.read_text().splitlines(keepends=True)
    lines[3] = "{not json\n"
    path.write_text("".join(lines))
    with pytest.raises(TraceFormatError, match=rf"{path.name}:4: malformed trace line"):
        tf.load_trace(path)


def test_not_a_trace_file(tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(TraceFormatError, match="other.jsonl:1: not a pyfunc-debug-trace"):
        tf.load_trace(path)


def test_truncated_last_line_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "run.jsonl"
    with tf.trace(path):
        _run_demo_like(runs=1)
    text = path.read_text()
    path.write_text(text + '{"type": "OpStart", "seq": 99')
    with pytest.warns(RuntimeWarning, match="truncated last line"):
        loaded = tf.load_trace(path)
    assert len(loaded) == len(text.splitlines()) - 1


def test_load_trace_never_runs_code(tmp_path):
    path = tmp_path / "evil.jsonl"
    path.write_text('{"format": "pyfunc-debug-trace", "version": 1}\n'
                    '{"type": "__import__(\'os\').system(\'touch x\')"}\n')
    with pytest.raises(TraceFormatError, match="evil.jsonl:2"):
        tf.load_trace(path)


def test_kill_minus_9_leaves_a_loadable_prefix(tmp_path):
    path = tmp_path / "killed.jsonl"
    script = tmp_path / "slow.py"
    script.write_text(textwrap.dedent(f"""
        import time, numpy as np, pyfunc_debug as tf
        g = tf.Graph()
        with g.as_default():
            x = tf.compat.v1.placeholder(tf.float32)
            y = tf.numpy_function(lambda v: (time.sleep(0.01), v)[1], [x], tf.float32)
        with tf.trace({str(path)!r}):
            with tf.Session(graph=g) as s:
                while True:
                    s.run(y, {{x: 1.0}})
    """))
    proc = subprocess.Popen([sys.executable, str(script)])
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            if path.exists() and path.read_text().count("\n") > 40:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the recording subprocess wrote nothing")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = tf.load_trace(path)
    assert len(loaded) >= 40
    assert type(loaded[0]) is ev.RunStart
    assert sum(type(e) is ev.RunEnd for e in loaded) >= 5


def test_trace_command_writes_and_reports(tmp_path):
    out = tmp_path / "sinh.json"
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "trace", "-o", str(out),
                        os.path.join(ROOT, "examples", "py_func_sinh.py")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "1.1752012" in r.stdout
    assert f"wrote 4 events (1 op run in 1 run) to {out}" in r.stderr
    doc = json.loads(out.read_text())
    assert [e["name"] for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "op"] == ["PyFunc"]


def test_trace_command_passes_script_arguments_and_exit_status(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys\nprint(sys.argv[1:])\nsys.exit(3)\n")
    out = tmp_path / "t.jsonl"
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "trace", "-o", str(out),
                        "--capture", "none", str(script), "a", "--flag", "-o", "x"],
                       capture_output=True, text=True)
    assert r.returncode == 3 and "['a', '--flag', '-o', 'x']" in r.stdout  # all the script's
    assert tf.load_trace(out).header["capture"] == "none"


def test_trace_command_rejects_unknown_suffix(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "trace", "-o", "out.txt",
                        os.path.join(ROOT, "examples", "py_func_sinh.py")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "must end in .json" in r.stderr


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_trace_command_counts_the_op_runs_that_failed(tmp_path, suffix):
    """An op that raised ran too: "0 op runs in 1 run" was said of a run whose one op failed."""
    script = tmp_path / "crash.py"
    script.write_text("import numpy as np\nimport pyfunc_debug as tf\n"
                      "def boom(x):\n    raise KeyError(3)\n"
                      "x = tf.compat.v1.placeholder(tf.float32)\n"
                      "y = tf.numpy_function(boom, [x], tf.float32, name='boom')\n"
                      "with tf.Session() as s:\n    s.run(y, {x: np.float32(1)})\n")
    out = tmp_path / f"crash{suffix}"
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "trace", "-o", str(out),
                        str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert f"wrote 4 events (1 op run, 1 failed, in 1 run) to {out}" in r.stderr, r.stderr


def test_a_torn_trace_is_one_warning_line_naming_the_command(tmp_path):
    """Our own warnings read as one line of the command, not Python's two quoting our
    source ("…/cli/traces.py:27: RuntimeWarning: … / trace = load_trace(args.trace)")."""
    path = tmp_path / "t.jsonl"
    with tf.trace(path), tf.Session() as sess:
        x = tf.compat.v1.placeholder(tf.float32)
        sess.run(tf.numpy_function(lambda v: v + 1, [x], tf.float32), {x: np.float32(1)})
    data = path.read_bytes()
    path.write_bytes(data[:-20])   # the last line cut
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "export", str(path), "-o", "-"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"pyfunc-debug export: warning: {path}:") and \
        "skipped a truncated last line" in lines[0]
    assert "RuntimeWarning" not in r.stderr and "load_trace(" not in r.stderr
