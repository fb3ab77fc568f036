"""A compiled plan's structure, checked against a brute-force reading of the graph.

The compiler (``runtime/plan.py``) finds each step's dependencies, the slots to
drop after their last reader, and whether the plan is a chain or has unordered
steps that call Python, in one pass with position-keyed tables (issue 28).
Here the same facts are derived the slow, obvious way on random graphs with
control dependencies, duplicate (CSE) ops and constants, and must agree.
"""
from __future__ import annotations

import contextlib

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyfunc_debug as tf

KINDS = ["py", "py2", "add", "const", "noop"]


@st.composite
def graphs(draw):
    """Nodes reading earlier nodes, some after control inputs; node 0 is the feed."""
    n = draw(st.integers(1, 16))
    nodes = []
    for i in range(n):
        kind = draw(st.sampled_from(KINDS))
        ins = [draw(st.integers(0, i)) for _ in range({"py2": 2, "add": 2}.get(kind, 1))]
        # (not on the feed: a control input on a fed placeholder runs it, an error, as in TF)
        controls = draw(st.lists(st.integers(1, i), max_size=2, unique=True)) if i else []
        nodes.append((kind, ins, controls))
    fetch = draw(st.lists(st.integers(1, n), min_size=1, max_size=3, unique=True))
    return nodes, fetch


def _build(nodes, fetch):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, name="x")
        vals = [x]
        for kind, ins, controls in nodes:
            a = [vals[i] for i in ins]
            deps = [vals[c].op for c in controls]
            with tf.control_dependencies(deps) if deps else contextlib.nullcontext():
                if kind == "py":
                    y = tf.compat.v1.py_func(lambda v: v + 1.0, a, tf.float64)
                elif kind == "py2":
                    y = tf.numpy_function(lambda u, v: u - v, a, tf.float64)
                elif kind == "add":   # equal adds of the same inputs become one step (CSE)
                    y = tf.add(a[0], a[1])
                elif kind == "const":
                    y = tf.constant(np.float64(len(vals)))
                else:
                    y = tf.identity(a[0])
            vals.append(y)
    return g, x, [vals[i] for i in fetch]


def _reference(plan, fetches):
    """Each fact about ``plan.steps`` the compiler derives, derived here from the graph."""
    steps = plan.steps
    index = {s.op: i for i, s in enumerate(steps)}
    writer = {slot: i for i, s in enumerate(steps) for slot in s.out_slots}
    deps = []
    for i, s in enumerate(steps):
        d = {writer[slot] for slot in s.in_slots if slot in writer}
        for c in s.op.control_inputs:
            c = plan.aliases.get(c, c)
            if c in index:
                d.add(index[c])
        deps.append(d)
    fetched = {plan.fetch_slots[k] for k in range(len(fetches))}
    frees = []
    for i, s in enumerate(steps):
        later = {slot for t in steps[i + 1:] for slot in t.in_slots}
        frees.append({slot for slot in s.in_slots if slot not in later and slot not in fetched})
    reach = []  # reach[i]: every step i depends on, directly or not
    for i in range(len(steps)):
        r = set(deps[i])
        for d in deps[i]:
            r |= reach[d]
        reach.append(r)
    blockers = [i for i, b in enumerate(plan.blocking) if b]
    concurrent = any(a not in reach[b] for k, a in enumerate(blockers) for b in blockers[k + 1:])
    chain = all(i - 1 in deps[i] for i in range(1, len(steps)))
    return deps, frees, concurrent, chain


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(graphs())
def test_a_plan_agrees_with_the_graph_read_the_slow_way(graph):
    nodes, fetch = graph
    g, x, fetches = _build(nodes, fetch)
    sess = tf.Session(graph=g)
    plan = sess._plan_for(fetches, {x: 2.0})
    deps, frees, concurrent, chain = _reference(plan, fetches)
    assert [set(s.deps) for s in plan.steps] == deps
    assert all(list(s.deps) == sorted(s.deps) for s in plan.steps)
    assert [set(f[6]) for f in plan.fast_steps] == frees
    assert plan.concurrent == concurrent
    assert plan.chain == chain
    blocking = [bool(s.op.op_def.extra.get("calls_python")) for s in plan.steps]
    assert list(plan.blocking) == blocking
    # and it runs to the values every mode agrees on
    expect = sess.run(fetches, {x: 2.0})
    got = tf.Session(graph=g, inter_op_threads=2).run(fetches, {x: 2.0})
    np.testing.assert_equal(got, expect)


