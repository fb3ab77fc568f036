"""A data pipeline of Python callbacks spread over two Dask workers.

Records are parsed on worker 0, turned into features on worker 1, and scored
in this process. The same graph runs on a plain ``tf.Session()`` and on
``tf.Session(cluster=client)``; the script checks the results are identical
and prints which process ran each op (the events say: ``tf.events.origin``).

    python examples/dask_pipeline.py [--trace dask.json]

With ``--trace`` the cluster run is recorded: the Chrome trace has one
process track per worker (open it in https://ui.perfetto.dev). Without a
scheduler address the script starts a ``LocalCluster`` of two worker
processes; ``--scheduler tcp://HOST:PORT`` uses yours. Needs the
``distributed`` extra (``pip install -e '.[distributed]'``).

A breakpoint on an op placed on a worker pauses it there, answered here
(the local run pauses first, then the cluster run); ``s`` at the pause opens
pdb inside ``features`` in the worker process, on this terminal:

    pyfunc-debug run --break features --console examples/dask_pipeline.py

``--bad-record`` feeds a malformed record, so ``parse`` fails on worker 0
(only the cluster run is made): with ``--break-on error`` the debugger
pauses at that error, and ``pm`` opens pdb in the worker at the ``raise``:

    pyfunc-debug run --break-on error --console examples/dask_pipeline.py --bad-record
"""
import argparse
import os

import numpy as np

import pyfunc_debug as tf

RECORDS = np.array([b"3,1.5", b"4,2.0", b"1,9.25", b"5,0.5"])
BAD_RECORD = b"7;0.25"


def parse(lines):
    """'count,price' byte strings -> two float columns."""
    rows = [line.decode().split(",") for line in lines]
    for line, row in zip(lines, rows):
        if len(row) != 2:
            raise ValueError(f"malformed record {line!r}: expected 'count,price'")
    return (np.array([float(r[0]) for r in rows]), np.array([float(r[1]) for r in rows]))


def features(count, price):
    return np.stack([count * price, np.log1p(count)], axis=1)


def build():
    lines = tf.placeholder(tf.string, [None], name="lines")
    with tf.device("/job:worker/task:0"):
        count, price = tf.numpy_function(parse, [lines], [tf.float64, tf.float64], name="parse")
    with tf.device("/job:worker/task:1"):
        feats = tf.numpy_function(features, [count, price], tf.float64, name="features")
        weighted = tf.multiply(feats, np.array([0.5, 2.0]), name="weigh")
    score = tf.reduce_sum(weighted, axis=1, name="score")
    return lines, score


def main(scheduler=None, trace_path=None, records=RECORDS, compare=True):
    """Both runs' scores (``None`` for the local one without ``compare``), and op name ->
    where it ran ("local" or the worker address)."""
    from dask.distributed import Client, LocalCluster

    graph = tf.Graph()
    with graph.as_default():
        lines, score = build()
    feed = {lines: records}
    local = tf.Session(graph=graph).run(score, feed) if compare else None
    cluster = None if scheduler else LocalCluster(n_workers=2, processes=True,
                                                  threads_per_worker=1, dashboard_address=None)
    client = Client(scheduler or cluster)
    try:
        with tf.Session(graph=graph, cluster=client) as sess, \
                tf.trace(trace_path) as recording:
            remote = sess.run(score, feed)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    where = {}
    for e in recording.events:
        if type(e) is tf.events.OpEnd:
            o = tf.events.origin(e.thread)
            where[e.op] = "local" if o is None else f"{o.address} pid {o.pid}"
    return local, remote, where


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=None, help="write the cluster run's trace here")
    parser.add_argument("--scheduler", default=None, help="a Dask scheduler's address")
    parser.add_argument("--bad-record", action="store_true",
                        help="add a malformed record: parse fails on its worker")
    args = parser.parse_args()
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise SystemExit("this example needs Dask: pip install -e '.[distributed]'") from None
    records = np.append(RECORDS, BAD_RECORD) if args.bad_record else RECORDS
    local, remote, where = main(args.scheduler, args.trace, records, not args.bad_record)
    assert local is None or np.array_equal(local, remote), (local, remote)
    print("scores:", remote)
    print(f"this process: pid {os.getpid()}")
    for op, place in where.items():
        print(f"  {op:10s} ran at {place}")
