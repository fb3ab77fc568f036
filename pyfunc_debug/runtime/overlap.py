"""The fast path for runs that may need a second thread: inline first, spread on demand.

The calling thread runs the plan in order, as a chain runs (one flat loop that
marks each wrapped function while it runs, ``loop.run_watched``; the steps after
the last one through the plain loop), so parallel structure costs nothing
(SPEC 2b). A wrapped function may block (TF#16: a get waiting for its put) or
run long; the watchdog (``workers.WATCHDOG``) notices a wrapped function that
has not returned after a short while, claims it, and hands the steps after it
to helper threads, which then pick ready steps by dependency. With an
inter-op pool (``width``), wrapped functions are timed and the run moves to
``width`` helper threads as soon as it reaches one measured expensive, as TF's
executor runs inexpensive kernels inline and the rest on its pool.
"""
from __future__ import annotations

import threading
from collections import deque
from time import perf_counter

from .loop import run_steps, run_watched
from .workers import HELPERS, WATCHDOG

__all__ = ["run_overlapped", "EXPENSIVE"]

EXPENSIVE = 15e-6   # seconds: a step worth a thread hand-off (which costs a few µs)
TIME_EVERY = 8      # runs between timed runs, doubled up to TIME_MAX while none is expensive
TIME_MAX = 256      # (a timed run costs up to twice an untimed one on scalar ops)
RETRY_EVERY = 32    # runs: how often a plan whose spread runs were slower tries again,
RETRY_MAX = 1024    # doubled after each retry that was slower too
GAIN = 0.9          # spread runs must beat inline ones by 10% (one noisy run must not decide)


def _watched(plan) -> tuple:
    """``loop.run_watched``'s steps: the fast steps up to the last wrapped function (the
    watched ones), each with its index if it is watched, else -1; and the fast steps
    after it (none of them can block: they run in the plain loop)."""
    blocking = plan.blocking
    end = max((i + 1 for i, b in enumerate(blocking) if b), default=0)
    return (tuple(f + (i if blocking[i] else -1,) for i, f in enumerate(plan.fast_steps[:end])),
            plan.fast_steps[end:])


def _timed(plan, watched) -> tuple:
    """``watched`` with each wrapped function's kernel timed: the steps of a timed run
    (the untimed loop reads no clock)."""
    return tuple((_timer(f[0], f[8], plan),) + f[1:] if f[8] >= 0 else f
                 for f in watched)


def _timer(kernel, i: int, plan):
    def timed(*args):
        t0 = perf_counter()
        r = kernel(*args)
        d = perf_counter() - t0
        samples = plan.samples  # a step's cost: the lesser of its last two times
        plan.costs[i] = min(d, samples[i])
        samples[i] = d
        return r
    return timed


def _first_costly(plan) -> int:
    """The first wrapped-function step measured expensive (the plan's length if none): an
    inline run stops there, so its loop compares indices instead of reading costs."""
    if max(plan.costs, default=0.0) <= EXPENSIVE:  # the usual answer, at C speed
        return len(plan.steps)
    return next((i for i, (c, b) in enumerate(zip(plan.costs, plan.blocking))
                 if b and c > EXPENSIVE), len(plan.steps))


def _dependents(plan) -> list:
    deps = plan.dependents
    if deps is None:
        deps = [[] for _ in plan.steps]
        for i, s in enumerate(plan.steps):
            for d in s.deps:
                deps[d].append(i)
        plan.dependents = deps
    return deps


