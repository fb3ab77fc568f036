"""Chrome traces obey Perfetto's JSON-import rules: every example, threaded and interrupted runs."""
from __future__ import annotations

import json
import pathlib
import threading

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.script import Program, run_program
from pyfunc_debug.trace.chrome import to_chrome, write_chrome

from perfetto_rules import check_file, problems

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _every_start_closed(events) -> None:
    open_ops = {}
    for e in events:
        key = (e.thread, e.run_id, e.op, e.parent)
        if type(e) is ev.OpStart:
            open_ops[key] = open_ops.get(key, 0) + 1
        elif type(e) in (ev.OpEnd, ev.OpError):
            open_ops[key] -= 1
    assert not {k: n for k, n in open_ops.items() if n}, "OpStart without OpEnd/OpError"


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")
                                           if p.name != "__init__.py"))  # the package's
def test_every_example_imports_cleanly(script, tmp_path, capsys):
    if script == "dask_pipeline.py":
        pytest.importorskip("dask.distributed", reason="the distributed extra is not installed")
    path = tmp_path / "trace.json"
    with tf.trace(path) as tr:
        assert run_program(Program(path=str(EXAMPLES / script))).status == 0
    counts = check_file(path)
    assert counts["slices"] >= tr.op_count > 0
    assert counts["threads"] == len(tr.thread_names)
    _every_start_closed(tr.events)


def _branches(n=6, name="branch"):
    x = tf.compat.v1.placeholder(tf.float32, name="x")
    outs = [tf.numpy_function(lambda v, i=i: v + np.float32(i), [x], tf.float32,
                              name=f"{name}{i}") for i in range(n)]
    total = tf.py_function(lambda *vs: tf.add(vs[0], vs[1]), outs[:2], tf.float32, name="total")
    return x, outs, total


def test_threaded_runs(tmp_path):
    path = tmp_path / "par.json"
    g = tf.Graph()
    with g.as_default():
        x, outs, total = _branches()
    with tf.trace(path) as tr:
        with tf.Session(graph=g, inter_op_threads=4) as sess:
            for _ in range(5):
                sess.run([outs, total], {x: 1.0})
    counts = check_file(path)
    assert counts["threads"] >= 2 and counts["flows"] >= 2
    doc = json.loads(path.read_text())
    tids = {e["tid"] for e in doc["traceEvents"] if e["ph"] == "X"}
    assert tids == set(range(1, len(tids) + 1))  # numbered 1..N
    idents = {e["args"]["ident"] for e in doc["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name"}
    assert idents == set(tr.thread_names)


def _interrupting_graph(exc_type, eager=False):
    x = tf.compat.v1.placeholder(tf.float32, name="x")
    ok = tf.numpy_function(lambda v: v * np.float32(2), [x], tf.float32, name="ok")

    def stop(v):
        if eager:
            tf.multiply(v, v)  # an eager op runs before the interrupt
        raise exc_type()

    if eager:
        bad = tf.py_function(stop, [ok], tf.float32, name="stopper")
    else:
        bad = tf.numpy_function(stop, [ok], tf.float32, name="stopper")
    return x, bad


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("threads", [None, 2])
@pytest.mark.parametrize("eager", [False, True])
def test_interrupted_runs_close_every_op(exc_type, threads, eager, tmp_path):
    path = tmp_path / "int.json"
    g = tf.Graph()
    with g.as_default():
        x, bad = _interrupting_graph(exc_type, eager)
    with tf.trace(path) as tr:
        with tf.Session(graph=g, inter_op_threads=threads) as sess:
            with pytest.raises(exc_type):
                sess.run(bad, {x: 1.0})
    _every_start_closed(tr.events)
    errors = [e for e in tr.events if type(e) is ev.OpError]
    assert "stopper" in [e.op for e in errors]
    assert all(e.error_type == exc_type.__name__ for e in errors)
    check_file(path)
    doc = json.loads(path.read_text())
    assert not [e for e in doc["traceEvents"] if e.get("args", {}).get("unfinished")]


def test_interrupt_under_the_debugger_closes_the_op(tmp_path):
    path = tmp_path / "dbg.json"
    g = tf.Graph()
    with g.as_default():
        x, bad = _interrupting_graph(KeyboardInterrupt)
    dbg = tf.debug.Debugger(on_pause=lambda pause: "continue")
    dbg.break_on(op="stopper")
    with tf.trace(path) as tr, dbg:
        with tf.Session(graph=g) as sess:
            with pytest.raises(KeyboardInterrupt):
                sess.run(bad, {x: 1.0})
    _every_start_closed(tr.events)
    assert [e.op for e in tr.events if type(e) is ev.OpError] == ["stopper"]
    check_file(path)


def test_run_slices_enclose_their_ops_by_the_clock(tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = x
        for i in range(20):
            y = tf.numpy_function(lambda v: v + np.float32(1), [y], tf.float32, name=f"s{i}")
    with tf.trace() as tr:
        with tf.Session(graph=g) as sess:
            sess.run(y, {x: 0.0})
    start = next(e for e in tr.events if type(e) is ev.RunStart)
    end = next(e for e in tr.events if type(e) is ev.RunEnd)
    assert end.t_ns - end.duration_ns == start.t_ns  # one reading for the start
    ops = [e for e in tr.events if type(e) is ev.OpEnd]
    assert start.t_ns <= min(e.t_ns - e.duration_ns for e in ops)
    assert max(e.t_ns for e in ops) <= end.t_ns


def test_a_partial_recording_still_nests():
    """Events cut off mid-run (a window, a UI export): open slices are closed, not dropped."""
    g = tf.Graph()
    with g.as_default():
        x, outs, total = _branches(3)
    with tf.trace() as tr:
        with tf.Session(graph=g) as sess:
            sess.run(total, {x: 1.0})
    cut = [e for e in tr.events if type(e) is not ev.RunEnd]
    cut = cut[:-1]  # the last OpEnd too
    doc = to_chrome(cut, thread_names=tr.thread_names)
    assert problems(doc) == []
    assert any(e.get("args", {}).get("unfinished") for e in doc["traceEvents"])
    assert problems(to_chrome(tr.events[3:])) == []  # starts missing: ends place themselves


def test_written_with_dumps_not_the_streaming_encoder(tmp_path, monkeypatch):
    def slow(*a, **k):
        raise AssertionError("json.dump's pure-Python streaming encoder was used")
    monkeypatch.setattr(json, "dump", slow)
    write_chrome(tmp_path / "t.json", [])
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]


# -- the checker itself must be able to fail ----------------------------------------------

def _x(name, ts, dur, tid=1, cat="op", run_id=1):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": tid,
            "args": {"run_id": run_id}}


