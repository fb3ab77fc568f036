"""``import_graph_def`` is linear in the size of the definition (issue 25): the time per
node stays flat from a 10k-node chain to a 100k-node one.

A ratio of per-node CPU times, not a wall-clock threshold: the machine may be slow
or shared, but a quadratic step (100,000 chained nodes once took more than 300 s)
makes the bigger chain ten times dearer per node.
"""
from __future__ import annotations

import time

import pyfunc_debug as pfd

RATIO = 3.0   # per-node time at 100k may be at most this many times that at 10k


def _chain(n: int, control: bool) -> dict:
    """A Const, then ``n - 1`` Identity nodes, each reading the one before (and, with
    ``control``, also ordered after the one before that)."""
    nodes = [{"name": "n0", "op": "Const", "input": [],
              "attr": {"value": {"tensor": {"dtype": "float32", "shape": [], "values": [1.0]}},
                       "dtype": {"dtype": "float32"}}}]
    for i in range(1, n):
        inputs = [f"n{i - 1}:0"] + ([f"^n{i - 2}"] if control and i > 1 else [])
        nodes.append({"name": f"n{i}", "op": "Identity", "input": inputs, "attr": {}})
    return {"node": nodes}


def _per_node(n: int, control: bool = False, reverse: bool = False) -> float:
    """CPU seconds per node to import an ``n``-node chain (the best of a few tries for
    small chains, whose times are the noisiest)."""
    d = _chain(n, control)
    if reverse:   # no node before what it reads: the order has to be searched for
        d["node"].reverse()
    best = float("inf")
    for _ in range(3 if n <= 10_000 else 1):
        with pfd.Graph().as_default() as g:
            t0 = time.process_time()
            pfd.import_graph_def(d, name="")
            best = min(best, time.process_time() - t0)
        assert len(g.get_operations()) == n
    return best / n


def test_a_chain_imports_in_time_linear_in_its_length():
    small, big = _per_node(10_000), _per_node(100_000)
    assert big <= RATIO * small, f"{small * 1e6:.1f} us/node at 10k, {big * 1e6:.1f} at 100k"


def test_a_reversed_chain_with_control_inputs_imports_in_linear_time():
    small = _per_node(10_000, control=True, reverse=True)
    big = _per_node(100_000, control=True, reverse=True)
    assert big <= RATIO * small, f"{small * 1e6:.1f} us/node at 10k, {big * 1e6:.1f} at 100k"


def test_the_imported_chain_runs():
    with pfd.Graph().as_default() as g:
        pfd.import_graph_def(_chain(1000, control=True), name="c")
    with pfd.compat.v1.Session(graph=g) as sess:
        assert sess.run("c/n999:0") == 1.0
