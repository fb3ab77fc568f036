"""Recording a small array never releases the interpreter lock (issue 24).

TensorFlow and JAX call callbacks on threads that share the lock with the
framework's own Python threads. numpy's ``argmin``, ``argmax`` and BLAS ``dot``
release it even on 64 elements, and each release let another thread in for up
to a switch interval: a recorded call cost several hundred microseconds of
waiting in a ``tf.data`` pipeline. Counted, not timed: with a long switch
interval, a thread waiting for the lock runs only when the code under test
releases it."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.external_calls import CallbackRun
from pyfunc_debug.trace.pending import pending
from pyfunc_debug.trace.summary import summarize


def _other_thread_ran(fn, n: int = 300) -> int:
    """How many times a thread waiting for the lock ran while ``fn`` ran up to ``n`` times
    (it stops at the first: a release is rare to catch, each lasting a microsecond or so,
    and the waiting thread then keeps the lock for the switch interval)."""
    count, stop = [0], [False]

    def spin():
        while not stop[0]:
            count[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1.0)   # no forced switch while fn runs: only its releases
    try:
        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        before = count[0]
        for _ in range(n):
            fn()
            if count[0] != before:
                break
        ran = count[0] - before
        stop[0] = True
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    return ran


ARRAYS = [np.random.default_rng(0).random(64, dtype=np.float32).reshape(8, 8),
          np.arange(1024, dtype=np.float64), np.arange(300, dtype=np.int32),
          np.array([1.0, np.nan, np.inf], np.float32)]


def test_the_check_sees_a_release():   # else the tests below could not fail
    x, ones = ARRAYS[0].ravel(), np.ones(64, np.float32)
    assert _other_thread_ran(lambda: x.dot(ones), n=50_000) > 0


@pytest.mark.parametrize("a", ARRAYS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_a_small_arrays_summary_keeps_the_lock(a):
    assert _other_thread_ran(lambda: summarize(a)) == 0


@pytest.mark.parametrize("a", ARRAYS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_a_pending_summary_keeps_the_lock(a):
    assert _other_thread_ran(lambda: pending(a, a.tobytes(), True)) == 0


def test_a_recorded_callback_keeps_the_lock(tmp_path):
    run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
    x = ARRAYS[0]
    with pfd.trace(tmp_path / "t.jsonl"):
        run.call(op, lambda v: v + 1, (x,))   # the run starts: not counted
        assert _other_thread_ran(lambda: run.call(op, lambda v: v + 1, (x,))) == 0
        run.end()
