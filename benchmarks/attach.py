"""Attach: events/s streamed to an attached client, and the target's slowdown.

    python benchmarks/attach.py [--n 1000] [--runs 20] [--pairs 20] [--size 1] [--capture none|summary]
    python benchmarks/attach.py --callbacks 20000 [--rounds 5]

A ``--n``-op ``py_func`` chain (float32 values of ``--size`` elements) runs
``--runs`` times with nothing attached, then ``--runs`` times serving a
client in another process (``RemoteLink``: it decodes every event) with no
breakpoint, then in ``--pairs`` pairs of blocks of 10 runs, streaming and not
(the slowdown is the median of the blocks' ratios: a noisy machine hits both
blocks of a pair alike; see ``blocks``), then with nothing attached again. Prints the median run times, the target's
slowdown (the goal is <= 3x), and the events per second that reached the
client (from the first attached run's start to the last event's arrival). The
stream's cost per op is roughly constant, so the ratio depends on the work
each op does: ``--size 1`` (almost none) is the worst case.

``--callbacks CALLS``: a framework callback (``x + 1`` on an 8x8 float32 array, as
the TensorFlow and JAX adapters call it) ``CALLS`` times, unserved and served to a
client in another process in each way one attaches: ``--capture none``,
``--capture summary`` from the console (summaries taken on the calling thread),
and from the UI (its small arrays copied, summarised by the UI when shown). Prints
the calling thread's CPU per call and the process's (the sender thread's too).
"""
from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import textwrap
import time

import numpy as np

import pyfunc_debug as pfd
from pyfunc_debug.debug.frontend import LocalLink
from pyfunc_debug.remote.server import Server

CLIENT = textwrap.dedent("""
    import sys, time
    from pyfunc_debug import events as ev
    from pyfunc_debug.remote.client import RemoteLink
    link = RemoteLink(sys.argv[1], sys.argv[2], capture=sys.argv[4])
    runs, want, count, last = 0, int(sys.argv[3]), 0, 0.0
    def on_event(e):
        global runs, count, last
        count += 1
        last = time.time()
        if type(e) is ev.RunEnd:
            runs += 1
    link.start(on_event)
    while runs < want and not link.ended.is_set():
        time.sleep(0.005)
    print(count, last, flush=True)
    link.quit()
""")


CALLBACK_CLIENT = textwrap.dedent("""
    import sys
    from pyfunc_debug.remote.client import RemoteLink
    link = RemoteLink(sys.argv[1], sys.argv[2], capture=sys.argv[3], pending=sys.argv[4] == "1")
    class Frontend:   # takes pending summaries (it reads none)
        deferred = False
    link.start(lambda e: None, lambda p: link.answer("continue"), settles=Frontend())
    link.wait()
""")


def f(x):
    return x + 1


def callbacks(calls: int, rounds: int) -> None:
    """CPU per call of a framework callback (``x + 1`` on 8x8 float32, as the adapters
    call it) served to a client in another process, per way of attaching, against the
    same calls unserved: the calling thread's CPU, and the process's (its sender
    thread too), medians of ``rounds`` rounds."""
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun

    run, op = CallbackRun("bench"), ExternalOp("augment", "EagerPyFunc")
    x = np.random.default_rng(0).random((8, 8), dtype=np.float32)

    def inc(a):
        return a + np.float32(1)

    def loop() -> tuple:
        c0, p0 = time.thread_time(), time.process_time()
        for _ in range(calls):
            run.call(op, inc, (x,))
        return (time.thread_time() - c0) / calls * 1e6, (time.process_time() - p0) / calls * 1e6

    ways = {"unserved": None, "attached, --capture none": ("none", "0"),
            "attached, --capture summary (console)": ("summary", "0"),
            "attached, --capture summary (the UI: pending)": ("summary", "1")}
    got = {w: [] for w in ways}
    for _ in range(rounds):
        for way, how in ways.items():
            if how is None:
                loop()
                got[way].append(loop())
                continue
            server = Server("127.0.0.1", 0, "bench", LocalLink())
            client = subprocess.Popen([sys.executable, "-c", CALLBACK_CLIENT,
                                       f"127.0.0.1:{server.port}", "bench", *how])
            try:
                while server._client is None or not server.link._active:
                    time.sleep(0.01)
                loop()                      # warm: the first calls name the op
                got[way].append(loop())
                while server._client is not None and server._client.stream.queue:
                    time.sleep(0.01)        # sent: the next way starts with nothing queued
            finally:
                server.close(0)
                client.wait(60)
    base = statistics.median(t[0] for t in got["unserved"])
    print(f"a framework callback on float32[8,8], {calls:,} calls, {rounds} rounds (medians, "
          f"µs of CPU a call)")
    print(f"  {'':48} {'calling thread':>14} {'process':>8} {'over unserved':>14}")
    for way, times in got.items():
        caller = statistics.median(t[0] for t in times)
        process = statistics.median(t[1] for t in times)
        print(f"  {way:48} {caller:14.1f} {process:8.1f} {process - base:+14.1f}")


