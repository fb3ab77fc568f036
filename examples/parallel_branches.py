"""Independent branches on an inter-op thread pool, and what the trace shows.

Four ``numpy_function`` branches read the same input and each waits ~50 ms
(``time.sleep`` stands in for I/O or a C library that releases the GIL)
before computing a feature; a few plain ops combine them. The same graph runs
on ``tf.Session(inter_op_threads=1)`` (one op at a time: ~4 x 50 ms) and on
``tf.Session(inter_op_threads=4)`` (the branches overlap: ~50 ms). The script
prints both timings and checks that the results are identical. (A plain
``tf.Session()`` also overlaps independent wrapped functions, on helper
threads, as TensorFlow does.)

With ``--trace PATH`` it also records the parallel run with
``tf.trace(PATH)``: a ``.json`` file is Chrome's trace format, where each pool
thread is its own track and the four branch slices sit side by side in time.
``main(delay=..., trace_path=...)`` returns the results, the timings and the
threads the ops ran on.

    python examples/parallel_branches.py [--trace parallel.json] [--delay 0.05]

To record every run (sequential and parallel) from the outside and look at it,
open the file in https://ui.perfetto.dev (or chrome://tracing):

    pyfunc-debug trace -o parallel.json examples/parallel_branches.py

To pause before each branch (every pool thread stops at its branch; the
pauses are served one at a time):

    pyfunc-debug run --break 'branch_*' --console examples/parallel_branches.py
"""
import argparse
import time

import numpy as np

import pyfunc_debug as tf

DELAY = 0.05


def make_branch(kind, delay):
    def branch(x):
        time.sleep(delay)  # the slow part: I/O, a remote call, a C library...
        if kind == "sorted":
            return np.sort(x)
        if kind == "cumsum":
            return np.cumsum(x).astype(np.float32)
        if kind == "square":
            return np.square(x)
        return np.flip(x).copy()
    branch.__name__ = branch.__qualname__ = f"branch_{kind}"
    return branch


def build(graph, delay, kinds):
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[None], name="x")
        outs = [tf.numpy_function(make_branch(k, delay), [x], tf.float32, name=f"branch_{k}")
                for k in kinds]
        with tf.name_scope("combine"):
            total = outs[0]
            for o in outs[1:]:
                total = tf.add(total, o)
            result = tf.reduce_mean(tf.tanh(total * 0.01), name="result")
    return x, result


def timed(sess, fetch, feed, repeats):
    sess.run(fetch, feed_dict=feed)  # compile the plan once
    best, value = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = sess.run(fetch, feed_dict=feed)
        best = min(best, time.perf_counter() - t0)
    return value, best


def main(delay=DELAY, trace_path=None, repeats=2, size=1000):
    kinds = ("sorted", "cumsum", "square", "reversed")
    g = tf.Graph()
    x, result = build(g, delay, kinds)
    data = np.random.default_rng(0).standard_normal(size).astype(np.float32)
    feed = {x: data}

    with tf.Session(graph=g, inter_op_threads=1) as sess:
        seq_value, seq_time = timed(sess, result, feed, repeats)
    with tf.Session(graph=g, inter_op_threads=len(kinds)) as sess:
        par_value, par_time = timed(sess, result, feed, repeats)
        with tf.trace(trace_path) as tr:  # path None: keep the events, write no file
            traced_value = sess.run(result, feed_dict=feed)

    threads = {e.op: e.thread for e in tr.events
               if type(e).__name__ == "OpEnd" and e.op.startswith("branch_")}
    same = seq_value == par_value == traced_value
    print(f"{len(kinds)} branches of ~{delay * 1000:.0f} ms each")
    print(f"  Session(inter_op_threads=1):   {seq_time * 1000:6.1f} ms  result {seq_value!r}")
    print(f"  Session(inter_op_threads={len(kinds)}): {par_time * 1000:6.1f} ms  "
          f"result {par_value!r}")
    print(f"  speed-up {seq_time / par_time:.1f}x; results identical: {same}; the branches ran "
          f"on {len(set(threads.values()))} threads")
    if trace_path:
        print(f"  trace written to {trace_path}: open it in https://ui.perfetto.dev")
    return {"sequential": seq_value, "parallel": par_value, "traced": traced_value,
            "sequential_s": seq_time, "parallel_s": par_time, "same": same,
            "branch_threads": threads, "trace_path": trace_path}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", metavar="PATH", default=None,
                        help="write the parallel run's trace here (.json or .jsonl)")
    parser.add_argument("--delay", type=float, default=DELAY, help="seconds each branch sleeps")
    args = parser.parse_args()
    main(delay=args.delay, trace_path=args.trace)