class _Run:
    """One run's shared state once it spreads; ``box`` holds the watched step."""

    __slots__ = ("plan", "vals", "ctx", "costs", "width", "box", "seen", "lock", "cond", "shared",
                 "done", "ready", "pending", "left", "idle", "progress", "seen_progress", "error",
                 "by_cost", "threads", "stalls")

    def __init__(self, plan, vals, ctx, costs, width):
        self.plan, self.vals, self.ctx, self.costs, self.width = plan, vals, ctx, costs, width
        self.box: list = []
        self.seen = -1
        # most runs never spread: the conditions and queues are made by ``_share``
        self.lock = threading.Lock()
        self.cond = self.done = None
        self.shared = False
        self.ready = self.pending = None
        self.left = self.idle = self.progress = 0
        self.seen_progress = -1
        self.error = None
        self.by_cost = False  # spread at a step measured expensive
        self.threads, self.stalls = 1, 0  # threads on the run; checks that saw no progress

    # -- the calling thread ---------------------------------------------------
    def inline(self, schedule, stop: int) -> bool:
        """Run in plan order, up to (not including) step ``stop``; True once helpers took
        over the rest."""
        plan = self.plan
        steps, tail, timed = schedule
        if self.costs is not None:  # time the first two runs, then now and then (a clock
            runs = plan.runs        # read costs ~0.1 µs)
            if runs >= plan.next_timed:
                if timed is None:
                    timed = _timed(plan, steps)
                    plan.overlap_schedule = (steps, tail, timed)
                steps = timed
                plan.first_costly = None  # costs change
                plan.next_timed = runs + (1 if runs < 1 else plan.timed_gap or TIME_EVERY)
            plan.runs = runs + 1
        whole = stop >= len(steps)  # (a costly step is watched: stop is in steps or past all)
        got = run_watched(steps if whole else steps[:stop], self.vals, self.ctx, self.box)
        if got == -1 and whole:
            if tail:
                run_steps(tail, self.vals, self.ctx)
            return False
        with self.lock:
            if got >= 0:
                self._finish(got)  # the watchdog shared the run while it ran
                return True
            self._share(stop, running=False)
            self.by_cost = True
            self.threads = self.width  # working threads: the caller waits
        for _ in range(self.width):
            HELPERS.submit(self.work)
        return True

    def join(self) -> None:
        """Help until the run ends; spread by cost, only wait, as a thread pool's caller
        does (numpy's temporaries cost several times more in the main thread: glibc
        returns the main heap's big blocks to the system each time)."""
        if self.by_cost:
            with self.done:
                while self.left and self.error is None:
                    self.done.wait()
        else:
            self.work()
        if self.error is not None:
            raise self.error

    # -- the watchdog thread ----------------------------------------------------
    def check(self, late: bool = False) -> None:
        """Spread the run if its watched step has not returned since the last check,
        or add a helper if every thread is stuck while steps are ready. A ``late``
        check starts over: it only says the GIL or the machine was busy."""
        spawn = False
        with self.lock:
            if self.error is not None:
                return
            if late:
                self.seen = self.seen_progress = -1
                return
            if not self.shared:
                box = self.box
                k = box[-1] if box else -1
                if k < 0 or k != self.seen:
                    self.seen = k
                    return
                try:
                    k = box.pop()  # the step running now (a later one, if k just ended)
                except IndexError:
                    self.seen = -1
                    return
                self._share(k, running=True)
                self.threads = 2
                spawn = True
            elif self.ready and not self.idle and self.progress == self.seen_progress:
                # all threads stuck: one more, after longer stalls the more there are
                # beyond the width (long numpy work is not a deadlock)
                self.stalls += 1
                spawn = self.stalls > self.threads - self.width
                if spawn:
                    self.stalls = 0
                    self.threads += 1
            else:
                self.stalls = 0
            self.seen_progress = self.progress
        if spawn:
            HELPERS.submit(self.work)

    # -- shared scheduling (under ``cond``) -------------------------------------
    def _share(self, m: int, running: bool) -> None:
        """Steps before ``m`` are done; ``m`` runs now (or is ready); the rest wait for
        their dependencies."""
        steps = self.plan.steps
        _dependents(self.plan)
        n = len(steps)
        self.cond = threading.Condition(self.lock)   # helpers wait here for ready steps
        self.done = threading.Condition(self.lock)   # a calling thread that does not work
        pending = self.pending = [0] * n
        ready = self.ready = deque()
        for j in range(m + 1, n):
            c = 0
            for d in steps[j].deps:
                if d >= m:
                    c += 1
            pending[j] = c
            if not c:
                ready.append(j)
        if not running:
            ready.appendleft(m)
        self.left = n - m
        self.seen_progress = -1
        self.shared = True

    def _finish(self, i: int) -> None:
        self.left -= 1
        self.progress += 1
        pending, ready = self.pending, self.ready
        woken = 0
        for j in self.plan.dependents[i]:
            pending[j] -= 1
            if not pending[j]:
                ready.append(j)
                woken += 1
        if not self.left:
            self.cond.notify_all()
            self.done.notify_all()
        elif woken and self.idle:
            self.cond.notify(woken)

    def work(self) -> None:
        """Run ready steps until none is left (or one failed)."""
        cond, psteps, vals, ctx, costs = (self.cond, self.plan.parallel_steps, self.vals,
                                          self.ctx, self.costs)
        samples = self.plan.samples
        while True:
            with cond:
                while not self.ready and self.left and self.error is None:
                    self.idle += 1
                    try:
                        cond.wait()
                    finally:
                        self.idle -= 1
                if self.error is not None or not self.left:
                    return
                i = self.ready.popleft()
            try:
                t0 = perf_counter()
                run_steps((psteps[i],), vals, ctx)
                if costs is not None:
                    d = perf_counter() - t0
                    costs[i] = min(d, samples[i])
                    samples[i] = d
            except BaseException as e:  # noqa: BLE001 - raised by the calling thread
                with cond:
                    if self.error is None:
                        self.error = e
                    cond.notify_all()
                    self.done.notify_all()
                return
            with cond:
                self._finish(i)


