"""Scheduling (SPEC 2b, issue 28): runs start inline and spread to threads only on demand.

Correctness only, never timing: every mode (sequential, default ``Session()``,
``inter_op_threads=2``, forced hand-offs) gives the same values, runs each op
once, and emits the same events; TF#16's blocking pair completes.
"""
from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyfunc_debug as tf
from pyfunc_debug.errors import OpError

BENCHMARKS = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks")

# node kinds: (name, arity)
KINDS = [("py_add", 1), ("py_mul2", 2), ("np_func", 1), ("slow_py", 1), ("add", 2),
         ("sub", 2)]


@st.composite
def dags(draw):
    """Random graphs: each node reads one or two earlier nodes (node 0 is the feed)."""
    n = draw(st.integers(1, 14))
    nodes = []
    for i in range(n):
        name, arity = draw(st.sampled_from(KINDS))
        ins = [draw(st.integers(0, i)) for _ in range(arity)]
        nodes.append((name, ins, draw(st.integers(1, 3))))
    fetch = draw(st.lists(st.integers(1, n), min_size=1, max_size=3, unique=True))
    return nodes, fetch


def build(nodes, fetch, calls):
    """The graph of ``dags``; each wrapped function counts its calls in ``calls``."""
    def counted(key, fn):
        def body(*args):
            calls[key] += 1
            return fn(*args)
        return body

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64)
        vals = [x]
        for k, (name, ins, c) in enumerate(nodes):
            a = [vals[i] for i in ins]
            if name == "py_add":
                y = tf.compat.v1.py_func(counted(k, lambda v, c=c: v + c), a, tf.float64)
            elif name == "py_mul2":
                y = tf.compat.v1.py_func(counted(k, lambda u, v, c=c: u * 0.5 + v * c), a,
                                         tf.float64)
            elif name == "np_func":
                y = tf.numpy_function(counted(k, lambda v, c=c: np.sqrt(np.abs(v)) + c), a,
                                      tf.float64)
            elif name == "slow_py":  # long enough, now and then, for the watchdog to act
                y = tf.compat.v1.py_func(
                    counted(k, lambda v, c=c: (time.sleep(0.004 if c == 3 else 0), v - c)[1]),
                    a, tf.float64)
            elif name == "add":
                y = a[0] + a[1]
            else:
                y = a[0] - a[1]
            vals.append(y)
    return g, x, [vals[i] for i in fetch]


def _modes():
    return {"sequential": dict(inter_op_threads=1), "default": {},
            "threads": dict(inter_op_threads=2), "forced": dict(inter_op_threads=2)}


def _run(g, x, fetches, feed, mode, kw):
    sess = tf.Session(graph=g, **kw)
    if mode == "forced":  # every wrapped function counts as expensive: spread at once
        plan = sess._plan_for(fetches, {x: feed})
        plan.costs = [1.0] * len(plan.steps)
    return sess.run(fetches, {x: feed})


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(dags(), st.floats(-4, 4))
def test_random_graphs_give_the_same_values_and_calls_in_every_mode(dag, feed):
    nodes, fetch = dag
    got = {}
    for mode, kw in _modes().items():
        calls = Counter()
        g, x, fetches = build(nodes, fetch, calls)
        values = [_run(g, x, fetches, feed, mode, kw) for _ in range(2)]
        got[mode] = (values, calls)
    want_values, want_calls = got["sequential"]
    for mode, (values, calls) in got.items():
        np.testing.assert_array_equal(np.array(values), np.array(want_values), err_msg=mode)
        assert calls == want_calls, mode


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(dags())
def test_random_graphs_emit_the_same_events_in_every_mode(dag):
    nodes, fetch = dag
    counts = {}
    for mode, kw in _modes().items():
        g, x, fetches = build(nodes, fetch, Counter())
        seen = Counter()
        with tf.events.subscribe(lambda e: seen.update([type(e).__name__])):
            _run(g, x, fetches, 1.5, mode, kw)
        counts[mode] = seen
    assert all(c == counts["sequential"] for c in counts.values()), counts


def _blocking_pair():
    q: queue.Queue = queue.Queue()
    g = tf.Graph()
    with g.as_default():
        one = tf.constant(1.0)
        got = tf.compat.v1.py_func(lambda v: q.get(timeout=20), [one], tf.float32)
        put = tf.compat.v1.py_func(lambda v: (q.put(np.float32(v + 1)), np.float32(0))[1],
                                   [one], tf.float32)
        total = got + put
    return g, total


@pytest.mark.parametrize("kw", [{}, {"inter_op_threads": 2}], ids=["default", "threads2"])
def test_a_blocking_put_get_pair_completes(kw):
    """TF#16: the get runs first (creation order) and blocks; the watchdog hands the put
    to another thread."""
    g, total = _blocking_pair()
    sess = tf.Session(graph=g, **kw)
    for _ in range(3):
        assert sess.run(total) == 2.0


