"""The fast paths of issue 12 give the same answers as the slow ones.

Pre-filtered breakpoint conditions pause exactly where the full check would;
threaded runs give the sequential results and the same events. Every benchmark of
``hotpaths.py`` and ``overhead.py`` runs at a tiny size.
"""
from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug.debug.conditions import compile_condition


def _chain(values_fn, n=12, dtype=tf.float32):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype)
        y = x
        for _ in range(n):
            y = tf.numpy_function(values_fn, [y], dtype)
    return g, x, y


def _paused_ops(g, x, y, feed, when, as_callable):
    seen = []
    dbg = tf.debug.Debugger(on_pause=lambda p: seen.append((p.op_name, p.when)) or "continue")
    if as_callable:  # no pre-filter: the condition is checked in full on every op
        cond = compile_condition(when)
        dbg.break_on(when=(lambda p, c=cond: c.check(p)) if not cond.reads_outputs else
                     (lambda p, c=cond: c.check(p) and p.outputs is not None))
    else:
        dbg.break_on(when=when)
    with dbg, tf.compat.v1.Session(graph=g) as sess:
        out = sess.run(y, {x: feed})
    return seen, out


def _step(v):
    return (v * np.float32(2)).astype(np.float32) if np.ndim(v) else np.float32(v * 2)


@pytest.mark.parametrize("when", [
    "np.any(outputs[0] > 100)", "np.all(outputs[0] >= 64)", "np.any(outputs[0] == 32)",
    "np.any(inputs[0] < 3)", "np.any(np.isnan(outputs[0]))", "has_inf_or_nan", "nan_producer",
    "has_nan", "np.any(outputs[1] > 0)",
])
@pytest.mark.parametrize("feed", [np.float32(1.0), np.array([1.0, 0.5], np.float32),
                                  np.float32(np.inf)])
def test_prefiltered_conditions_pause_where_the_full_check_does(when, feed):
    g, x, y = _chain(_step)
    fast = [op for op, _ in _paused_ops(g, x, y, feed, when, False)[0]]
    full = [op for op, _ in _paused_ops(g, x, y, feed, when, True)[0]]
    assert fast == full


def test_a_prefiltered_condition_has_a_test_only_where_its_indexed_values_answer_it():
    assert compile_condition("np.any(outputs[0] > 10)").test is not None
    assert compile_condition("nan_producer").test is not None
    assert compile_condition("np.any(inputs[0] < -1)").test is not None
    assert compile_condition("outputs[0].sum() > 10").test is not None
    assert compile_condition("np.any(outputs[0] > inputs[0])").test.both   # over both sides
    assert compile_condition("len(outputs) > 1").test is None   # the whole list
    assert compile_condition("op == 'a' and inputs[0] > 1").test is None


def test_a_prefiltered_breakpoint_counts_hits_and_steps_on_as_the_full_check_does():
    g, x, y = _chain(_step, n=6)
    runs = []
    cond = compile_condition("np.any(outputs[0] > 10)")
    for when in ("np.any(outputs[0] > 10)", lambda p: p.outputs is not None and cond.check(p)):
        seen = []

        def frontend(p):
            seen.append((p.op_name, p.when, p.breakpoint is None))
            return "step" if len(seen) == 1 else "continue"

        dbg = tf.debug.Debugger(on_pause=frontend)
        bp = dbg.break_on(when=when)
        with dbg, tf.compat.v1.Session(graph=g) as sess:
            assert sess.run(y, {x: np.float32(1.0)}) == 64.0
        runs.append((seen, bp.hits))
    assert runs[0] == runs[1]
    assert runs[0][1] == 3 and runs[0][0][0][1] == "after"


def _wide(n=6):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64)
        branches = [tf.numpy_function(lambda a, k=k: np.sqrt(a * (k + 1)), [x], tf.float64)
                    for k in range(n)]
        mid = [b * 2.0 for b in branches]
        total = mid[0]
        for m in mid[1:]:
            total = total + m
        chain = total
        for _ in range(5):
            chain = tf.numpy_function(lambda a: a + 1, [chain], tf.float64)
    return g, x, [chain, total] + branches