def test_a_control_input_orders_steps_that_share_no_data():
    calls = []
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64)
        a = tf.compat.v1.py_func(lambda v: calls.append("a") or v, [x], tf.float64)
        b = tf.compat.v1.py_func(lambda v: calls.append("b") or v, [x], tf.float64)
        with tf.control_dependencies([b.op]):
            c = tf.compat.v1.py_func(lambda v: calls.append("c") or v, [a], tf.float64)
    for kw in ({}, {"inter_op_threads": 2}):
        calls.clear()
        sess = tf.Session(graph=g, **kw)
        assert sess.run(c, {x: 1.0}) == 1.0
        plan = sess._plan_for(c, {x: 1.0})
        ib = next(i for i, s in enumerate(plan.steps) if s.op is b.op)
        ic = next(i for i, s in enumerate(plan.steps) if s.op is c.op)
        assert ib in plan.steps[ic].deps
        assert calls.index("b") < calls.index("c")


def test_equal_slot_tuples_are_one_object_in_a_chain():
    """Plan memory (≤ 1 KiB an op): a step reads the very tuple the step before it writes."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64)
        y = x
        for _ in range(50):
            y = tf.compat.v1.py_func(lambda v: v + 1.0, [y], tf.float64)
    plan = tf.Session(graph=g)._plan_for(y, {x: 0.0})
    for before, step in zip(plan.steps, plan.steps[1:]):
        assert step.in_slots is before.out_slots
    assert tf.Session(graph=g).run(y, {x: 0.0}) == 50.0


def _counted_graph():
    """x -> a = x + 1 -> b = a * 10, and a two-output call (x + 1, x + 2) summed into c."""
    calls = []
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64)
        a = tf.compat.v1.py_func(lambda v: calls.append("a") or v + 1.0, [x], tf.float64)
        b = tf.compat.v1.py_func(lambda v: calls.append("b") or v * 10.0, [a], tf.float64)
        two = tf.compat.v1.py_func(lambda v: (calls.append("two") or v + 1.0, v + 2.0),
                                   [x], [tf.float64, tf.float64])
        c = tf.add(two[0], two[1])
    return g, x, a, b, two, c, calls


def test_a_fed_tensor_inside_the_graph_replaces_what_made_it():
    g, x, a, b, two, c, calls = _counted_graph()
    for kw in ({}, {"inter_op_threads": 2}):
        sess = tf.Session(graph=g, **kw)
        calls.clear()
        assert sess.run(b, {a: 5.0}) == 50.0
        assert calls == ["b"]          # a's function is pruned: its value is fed
        assert sess.run(a, {a: 7.0}) == 7.0
        # one output of a two-output op fed: the op still runs for the other
        calls.clear()
        assert sess.run(c, {x: 1.0, two[1]: 100.0}) == 102.0
        assert calls == ["two"]


def test_a_fed_tensor_whose_op_is_also_fetched_keeps_its_fed_value_for_readers():
    """Fetching a fed tensor's op runs it, as TensorFlow does; readers still get the fed value."""
    g, x, a, b, two, c, calls = _counted_graph()
    for kw in ({}, {"inter_op_threads": 2}):
        calls.clear()
        got = tf.Session(graph=g, **kw).run([b, a.op, a], {x: 1.0, a: 5.0})
        assert got == [50.0, None, 5.0]
        assert sorted(calls) == ["a", "b"]
        calls.clear()
        got = tf.Session(graph=g, **kw).run([c, two[0].op], {x: 1.0, two[1]: 100.0})
        assert got == [102.0, None]
