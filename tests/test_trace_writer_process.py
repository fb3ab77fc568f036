"""A summary ``.jsonl`` trace of framework callbacks (issue 24): small arrays' summaries are
taken later, by the trace's writer process (``trace.pending``, ``trace.writer_process``).
What a user reads must not change: every summary in the file and in ``tr.events`` equals
``summarize`` of the same array, diagnostics still come at their call, a killed program's
trace keeps every batch it sent, and a writer process that dies is an error on close."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.external_calls import CallbackRun
from pyfunc_debug.trace.pending import pending, settle_all
from pyfunc_debug.trace.summary import summarize
from pyfunc_debug.trace.writer_process import settle_lines

VALUES = [np.arange(64, dtype=np.float32).reshape(8, 8) * 0.37,
          np.linspace(-3, 3, 5),                       # float64, fewer than the preview's 6
          np.arange(-20, 20, dtype=np.int32),
          np.arange(7, dtype=np.uint8),
          np.full(3, 1e36, np.float32),               # summarize's float64 path for the mean
          np.array([1.0, np.nan, 2.0], np.float32),   # NaN: summarised at once
          np.array([True, False]),                    # not deferred
          np.float32(2.5),                            # a scalar
          np.zeros(1025, np.float32),                 # bigger than DEFER_LIMIT
          np.arange(6.0).reshape(2, 3)[:, ::2]]       # not contiguous


def _record(path, values, func=lambda v: v):
    run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
    with pfd.trace(path) as tr:
        for v in values:
            run.call(op, func, (v,))
        run.end()
        process = tr._writer._process
    return tr, process


def test_every_summary_equals_summarize_in_the_file_and_in_the_window(tmp_path):
    path = tmp_path / "t.jsonl"
    tr, process = _record(path, VALUES)
    assert process is not None and process.proc.returncode == 0   # it ran, and ended
    for events in (list(pfd.load_trace(str(path))), list(tr.events)):
        ends = [e for e in events if e.__class__ is ev.OpEnd]
        assert len(ends) == len(VALUES)
        for e, v in zip(ends, VALUES):
            assert e.inputs == (summarize(v),) and e.outputs == (summarize(v),), v
            assert e.inputs[0].row == summarize(v).row
    assert tr.op_count == len(VALUES) and tr.run_count == 1


def test_diagnostics_come_at_their_call(tmp_path):
    x = np.ones(8, np.float32)

    def make_nan(v):
        return v * np.float32(np.nan)

    def write_in(v):
        v[0] = 7
        return v.copy()

    run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
    with pfd.trace(tmp_path / "t.jsonl") as tr:
        run.call(op, make_nan, (x,))
        run.call(op, write_in, (x.copy(),))
        run.call(op, lambda v: v[:4], (x,))     # another output shape for the same input
        run.end()
    events = list(pfd.load_trace(str(tmp_path / "t.jsonl")))
    kinds = [(type(e).__name__, getattr(e, "kind", "")) for e in events]
    assert ("Warning", "non_finite") in kinds and ("Warning", "input_modified") in kinds
    assert ("Warning", "shape_change") in kinds
    modified = next(e for e in events if getattr(e, "kind", "") == "input_modified")
    assert modified.inputs[0].max == 7.0
    assert "float32[8] min=1 max=1 mean=1" in modified.message   # the call's inputs, settled
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert [type(e).__name__ for e in tr.events] == [type(e).__name__ for e in events]


def test_to_pandas_during_the_recording_sees_every_call(tmp_path):
    run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
    with pfd.trace(tmp_path / "t.jsonl") as tr:
        for _ in range(30):
            run.call(op, lambda v: v + 1, (np.ones(16, np.float32),))
        assert tr.to_pandas().shape[0] == 30
        run.end()


def test_the_writer_process_is_out_of_reach_of_the_terminals_ctrl_c(tmp_path):
    run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
    with pfd.trace(tmp_path / "t.jsonl") as tr:
        run.call(op, lambda v: v, (np.ones(4, np.float32),))
        tr._writer.flush()
        assert os.getsid(tr._writer._process.proc.pid) != os.getsid(0)
        run.end()


def test_a_writer_process_that_dies_is_an_error_naming_it_on_close(tmp_path):
    run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
    with pytest.raises(OSError, match="writer process .* stopped with exit status -9"):
        with pfd.trace(tmp_path / "t.jsonl") as tr:
            run.call(op, lambda v: v, (np.ones(4, np.float32),))
            tr._writer.sync()   # it has said it is ready: it dies with lines of ours
            process = tr._writer._process.proc
            process.kill()
            process.wait()
            for _ in range(3):
                run.call(op, lambda v: v, (np.ones(4, np.float32),))
            run.end()


PROGRAM = textwrap.dedent("""
    import sys, time
    import numpy as np
    import pyfunc_debug as pfd
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun
    run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
    with pfd.trace(sys.argv[1]) as tr:
        for i in range(500):
            run.call(op, lambda v: v + 1, (np.full(32, i, np.float32),))
        tr._writer.flush()
        print(tr._writer._process.proc.pid, flush=True)
        time.sleep(60)
