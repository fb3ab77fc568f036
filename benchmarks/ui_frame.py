"""The UI thread's CPU per tick on a running program, without the program (issue 24).

    python benchmarks/ui_frame.py [--per-tick 400] [--ticks 40] [--rounds 5]

Why: a program whose Python callbacks run hot is bound by the interpreter lock,
so every millisecond the UI draws is a millisecond the program waits (and a
callback that asks for the lock meanwhile waits up to the switch interval). The
whole-program ratios of ``real_pipeline.py`` move by more than a change to the
UI does; this counts the UI's own CPU, which they do not disturb.

How: events of a framework run (``--per-tick`` callback calls' ``OpStart`` and
``OpEnd`` a tick, 8x8 float32 values, as the UI's link queues them: small
summaries pending, taken when the UI shows them) are recorded once, then fed
to a headless app (120x40) by hand: per tick the bridge's worker-side entry
takes them, ``tick()`` applies them, and the app
gets the time to draw (Textual's frame). Per tick, in the UI thread's CPU time
(``time.thread_time``): the whole tick and frame, and, as the baseline, the same
events applied to the model with every summary taken and every log line
formatted, without any widget (what a UI that took each event in full would
pay before drawing anything; the app takes summaries and formats lines only
for what it shows). The feeding, which runs on the program's threads in a real
run, is measured apart. Medians of ``--rounds``.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time

import numpy as np

from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.external_calls import CallbackRun
from pyfunc_debug.trace.pending import settled
from pyfunc_debug.tui.app import TICK, PfdApp
from pyfunc_debug.tui.bridge import Bridge
from pyfunc_debug.tui.model import RunModel

SIZE = (120, 40)
DRAW = 0.06   # seconds the app gets after each tick to draw its frame


def record(calls: int) -> list:
    """The events of ``calls`` calls of two callback ops as the UI's link queues them (small
    summaries pending, values kept: ``tui.bridge``)."""
    run = CallbackRun("tensorflow")
    ops = [ExternalOp("augment", "EagerPyFunc", "prog.py:7"),
           ExternalOp("scale", "EagerPyFunc", "prog.py:9")]
    data = np.random.default_rng(0).random((8, 8), dtype=np.float32)

    def program():
        for i in range(calls):
            run.call(ops[i % 2], lambda a: (a - a.mean()) / (a.std() + np.float32(1e-6)),
                     (data,))
        run.end()

    bridge = Bridge(lambda pause: None)
    bridge.run(program)
    return list(bridge.events)


def model_only(events: list, per_tick: int, ticks: int) -> float:
    """UI-thread CPU per tick to apply the events, take every summary and format every
    log line, no widget."""
    model = RunModel()
    model.apply(events[0])
    t0 = time.thread_time()
    for k in range(ticks):
        batch = events[1 + k * per_tick:1 + (k + 1) * per_tick]
        settled(batch)   # the pending summaries: what any UI of these events takes
        for e in batch:
            model.apply(e)
            model.line(e, True)
    return (time.thread_time() - t0) / ticks


async def with_app(events: list, per_tick: int, ticks: int) -> tuple[float, float]:
    """(UI-thread CPU per tick for tick + frame, CPU per tick the feeding took apart)."""
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=True)
    async with app.run_test(size=SIZE) as pilot:
        app._ticker.pause()   # ticks come from here, with a known number of events each
        put = app.bridge._on_event
        app.bridge.deferred = True   # as the link sets it: the events hold pending summaries
        put(events[0])
        app.tick()
        await pilot.pause()
        await asyncio.sleep(10 * DRAW)   # the first screen is drawn in full: not measured
        fed = 0.0
        t0 = time.thread_time()
        for k in range(ticks):
            t = time.thread_time()
            for e in events[1 + k * per_tick:1 + (k + 1) * per_tick]:
                put(e)
            fed += time.thread_time() - t
            app.tick()
            await asyncio.sleep(DRAW)
        total = time.thread_time() - t0 - fed
    return total / ticks, fed / ticks


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-tick", type=int, default=400,
                    help="events a tick (400: 1,600 events/s at 4 ticks a second)")
    ap.add_argument("--ticks", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    events = record(a.per_tick * a.ticks // 2 + 1)
    base, full, fed = [], [], []
    for _ in range(a.rounds):
        base.append(model_only(events, a.per_tick, a.ticks))
        f, d = asyncio.run(with_app(events, a.per_tick, a.ticks))
        full.append(f)
        fed.append(d)
    b, f, d = (statistics.median(x) * 1e3 for x in (base, full, fed))
    print(f"UI thread, {a.per_tick} events a tick, {SIZE[0]}x{SIZE[1]}, {a.rounds} rounds "
          f"(medians, ms of CPU a tick; the UI ticks every {TICK} s)")
    print(f"  every summary and line taken, no widget   {b:7.2f}   1.00x")
    print(f"  tick and Textual's frame                  {f:7.2f}   {f / b:.2f}x")
    print(f"  the same a second                         {f / TICK:7.1f}   (ms of CPU, the lock "
          f"the program waits for)")
    print(f"  feeding (the program's threads, apart)    {d:7.2f}")


if __name__ == "__main__":
    main()