@pytest.mark.parametrize("capture", [None, "none", "summary"])
def test_threaded_and_sequential_runs_agree_on_results_and_event_counts(capture):
    g, x, fetches = _wide()
    feed = {x: np.arange(5.0)}
    results, counts = [], []
    for threads in (1, 2, None):
        events = []
        sub = tf.events.subscribe(events.append, capture=capture) if capture else None
        try:
            with tf.compat.v1.Session(graph=g, inter_op_threads=threads) as sess:
                results.append(sess.run(fetches, feed))
        finally:
            if sub is not None:
                sub.close()
        counts.append(sorted((type(e).__name__, e.op) for e in events
                             if type(e).__name__ in ("OpStart", "OpEnd")))
    for r in results[1:]:
        for a, b in zip(results[0], r):
            np.testing.assert_array_equal(a, b)
    assert counts[0] == counts[1] == counts[2]


def test_a_chain_on_an_inter_op_pool_runs_in_the_calling_thread():
    import threading
    seen = set()
    g, x, y = _chain(lambda v: seen.add(threading.get_ident()) or v, n=20)
    with tf.compat.v1.Session(graph=g, inter_op_threads=2) as sess:
        sess.run(y, {x: np.float32(1.0)})
    assert seen == {threading.get_ident()}


def test_a_failing_branch_on_the_pool_raises_its_error_once_the_others_end():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64)
        ok = [tf.numpy_function(lambda a: a + 1, [x], tf.float64) for _ in range(4)]
        bad = tf.numpy_function(lambda a: 1 / 0, [x], tf.float64, name="bad")
        total = ok[0] + ok[1] + ok[2] + ok[3] + bad
    with tf.compat.v1.Session(graph=g, inter_op_threads=2) as sess:
        with pytest.raises(tf.errors.UnknownError, match="bad"):
            sess.run(total, {x: 1.0})
        assert sess.run(ok[0], {x: 1.0}) == 2.0


# -- the benchmarks run (tiny sizes: nothing is measured, nothing can rot unseen) --------

BENCHMARKS = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks")


def _bench(name):
    sys.path.insert(0, BENCHMARKS)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(BENCHMARKS)


@pytest.fixture
def hotpaths():
    module = _bench("hotpaths")
    saved = {k: getattr(module, k) for k in ("BIG", "ARRAY_CHAIN", "WIDE", "SCALE_SIZES",
                                             "SCALE_REPS", "SCALAR_CHAIN")}
    yield module
    for k, v in saved.items():
        setattr(module, k, v)


def test_every_hot_path_benchmark_but_tensorflow_runs_at_a_tiny_size(hotpaths, capsys):
    cases = [c for c in hotpaths.CASES if c != "tensorflow"]
    hotpaths.main(["--tiny", "--rounds", "1", "--width", "4", "--size", "16", "--only", *cases])
    out = capsys.readouterr().out
    for title in ("py_function vs numpy_function", "tracing the scalar chain",
                  "breakpoints that never fire", "inter_op_threads=2 on a chain",
                  "a wide graph of 4 scalar py_func", "scaling: chains of py_func"):
        assert title in out, title
    assert "on_error=True (the UI's default)" in out and "or outputs[0] > 1e30" in out


def test_the_tensorflow_comparison_runs_at_a_tiny_size(hotpaths, capsys):
    pytest.importorskip("tensorflow")
    hotpaths.main(["--tiny", "--rounds", "1", "--only", "tensorflow"])
    assert "pyfunc_debug" in capsys.readouterr().out


def test_the_overhead_benchmark_runs_at_a_tiny_size(capsys):
    _bench("overhead").main(["--n", "3", "--repeats", "1", "--events", "200"])
    out = capsys.readouterr().out
    assert "overhead µs/op" in out and "load_trace of" in out