def build_chain(n: int):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32)
        y = x
        for _ in range(n):
            y = pfd.compat.v1.py_func(f, [y], pfd.float32)
    return g, x, y


def timed_runs(sess, y, feed, runs: int) -> list:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(y, feed)
        times.append(time.perf_counter() - t0)
    return times


def blocks(sess, y, feed, server, pairs: int, capture: str, size: int = 10) -> list:
    """Per pair of blocks, attached time / unattached time (median run of each block).

    A block of ``size`` runs with the client's stream on, then ``size`` with the
    server's link stopped (as a detach would; the client stays connected), the
    first run of each block left out. Before an unattached block the queue is
    drained, so it does not pay for the attached block's last events: the
    attached block pays its own sending, as a process streaming all along does.
    """
    link, client = server.link, server._client
    stream = client.stream                  # the attached client's own stream
    ratios = []
    for _ in range(pairs):
        attached = statistics.median(timed_runs(sess, y, feed, size + 1)[1:])
        link.stop()
        while stream.queue:
            time.sleep(0.001)
        alone = statistics.median(timed_runs(sess, y, feed, size + 1)[1:])
        link.start(stream.on_event, functools.partial(server._on_pause, client),
                   capture=capture, records=stream.sink)
        ratios.append(attached / alone)
    return ratios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=20, help="pairs of blocks of 10 runs")
    ap.add_argument("--size", type=int, default=1)
    ap.add_argument("--capture", choices=("none", "summary"), default="none")
    ap.add_argument("--callbacks", type=int, metavar="CALLS",
                    help="instead: a framework callback's CPU per call, served and not")
    ap.add_argument("--rounds", type=int, default=5, help="with --callbacks")
    args = ap.parse_args()
    if args.callbacks:
        callbacks(args.callbacks, args.rounds)
        return
    g, x, y = build_chain(args.n)
    feed = {x: np.ones(args.size, np.float32) if args.size > 1 else np.float32(1)}
    with pfd.Session(graph=g) as sess:
        sess.run(y, feed)                                   # warm: plan compiled
        base_runs = timed_runs(sess, y, feed, args.runs)
        server = Server("127.0.0.1", 0, "bench", LocalLink())
        client = subprocess.Popen([sys.executable, "-c", CLIENT, f"127.0.0.1:{server.port}",
                                   "bench", str(args.runs + 11 * args.pairs), args.capture],
                                  stdout=subprocess.PIPE, text=True)
        server.wait_for_client(30)
        wall0 = time.time()
        attached = statistics.median(timed_runs(sess, y, feed, args.runs))
        ratios = sorted(blocks(sess, y, feed, server, args.pairs, args.capture))
        count, last = client.communicate(timeout=300)[0].split()
        server.close()
        # the baseline before and after: a machine whose load changes meanwhile shows less
        base = statistics.median(base_runs + timed_runs(sess, y, feed, args.runs))
    count, seconds = int(count), float(last) - wall0
    q = len(ratios) // 4
    print(f"{args.n}-op py_func chain, float32[{args.size}], capture={args.capture!r}")
    print(f"  nothing attached      {base * 1e3:9.2f} ms/run  ({base / args.n * 1e6:.2f} µs/op)"
          f"  median of {2 * args.runs} runs")
    print(f"  client attached       {attached * 1e3:9.2f} ms/run  "
          f"({attached / args.n * 1e6:.2f} µs/op)  median of {args.runs} runs")
    print(f"  target slowdown       {statistics.median(ratios):9.2f}x  (goal <= 3x; median of "
          f"{len(ratios)} pairs of blocks, middle half {ratios[q]:.2f}–{ratios[-q - 1]:.2f}x)")
    print(f"  streamed to client    {count:,} events in {seconds:.2f} s = "
          f"{count / seconds:,.0f} events/s")


if __name__ == "__main__":
    main()
