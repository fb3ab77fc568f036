"""Per-op events and the subscription bus (SPEC §3)."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev


def _graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = tf.py_function(lambda a: tf.exp(a) * 2.0, [x], tf.float32, name="wrapped")
        z = tf.numpy_function(lambda b: b + np.float32(1), [y], tf.float32, name="plus_one")
        bad = tf.numpy_function(lambda b: 1 / 0, [z], tf.float32, name="bad")
    return g, x, z, bad


def test_exact_event_sequence_with_nested_eager_ops():
    g, x, z, _ = _graph()
    got = []
    with tf.Session(graph=g) as sess, ev.subscribe(got.append):
        sess.run(z, {x: 0.0})
    kinds = [(type(e).__name__, e.op, e.parent) for e in got]
    assert kinds == [
        ("RunStart", "", None),
        ("OpStart", "wrapped", None),
        ("OpStart", "Exp", "wrapped"), ("OpEnd", "Exp", "wrapped"),
        ("OpStart", "Mul", "wrapped"), ("OpEnd", "Mul", "wrapped"),
        ("OpEnd", "wrapped", None),
        ("OpStart", "plus_one", None), ("OpEnd", "plus_one", None),
        ("RunEnd", "", None),
    ]
    seqs = [e.seq for e in got]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert len({e.run_id for e in got}) == 1
    assert got[0].ops == ("wrapped", "plus_one") and got[-1].ok
    start = next(e for e in got if type(e) is ev.OpStart and e.op == "plus_one")
    assert start.producers == ("wrapped",) and start.source.endswith(f"{__file__.split('/')[-1]}:{start.source.split(':')[-1]}")
    assert all(e.op_type == "EagerPyFunc" for e in got if e.op == "wrapped")


def test_error_events_and_run_end():
    g, x, _, bad = _graph()
    got = []
    with tf.Session(graph=g) as sess, ev.subscribe(got.append):
        with pytest.raises(tf.errors.UnknownError):
            sess.run(bad, {x: 0.0})
    err = next(e for e in got if type(e) is ev.OpError)
    assert (err.op, err.op_type, err.error_type) == ("bad", "PyFunc", "UnknownError")
    assert "ZeroDivisionError" in err.message and "bad" in err.message
    assert type(got[-1]) is ev.RunEnd and not got[-1].ok and "UnknownError" in got[-1].error
    assert not any(type(e) is ev.OpEnd and e.op == "bad" for e in got)


def test_no_subscriber_makes_no_events(monkeypatch):
    """Every event takes a sequence number: with nobody listening none is taken."""
    taken = []
    original = ev.next_seq

    def counting():
        taken.append(1)
        return original()
    monkeypatch.setattr(ev, "next_seq", counting)
    g, x, z, _ = _graph()
    with tf.Session(graph=g) as sess:
        sess.run(z, {x: 1.0})
        assert taken == []
        with ev.subscribe(lambda e: None):
            sess.run(z, {x: 1.0})
        assert len(taken) == 10  # the counter does see every event of a watched run


@pytest.mark.parametrize("capture", ["none", "summary", "full"])
def test_capture_levels(capture):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.numpy_function(lambda a: np.log(a), [x], tf.float32, name="log")
    got = []
    with tf.Session(graph=g) as sess, ev.subscribe(got.append, capture=capture, capture_bytes=64):
        with np.errstate(all="ignore"):
            sess.run(y, {x: np.array([-1.0, 0.0, 1.0, np.e], np.float32)})
    end = next(e for e in got if type(e) is ev.OpEnd)
    if capture == "none":
        assert end.inputs == () and end.outputs == ()
        return
    out = end.outputs[0]
    assert out.shape == (4,) and out.dtype == "float32"
    assert (out.nan, out.inf, out.min, out.max) == (1, 1, 0.0, 1.0)
    assert end.inputs[0].min == -1.0
    if capture == "full":
        np.testing.assert_array_equal(end.inputs[0].value, np.float32([-1.0, 0.0, 1.0, np.e]))
    else:
        assert out.value is None


def test_full_capture_respects_the_byte_cap():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.identity(x)
    got = []
    with tf.Session(graph=g) as sess, ev.subscribe(got.append, capture="full", capture_bytes=100):
        sess.run(y, {x: np.zeros(10, np.float32)})
        sess.run(y, {x: np.zeros(1000, np.float32)})
    small, big = [e.outputs[0] for e in got if type(e) is ev.OpEnd]
    assert small.value is not None and big.value is None and big.size == 1000


def test_a_raising_subscriber_is_reported_once_and_the_run_goes_on():
    g, x, z, _ = _graph()
    others = []

    def broken(e):
        raise RuntimeError("subscriber bug")
    with tf.Session(graph=g) as sess, ev.subscribe(broken), ev.subscribe(others.append):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert sess.run(z, {x: 0.0}) == 3.0
            assert sess.run(z, {x: 0.0}) == 3.0
    reports = [w for w in caught if "subscriber bug" in str(w.message)]
    assert len(reports) == 1
    warn_events = [e for e in others if type(e) is ev.Warning]
    assert len(warn_events) == 1 and "subscriber bug" in warn_events[0].message
    assert sum(type(e) is ev.RunEnd for e in others) == 2


def test_function_calls_emit_runs():
    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def f(a):
        return tf.numpy_function(np.sqrt, [a], tf.float32, name="root")
    got = []
    with ev.subscribe(got.append):
        assert f(tf.constant(4.0)).numpy() == 2.0
    start = got[0]
    assert type(start) is ev.RunStart and (start.kind, start.name) == ("function", "f")
    assert [e.op for e in got if type(e) is ev.OpEnd] == ["root"]


def test_folded_and_deduplicated_ops_are_reported():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(2.0)
        p = tf.compat.v1.placeholder(tf.float32)
        folded = tf.numpy_function(np.square, [c], tf.float32, stateful=False, name="folded")
        a = tf.numpy_function(np.sqrt, [p], tf.float32, stateful=False, name="a")
        b = tf.numpy_function(np.sqrt, [p], tf.float32, stateful=False, name="b")
        out = folded + a + b
    got = []
    with tf.Session(graph=g) as sess, ev.subscribe(got.append):
        sess.run(out, {p: 4.0})
        sess.run(out, {p: 4.0})
    starts = [e for e in got if type(e) is ev.RunStart]
    assert starts[0].deduplicated == (("b", "a"),)
    assert "folded" not in starts[0].folded and "folded" in starts[1].folded
    assert [e.op for e in got if type(e) is ev.OpEnd].count("folded") == 1


def test_eager_numpy_function_tout_mismatch_is_a_warning_event():
    got = []
    with ev.subscribe(got.append):
        tf.numpy_function(lambda a: a.astype(np.float64), [np.float32(1)], tf.float32)
    assert len(got) == 1 and type(got[0]) is ev.Warning
    assert "is float64, but expects float32" in got[0].message


def test_concurrent_sessions_with_tracing_lose_no_events():
    g, x, z, _ = _graph()
    runs_per_thread = 25
    with tf.trace() as tr:
        def worker():
            with tf.Session(graph=g) as sess:
                for _ in range(runs_per_thread):
                    sess.run(z, {x: 0.0})
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    per_run = 10  # see test_exact_event_sequence_with_nested_eager_ops
    assert len(tr.events) == 4 * runs_per_thread * per_run
    assert len({e.seq for e in tr.events}) == len(tr.events)
    assert len({e.run_id for e in tr.events}) == 4 * runs_per_thread


def test_worker_and_pid_are_optional_fields_that_read_none_here():
    """SPEC §3b: op events may carry a Dask worker's address and pid; every other event
    (and one a hot path builds without them) reads them as None and stays as short as
    events were before the fields existed."""
    local = ev.OpEnd(1, 1, 10, 7, "op", "PyFunc", None, 5)
    fast = tuple.__new__(ev.OpStart, (2, 1, 5, 7, "op", "PyFunc", None, "", ()))
    remote = ev.OpError(3, 1, 11, -1, "op", "PyFunc", None, "E", "m", worker="tcp://w:1",
                        pid=42)
    assert {"worker", "pid"} <= set(ev.OpEnd._fields)
    assert (local.worker, local.pid, fast.worker, fast.pid) == (None,) * 4
    assert len(local) == len(ev.OpEnd._fields) - 2 and len(fast) == len(ev.OpStart._fields) - 2
    assert (remote.worker, remote.pid) == ("tcp://w:1", 42)
    stamped = fast._replace(seq=9, worker="tcp://w:1", pid=42)
    assert (stamped.seq, stamped.worker, stamped.pid) == (9, "tcp://w:1", 42)
    assert stamped._replace(worker=None, pid=None) == fast._replace(seq=9)
    assert fast._asdict()["worker"] is None and "worker=None" in repr(fast)
    import pickle
    assert pickle.loads(pickle.dumps(remote)) == remote
    assert pickle.loads(pickle.dumps(fast)) == fast
