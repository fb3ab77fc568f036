"""The built-in demo graph: every seed op, a NaN that appears mid-chain, a failing run.

``build()`` returns the graph and what to feed/fetch; ``batches()`` the feeds of
the demo's runs: run 1 is clean, run 2 produces NaN inside ``log_features``
(a negative value reaches ``np.log``), run 3 makes ``validate`` raise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import dtypes
from .errors import OpError
from .graph.graph import Graph
from .ops import array_ops, math_ops
from .ops.script_ops import numpy_function, py_func, py_function
from .runtime.session import Session


def validate(batch):
    """numpy_function: reject empty or non-finite batches."""
    if batch.size == 0:
        raise ValueError("empty batch: nothing to normalise")
    return batch


def normalize(batch):
    """numpy_function: centre on the batch median (may leave negative values)."""
    return (batch - np.median(batch)).astype(np.float32)


def log_features(x):
    """py_func: log1p of the features — NaN where x < -1."""
    with np.errstate(invalid="ignore"):
        return np.log1p(x).astype(np.float32)


def scale(x, factor):
    """py_function: eager ops inside (they are recorded and differentiable)."""
    return math_ops.tanh(x) * factor


@dataclass
class DemoGraph:
    graph: Graph
    batch: object
    fetches: dict


def build() -> DemoGraph:
    g = Graph()
    with g.as_default():
        batch = array_ops.placeholder(dtypes.float32, shape=[None], name="batch")
        checked = numpy_function(validate, [batch], dtypes.float32, name="validate")
        centred = numpy_function(normalize, [checked], dtypes.float32, name="normalize")
        logs = py_func(log_features, [centred], dtypes.float32, stateful=False, name="log_features")
        factor = array_ops.identity(np.float32(2.0), name="factor")
        scaled = py_function(scale, [logs, factor], dtypes.float32, name="scale")
        loss = math_ops.reduce_mean(math_ops.square(scaled), name="loss")
        has_nan = math_ops.reduce_max(math_ops.cast(math_ops.is_nan(scaled), dtypes.int32),
                                      name="has_nan")
    return DemoGraph(g, batch, {"loss": loss, "has_nan": has_nan})


def batches() -> list:
    return [np.array([0.5, 1.0, 1.5, 2.0], np.float32),
            np.array([0.1, 0.2, 5.0, 9.0], np.float32),
            np.array([], np.float32)]


def run(out=print) -> list:
    """Run the demo without a UI, printing one line per run; returns the results."""
    demo = build()
    results = []
    with Session(graph=demo.graph) as sess:
        for i, feed in enumerate(batches(), 1):
            try:
                r = sess.run(demo.fetches, {demo.batch: feed})
                out(f"run {i}: loss={r['loss']!r} has_nan={bool(r['has_nan'])}")
                results.append(r)
            except OpError as e:
                first = e.message.splitlines()
                out(f"run {i}: {type(e).__name__} at op '{e.op.name}' ({e.op.type}), "
                    f"created at {e.op.source}: {[l for l in first if l.startswith('ValueError')][0]}")
                results.append(e)
    return results