def _doc(*events):
    meta = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": t, "args": {"name": "t"}}
            for t in (1, 2)]
    return {"traceEvents": meta + list(events)}


def test_checker_flags_what_perfetto_rejects():
    run = _x("session run 1", 0, 10, cat="run")
    assert problems(_doc(run, _x("a", 1, 2))) == []
    assert any("overlaps" in p for p in problems(_doc(run, _x("a", 8, 4))))
    assert any("outside its run" in p for p in problems(_doc(run, _x("a", 8, 4, tid=2))))
    big = dict(_x("a", 1, 2), tid=threading.get_ident())
    assert any("uint32" in p for p in problems(_doc(run, big)))
    flow = [{"ph": "s", "id": 1, "name": "d", "cat": "d", "ts": 1.5, "pid": 1, "tid": 1},
            {"ph": "f", "id": 1, "name": "d", "cat": "d", "ts": 5.5, "pid": 1, "tid": 1,
             "bp": "e"}]
    good = [run, _x("a", 1, 2), _x("b", 5, 2)]
    assert problems(_doc(*good, *flow)) == []
    no_bp = [flow[0], {k: v for k, v in flow[1].items() if k != "bp"}]
    assert any("bp" in p for p in problems(_doc(*good, *no_bp)))
    in_run = [flow[0], dict(flow[1], ts=4.5)]
    assert any("binds to run slice" in p for p in problems(_doc(*good, *in_run)))
    assert any("not an s/f pair" in p for p in problems(_doc(*good, flow[0])))


@pytest.mark.parametrize("streamed", [False, True])
def test_thread_names_come_from_the_threads_that_ran_ops(tmp_path, streamed):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = tf.numpy_function(lambda v: v + 1, [x], tf.float32, name="inc")

    def run():
        with tf.Session(graph=g) as sess:
            sess.run(y, {x: 1.0})
    with tf.trace(tmp_path / "t.jsonl" if streamed else None) as tr:
        run()
        t = threading.Thread(target=run, name="loader-7")
        t.start()
        t.join()
    assert sorted(tr.thread_names.values()) == sorted([threading.current_thread().name,
                                                       "loader-7"])


def test_a_framework_run_begun_on_a_callback_thread_is_one_finished_slice():
    """TensorFlow's callbacks form one run: the first call's thread starts it, the program's
    thread ends it. It was drawn twice: "unfinished" on the callback thread's track, and
    as a "partial run" where it ended."""
    events = [ev.RunStart(1, 1, 1_000, 22, "tensorflow", "callbacks"),
              ev.OpStart(2, 1, 2_000, 22, "prep/scale", "PyFunc"),
              ev.OpEnd(3, 1, 5_000, 22, "prep/scale", "PyFunc", None, 3_000),
              ev.OpStart(4, 1, 6_000, 33, "prep/scale", "PyFunc"),
              ev.OpEnd(5, 1, 9_000, 33, "prep/scale", "PyFunc", None, 3_000),
              ev.RunEnd(6, 1, 20_000, 11, 19_000, True)]
    doc = to_chrome(events)
    runs = [e for e in doc["traceEvents"] if e.get("cat") == "run"]
    assert len(runs) == 1, runs
    assert runs[0]["name"] == "tensorflow run 1 callbacks"
    assert runs[0]["args"]["ok"] is True and "unfinished" not in runs[0]["args"]
    assert (runs[0]["ts"], runs[0]["dur"]) == (0.0, 19.0)
    assert problems(doc) == []
