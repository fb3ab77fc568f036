"""Recording a framework's callbacks (``external_calls.CallbackRun``, issue 24): events
sent straight to the one subscriber are the bus's events — same fields, a failing
subscriber reported once and the call unharmed, a ``.jsonl`` trace holding every call —
and complex values are summarised under warnings-as-errors before the user's function
runs (JAX's ``test_callback_works_with_all_types`` for complex64)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.external_calls import CallbackRun


def _calls(n, value, func=lambda v: v * 2):
    run, op = CallbackRun("test"), ExternalOp("double", "PyFunc")
    out = [run.call(op, func, (value,)) for _ in range(n)]
    run.end()
    return out


def test_events_carry_every_field_and_summaries():
    x = np.arange(8, dtype=np.float32)
    with pfd.trace(capture="summary") as tr:
        _calls(2, x)
    kinds = [type(e).__name__ for e in tr.events]
    assert kinds == ["RunStart", "OpStart", "OpEnd", "OpStart", "OpEnd", "RunEnd"]
    start, end = tr.events[1], tr.events[2]
    assert (start.op, start.op_type, start.producers, start.worker, start.pid) == (
        "double", "PyFunc", (), None, None)
    assert end.duration_ns == end.t_ns - start.t_ns >= 0
    assert end.inputs[0].max == 7.0 and end.outputs[0].max == 14.0
    assert end.worker is None and end.pid is None
    assert [e.seq for e in tr.events] == sorted(e.seq for e in tr.events)


def test_a_failing_subscriber_is_reported_once_and_the_calls_go_on():
    def bad(event):
        raise ValueError("subscriber bug")
    sub = ev.subscribe(bad, capture="summary")
    try:
        with pytest.warns(RuntimeWarning, match="subscriber bug") as caught:
            out = _calls(3, np.ones(4, np.float32))
    finally:
        sub.close()
    assert all(np.array_equal(o, np.full(4, 2, np.float32)) for o in out)
    assert len([w for w in caught if "subscriber bug" in str(w.message)]) == 1


def test_a_jsonl_trace_holds_every_call(tmp_path):
    path = tmp_path / "calls.jsonl"
    with pfd.trace(path) as tr:
        _calls(50, np.ones(64, np.float32))
    assert tr.op_count == 50
    assert pfd.load_trace(str(path)).to_pandas().shape[0] == 50


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_arguments_under_warnings_as_errors(dtype):
    z = np.array([1 + 2j, np.nan, 3j], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pfd.trace(capture="summary") as tr:
            out = _calls(1, z, lambda v: v.conj())
    assert np.array_equal(out[0], z.conj(), equal_nan=True)
    end = [e for e in tr.events if type(e) is ev.OpEnd][0]
    assert (end.inputs[0].nan, end.outputs[0].nan) == (1, 1)
    assert end.inputs[0].max == pytest.approx(3.0)


@pytest.mark.parametrize("size", [1000, 1 << 20])
def test_a_callback_writing_into_its_input_is_reported_small_or_big(size):
    # a big float32 input is compared on the sample its summary gathered before the call
    def scale(v):
        v[::256] *= 3          # hits every sampled element of a big array
        return v.sum()
    with pfd.trace(capture="summary") as tr:
        _calls(1, np.ones(size, np.float32), scale)
    found = [e for e in tr.events if isinstance(e, ev.Warning) and e.kind == "input_modified"]
    assert len(found) == 1, [type(e).__name__ for e in tr.events]
    assert "wrote into its input 0 in place" in found[0].message
    assert found[0].inputs[0].max == 3.0
    end = next(e for e in tr.events if isinstance(e, ev.OpEnd))
    assert end.inputs[0].max == 1.0       # the OpEnd keeps the input as given


def test_a_callback_reading_a_big_input_is_not_reported():
    with pfd.trace(capture="summary") as tr:
        _calls(2, np.ones(1 << 20, np.float32), lambda v: v * 2)
    assert not [e for e in tr.events if isinstance(e, ev.Warning)]


def test_a_call_paused_while_its_sink_goes_away_ends_cleanly():
    """An attached client that leaves while a framework's call is paused takes its settling
    sink away (``bus.defer`` None): the call ended with AttributeError, and TensorFlow's
    pipeline — the user's program — died with it."""
    import io

    from pyfunc_debug.debug import Debugger
    from pyfunc_debug.debug.console import DiagnosticPrinter
    printer = DiagnosticPrinter(stdout=io.StringIO())
    sub = ev.subscribe(printer, "summary", settles=printer)

    def leave(pause):
        sub.close()   # the client goes: its subscription with it
        return "continue"
    dbg = Debugger(on_pause=leave)
    dbg.break_on(op="cb")
    run = CallbackRun("tensorflow")
    try:
        with dbg:
            out = run.call(ExternalOp("cb", "PyFunc", "x.py:1"), lambda v: v * 2,
                           (np.ones(3, np.float32),))
    finally:
        run.end()
        sub.close()
    assert out.tolist() == [2.0, 2.0, 2.0]


def test_a_program_ends_after_the_callbacks_a_framework_thread_is_still_running():
    """``external_calls.settle`` (run when a program ends): a tf.data prefetch thread still
    in a recorded call when Python's shutdown freed its pipeline hung the process at
    exit. It waits, the lock let go, until the calls in flight have returned."""
    import threading
    import time

    from pyfunc_debug import external_calls
    started, done = threading.Event(), []

    def slow(v):
        started.set()
        time.sleep(0.3)   # the interpreter lock let go, as a real call's numpy work does
        done.append(v)
        return v

    run, op = CallbackRun("test"), ExternalOp("slow", "PyFunc")
    with pfd.trace(capture="summary") as tr:
        worker = threading.Thread(target=run.call, args=(op, slow, (np.float32(1),)))
        worker.start()
        started.wait(10)
        external_calls.settle(quiet=0.05, limit=10)
        assert done == [np.float32(1)]   # it waited for the call in flight
        worker.join()
    run.end()
    assert [type(e).__name__ for e in tr.events].count("OpEnd") == 1
    assert not external_calls._busy