def run_overlapped(plan, vals, ctx, width: int = 1) -> None:
    """Run ``plan`` inline, spreading to helpers on demand (see the module doc).

    ``width`` > 1 (an inter-op pool): time wrapped functions and spread over
    ``width`` threads at the first one measured expensive.
    """
    schedule = plan.overlap_schedule  # (watched steps, the steps after, the timed steps)
    if schedule is None:
        schedule = plan.overlap_schedule = (*_watched(plan), None)
    costs, timings, stop = None, None, len(plan.steps)
    if width > 1:
        if plan.costs is None:  # a step's cost: the lesser of its last two times
            plan.costs = [0.0] * len(plan.steps)
        if plan.samples is None:
            plan.samples = [0.0] * len(plan.steps)
        costs = plan.costs
        timings = plan.timings
        if timings is None:
            timings = plan.timings = [0.0] * 4
        # threads never hurt: spread only while spread runs beat inline ones (Python work
        # holding the GIL does not gain), by the better of the last two of each (noise);
        # try again now and then
        if not (min(timings[2:]) > GAIN * min(timings[:2]) and
                plan.runs % (plan.retry_gap or RETRY_EVERY)):
            stop = plan.first_costly
            if stop is None:
                stop = plan.first_costly = _first_costly(plan)
                gap = plan.timed_gap or TIME_EVERY
                plan.timed_gap = min(2 * gap, TIME_MAX) if stop == len(plan.steps) \
                    else TIME_EVERY
    run = _Run(plan, vals, ctx, costs, width)
    WATCHDOG.watch(run)
    t0 = perf_counter()
    try:
        if run.inline(schedule, stop):
            if costs is not None:
                plan.first_costly = None  # helpers time the steps they run
            run.join()
        if timings is not None:  # a run the watchdog spread counts as inline
            if run.by_cost:
                spent = perf_counter() - t0
                timings[2:] = spent, timings[2]
                gap = plan.retry_gap or RETRY_EVERY
                plan.retry_gap = min(2 * gap, RETRY_MAX) if spent > GAIN * min(timings[:2]) \
                    else RETRY_EVERY
            else:
                timings[:2] = perf_counter() - t0, timings[0]
    except BaseException as e:
        with run.lock:  # helpers stop taking steps (KeyboardInterrupt, an op's error)
            if run.error is None:
                run.error = e
            if run.shared:
                run.cond.notify_all()
        raise
    finally:
        WATCHDOG.unwatch(run)