""")


def test_a_killed_programs_trace_keeps_every_batch_it_sent(tmp_path):
    path = tmp_path / "t.jsonl"
    program = subprocess.Popen([sys.executable, "-c", PROGRAM, str(path)],
                               stdout=subprocess.PIPE, text=True)
    try:
        writer = int(program.stdout.readline())
    finally:
        program.send_signal(signal.SIGKILL)
        program.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:   # the writer process ends once its input closes
        try:
            os.kill(writer, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the writer process outlived the program")
    ends = [e for e in pfd.load_trace(str(path)) if e.__class__ is ev.OpEnd]
    assert len(ends) == 500
    assert ends[-1].outputs == (summarize(np.full(32, 500, np.float32)),)


ARRAYS = st.one_of(
    hnp.arrays(st.sampled_from([np.float32, np.float64]), hnp.array_shapes(max_dims=3, max_side=12),
               elements=st.floats(-1e6, 1e6, width=32)),
    hnp.arrays(st.sampled_from([np.int8, np.int64, np.uint16, np.uint64]),
               hnp.array_shapes(max_dims=2, max_side=40)))


@settings(max_examples=60, deadline=None)
@given(st.lists(ARRAYS, min_size=1, max_size=12), st.booleans())
def test_a_batch_settles_to_what_summarize_gives(arrays, checked):
    made = [pending(a, a.tobytes(), checked) for a in arrays]
    kept = [(p, a) for p, a in zip(made, arrays) if p is not None]
    assert all(p is not None for p, a in zip(made, arrays) if 0 < a.size <= 1024 and a.ndim)
    assert settle_all([p for p, _ in kept]) == [summarize(a) for _, a in kept]


def test_an_unchecked_input_holding_nan_or_inf_settles_exactly():
    arrays = [np.array([1, np.nan, np.inf, -2], np.float32), np.array([np.inf, 1.0])]
    made = [pending(a, a.tobytes(), False) for a in arrays]
    assert settle_all(made) == [summarize(a) for a in arrays]
    assert settle_all(made)[0].nan == 1 and settle_all(made)[0].inf == 1


def test_settling_the_lines_sent_gives_the_lines_written_here():
    import orjson
    arrays = [np.arange(10, dtype=np.float32), np.arange(3, dtype=np.int16)]
    rows = [["OpEnd", 1, 1, 5, 9, "f", "PyFunc", None, 3, [pending(a, a.tobytes(), False)],
             []] for a in arrays]
    sent = b"\n".join(orjson.dumps(r) for r in rows) + b"\n"
    here = b"\n".join(orjson.dumps(["OpEnd", 1, 1, 5, 9, "f", "PyFunc", None, 3,
                                    [summarize(a).row], []]) for a in arrays) + b"\n"
    assert settle_lines(sent) == here


def test_without_a_writer_process_the_summaries_are_taken_here(tmp_path, monkeypatch):
    from pyfunc_debug.trace import writer_process

    def refuse(path):
        raise OSError("no processes left")
    monkeypatch.setattr(writer_process, "WriterProcess", refuse)
    path = tmp_path / "t.jsonl"
    with pytest.warns(RuntimeWarning, match="did not start .no processes left.*taken in this"):
        tr, process = _record(path, VALUES)
    assert process is None
    ends = [e for e in pfd.load_trace(str(path)) if e.__class__ is ev.OpEnd]
    assert [e.outputs for e in ends] == [(summarize(v),) for v in VALUES]


@pytest.mark.parametrize("ends", ["at once", "later"])
def test_a_writer_process_that_cannot_start_leaves_the_lines_to_the_program(tmp_path,
                                                                             monkeypatch, ends):
    """An interpreter that is not Python (an embedding application) or a broken
    environment: what was sent before the process said it was ready is written here —
    whether a write finds it gone, or only closing the trace does."""
    interpreter = "/bin/false"
    if ends == "later":   # every line fits in the pipe: found when the trace closes
        interpreter = tmp_path / "not-python"
        interpreter.write_text("#!/bin/sh\nsleep 0.5\nexit 1\n")
        interpreter.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(interpreter))
    path = tmp_path / "t.jsonl"
    with pytest.warns(RuntimeWarning, match="writer process .* exit status 1.*taken in this"):
        tr, process = _record(path, VALUES * 20)
    ends = [e for e in pfd.load_trace(str(path)) if e.__class__ is ev.OpEnd]
    assert [e.outputs for e in ends] == [(summarize(v),) for v in VALUES * 20]
    assert tr.op_count == len(VALUES) * 20


def test_the_writer_process_loads_only_what_settling_needs(tmp_path):
    """It starts while the program runs (at its first callback): without the package's
    ``__init__`` and the engine, its start costs the program's machine less."""
    from pyfunc_debug.trace.writer_process import _BOOT, _PACKAGE
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", _BOOT, _PACKAGE,
                        str(tmp_path / "t.jsonl")], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "r", r.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines()}
    ours = {m for m in loaded if m.startswith("pyfunc_debug.")}
    assert "pyfunc_debug.trace.pending" in ours and "numpy" in loaded
    assert not {m for m in ours if m.split(".")[1] in ("runtime", "graph", "ops", "debug")}
