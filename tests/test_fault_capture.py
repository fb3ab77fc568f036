"""capture="fault" (SPEC §11): the inputs of faulty calls only, written crash-safe."""
from __future__ import annotations

import os
import textwrap
import warnings

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.trace.faults import faults_path, load_faults

from test_trace_crash import killed_writers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def clean(x):
    return x + np.float32(1)


def raises(x):
    raise KeyError("no such row")


def wrong_dtype(x):
    return x.astype(np.float64)


def makes_nan(x):
    return (x * np.float32(np.nan)).astype(np.float32)


def flattens(x):
    return x.reshape(-1)


def writes_input(x):
    x += 1
    return x * 2


def _graph(body, name, x_value):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = tf.numpy_function(clean, [x], tf.float32, name="first_clean")
        out = tf.numpy_function(body, [y], tf.float32, name=name)
        done = tf.numpy_function(clean, [out], tf.float32, name="after")
    return g, x, done, x_value


CASES = [  # (function, op name, fault recorded, input)
    (raises, "raises", "error", np.arange(3, dtype=np.float32)),
    (wrong_dtype, "wrong_dtype", "error", np.arange(3, dtype=np.float32)),
    (makes_nan, "makes_nan", "non_finite", np.arange(3, dtype=np.float32)),
    (flattens, "flattens", "shape_change", np.ones((4, 1), np.float32)),
    (writes_input, "writes_input", "input_modified", np.arange(3, dtype=np.float32)),
]


@pytest.mark.parametrize("streamed", [True, False], ids=["jsonl", "in-memory+save"])
def test_only_faulty_calls_leave_their_inputs(tmp_path, streamed):
    path = tmp_path / "t.jsonl"
    with tf.trace(path if streamed else None, capture="fault") as tr:
        for body, name, _, value in CASES:
            g, x, done, v = _graph(body, name, value)
            with tf.compat.v1.Session(graph=g) as s:
                try:
                    s.run(done, {x: v})
                except tf.errors.OpError:
                    pass
    if not streamed:
        tr.save(path)
    functions, calls = load_faults(path)
    assert [(c["op"], c["fault"]) for c in calls] == [(n, f) for _, n, f, _ in CASES]
    assert set(functions) == {n for _, n, _, _ in CASES}   # clean ops: nothing recorded
    for (body, name, _, value), c in zip(CASES, calls):
        f = functions[name]
        assert (f["module"], f["qualname"], f["line"]) == (
            __name__, body.__qualname__, body.__code__.co_firstlineno)
        assert f["file"] == os.path.abspath(__file__) and len(f["source_sha256"]) == 64
        # each input as the faulty call got it (first_clean added 1)
        np.testing.assert_array_equal(np.asarray(c.inputs[0]).reshape(value.shape),
                                      value + 1 + (1 if name == "writes_input" else 0))
    assert calls[-1]["modified"] and not any(c["modified"] for c in calls[:-1])
    assert calls[0]["original_error"] == "KeyError: 'no such row'"
    assert calls[0]["error_line"] == raises.__code__.co_firstlineno + 1
    files = sorted(os.listdir(f"{path}.values"))
    assert files == sorted(f"{c['inputs'][0]['key']}.npy" for c in calls)
    assert ev.fault_capture == 0 and not ev.held_calls   # nothing held once the trace ends


def test_clean_calls_leave_nothing(tmp_path):
    path = tmp_path / "clean.jsonl"
    g, x, done, v = _graph(raises, "raises", np.arange(3, dtype=np.float32))
    with tf.trace(path, capture="fault"), tf.compat.v1.Session(graph=g) as s:
        with pytest.raises(tf.errors.OpError):
            s.run(done, {x: v})
    assert len(load_faults(path)[1]) == 1
    # a new recording at the same path replaces the earlier one's list of faulty calls
    g, x, done, v = _graph(clean, "also_clean", np.arange(3, dtype=np.float32))
    with tf.trace(path, capture="fault"), tf.compat.v1.Session(graph=g) as s:
        for _ in range(3):
            s.run(done, {x: v})
    assert not os.path.exists(faults_path(path))
    assert tf.load_trace(path).header["capture"] == "fault"
    assert load_faults(path) == ({}, [])
    fresh = tmp_path / "fresh.jsonl"
    with tf.trace(fresh, capture="fault"), tf.compat.v1.Session(graph=g) as s:
        s.run(done, {x: v})
    assert sorted(os.listdir(tmp_path)) == ["clean.jsonl", "clean.jsonl.values", "fresh.jsonl"]


def test_a_py_function_call_is_captured_with_its_dtypes(tmp_path):
    path = tmp_path / "eager.jsonl"

    def eager_fails(x):
        raise ValueError(f"bad row {int(x.numpy()[0])}")

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.int32, name="x")
        y = tf.py_function(eager_fails, [x], tf.float64, name="eager_fails")
    with tf.trace(path, capture="fault"), tf.compat.v1.Session(graph=g) as s:
        with pytest.raises(tf.errors.OpError):
            s.run(y, {x: np.array([1, 2], np.int32)})
    functions, calls = load_faults(path)
    assert [c["op_type"] for c in calls] == ["EagerPyFunc"]
    assert functions["eager_fails"]["Tin"] == ["int32"]
    np.testing.assert_array_equal(calls[0].inputs[0], [1, 2])


def test_an_abort_is_not_a_fault(tmp_path):
    path = tmp_path / "abort.jsonl"
    rec = tf.trace(path, capture="fault")
    with rec:
        ev.held_calls[0] = (type("Op", (), {"name": "x"})(), (np.zeros(2),))
        rec.faults.note(ev.OpError(1, 1, 0, 0, "x", "PyFunc", None, "CancelledError",
                                   "interrupted by CancelledError: run aborted"))
    assert load_faults(path) == ({}, [])


WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    import pyfunc_debug as tf

    def nan_now_and_then(v):
        return np.log(v - np.float32(100)).astype(np.float32)

    x = tf.compat.v1.placeholder(tf.float32, name="x")
    y = tf.numpy_function(nan_now_and_then, [x], tf.float32, name="nan_op")
    with tf.trace(sys.argv[1], capture="fault"), tf.Session() as sess:
        print("ready", flush=True)
        while True:
            sess.run(y, {x: np.arange(4096, dtype=np.float32)})
""")


def test_kill_minus_9_during_fault_capture_leaves_a_loadable_trace(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore")
    for path in killed_writers(script, tmp_path, trials=4, seed=27, delays=(0.05, 0.3),
                               env=env):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tf.load_trace(path)
            functions, calls = load_faults(path)
        assert not [w for w in caught if "captured value" in str(w.message)], \
            "a captured call named a value file that was not complete"
        assert calls and set(functions) == {"nan_op"}
        assert all(c.inputs[0].shape == (4096,) for c in calls)


def test_fault_capture_refuses_a_chrome_trace_path(tmp_path):
    with pytest.raises(ValueError, match=r"capture='fault' keeps inputs beside a .jsonl trace"):
        tf.trace(tmp_path / "t.json", capture="fault")