def test_a_blocking_pair_completes_in_a_nested_run():
    g, total = _blocking_pair()
    sess = tf.Session(graph=g)
    with tf.Graph().as_default() as outer:
        y = tf.compat.v1.py_func(lambda v: sess.run(total) + v, [tf.constant(1.0)], tf.float32)
    assert tf.Session(graph=outer).run(y) == 3.0


def _wide(body, branches=6, dtype=tf.float64):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtype)
        outs = [tf.compat.v1.py_func(lambda v, k=k: body(v, k), [x], dtype)
                for k in range(branches)]
        total = outs[0]
        for o in outs[1:]:
            total = total + o
    return g, x, total


def test_a_long_op_hands_the_rest_to_another_thread():
    threads = set()

    def body(v, k):
        threads.add(threading.get_ident())
        if k == 0:
            time.sleep(0.05)  # far longer than the watchdog's interval
        return v + k
    g, x, total = _wide(body)
    assert tf.Session(graph=g).run(total, {x: 1.0}) == 6 + 15
    assert len(threads) >= 2


def test_expensive_ops_spread_over_the_inter_op_threads():
    threads = set()

    def body(v, k):
        threads.add(threading.get_ident())
        time.sleep(0.001)  # measured expensive; releases the GIL, as numpy work does
        return v * k
    g, x, total = _wide(body, branches=8)
    sess = tf.Session(graph=g, inter_op_threads=2)
    for _ in range(4):
        assert sess.run(total, {x: 2.0}) == 2 * 28
    assert len(threads) >= 2


def test_cheap_ops_stay_in_the_calling_thread_under_a_pool():
    threads = set()

    def body(v, k):
        threads.add(threading.get_ident())
        return v + k
    g, x, total = _wide(body, branches=20)
    sess = tf.Session(graph=g, inter_op_threads=2)
    for _ in range(10):
        sess.run(total, {x: 1.0})
    assert threads <= {threading.get_ident()} or len(threads) <= 2  # a stall may spread once


@pytest.mark.parametrize("kw", [{}, {"inter_op_threads": 2}], ids=["default", "threads2"])
def test_an_error_on_a_helper_thread_reaches_the_caller(kw):
    def body(v, k):
        if k == 0:
            time.sleep(0.03)  # the rest moves to a helper
        if k == 4:
            raise ValueError("branch four fails")
        return v
    g, x, total = _wide(body)
    sess = tf.Session(graph=g, **kw)
    with pytest.raises(OpError, match="branch four fails") as info:
        sess.run(total, {x: 1.0})
    assert "PyFunc" in str(info.value)
    g2, x2, ok = _wide(lambda v, k: v)
    assert tf.Session(graph=g2, **kw).run(ok, {x2: 1.0}) == 6.0


@pytest.mark.parametrize("kw", [{}, {"inter_op_threads": 2}], ids=["default", "threads2"])
def test_keyboard_interrupt_cancels_the_run(kw):
    calls = Counter()

    def body(v, k):
        calls[k] += 1
        if k == 1:
            raise KeyboardInterrupt
        return v
    g, x, total = _wide(body)
    sess = tf.Session(graph=g, **kw)
    with pytest.raises(KeyboardInterrupt):
        sess.run(total, {x: 1.0})
    time.sleep(0.01)
    assert calls[5] == 0  # nothing after the interrupt ran inline


def test_the_scheduling_benchmark_runs_at_a_tiny_size(capsys):
    sys.path.insert(0, BENCHMARKS)
    try:
        import hotpaths
    finally:
        sys.path.remove(BENCHMARKS)
    hotpaths.case_scheduling(1, width=4, size=16)
    out = capsys.readouterr().out
    assert "default Session(), wide" in out and "ThreadPoolExecutor(2)" in out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_blocking_pair_completes_in_a_forked_child():
    """The child has none of the parent's helper or watchdog threads; it starts its own."""
    g, total = _blocking_pair()
    sess = tf.Session(graph=g)
    assert sess.run(total) == 2.0  # the parent's threads exist now
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 1
        try:
            code = 0 if sess.run(total) == 2.0 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("kw", [{}, {"inter_op_threads": 2}], ids=["default", "threads2"])
def test_several_gets_waiting_for_one_put_complete(kw):
    """Each blocked get holds a thread; the watchdog adds threads until the put runs."""
    q: queue.Queue = queue.Queue()
    g = tf.Graph()
    with g.as_default():
        one = tf.constant(1.0)
        gets = [tf.compat.v1.py_func(lambda v: q.get(timeout=20), [one], tf.float32)
                for _ in range(4)]
        put = tf.compat.v1.py_func(
            lambda v: ([q.put(np.float32(v)) for _ in range(4)], np.float32(0))[1], [one],
            tf.float32)
        total = gets[0] + gets[1] + gets[2] + gets[3] + put
    assert tf.Session(graph=g, **kw).run(total) == 4.0
