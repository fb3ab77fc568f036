"""A summary ``.jsonl`` trace of framework callbacks (issue 24): small arrays' summaries are
left pending in the file and taken when it is read (``trace.pending``). What a user reads
must not change: every summary loaded and in ``tr.events`` equals ``summarize`` of the same
array, diagnostics still come at their call, a killed program's trace keeps every batch it
wrote, and a damaged pending summary is an error naming the file and line."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.external_calls import CallbackRun
from pyfunc_debug.trace.jsonl import TraceFormatError
from pyfunc_debug.trace.pending import MARKED, pending, settle_all, settle_lines
from pyfunc_debug.trace.settle_group import GROUP
from pyfunc_debug.trace.summary import summarize

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
    return tr


def test_every_summary_equals_summarize_in_the_file_and_in_the_window(tmp_path):
    path = tmp_path / "t.jsonl"
    tr = _record(path, VALUES)
    assert MARKED in path.read_bytes()   # pending in the file, settled when read
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


def test_a_damaged_pending_summary_is_an_error_naming_the_file_and_line(tmp_path):
    path = tmp_path / "t.jsonl"
    _record(path, [np.arange(8, dtype=np.float32)] * 3)
    lines = path.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if MARKED in line)
    for damage in ("shorter", "dtype", "not hex", "shape"):
        row = json.loads(lines[at])
        kept = row[9][0]
        if damage == "shorter":
            kept[10] = kept[10][:-2]
        elif damage == "dtype":
            kept[1] = "object"
        elif damage == "not hex":
            kept[10] = "zz" + kept[10][2:]
        else:
            kept[0] = [3, 3]
        bad = tmp_path / f"{damage}.jsonl"
        bad.write_bytes(b"\n".join(lines[:at] + [json.dumps(row).encode()] + lines[at + 1:]))
        with pytest.raises(TraceFormatError, match=rf"{bad.name}:{at + 1}: .*pending.*inputs 0"):
            pfd.load_trace(str(bad))


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
        print("written", flush=True)
        time.sleep(60)
""")


def test_a_killed_programs_trace_keeps_every_batch_it_wrote(tmp_path):
    path = tmp_path / "t.jsonl"
    program = subprocess.Popen([sys.executable, "-c", PROGRAM, str(path)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert program.stdout.readline() == "written\n"
    finally:
        program.send_signal(signal.SIGKILL)
        program.wait()
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


def _group(dtype, shape, elements):
    return st.lists(hnp.arrays(dtype, shape, elements=elements), min_size=GROUP, max_size=30)


GROUPS = st.one_of(
    # magnitudes far apart: where this Python's sum (compensated from 3.12) and a plain
    # one part; NaN, ±Inf, signed zeros and overflowing sums: summarised one by one
    st.sampled_from([(8, 8), (3,), (2, 300)]).flatmap(lambda shape: _group(
        np.float64, shape, st.one_of(st.floats(allow_nan=True), st.sampled_from(
            [1e16, -1e16, 1.0, 1e-300, -0.0, 0.0, 1.7e308]), st.floats(-1e3, 1e3)))),
    st.sampled_from([(8, 8), (5,)]).flatmap(lambda shape: _group(
        st.sampled_from([np.float32, np.float16]), shape,
        st.floats(width=16, allow_nan=True) | st.floats(-1e4, 1e4, width=16)) | _group(
        np.float32, shape, st.floats(width=32, allow_nan=True))),
    st.sampled_from([(4, 4), (9,)]).flatmap(lambda shape: _group(
        st.sampled_from([np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64]),
        shape, None)))


@settings(max_examples=80, deadline=None)
@given(GROUPS)
def test_summaries_of_one_shape_settled_together_equal_summarize_bit_for_bit(arrays):
    """``settle_all`` takes a group of one dtype and shape in numpy (``settle_group``):
    each summary must be the one ``summarize`` gives, its mean to the last bit, on every
    Python (``sum`` of floats compensates from 3.12 on)."""
    made = [pending(a, a.tobytes(), False) for a in arrays]
    assert all(p is not None for p in made)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # nothing of ours warns
        got = settle_all(made)
    assert list(map(repr, got)) == [repr(summarize(a)) for a in arrays]   # NaN == NaN


def test_an_unchecked_input_holding_nan_or_inf_settles_exactly():
    arrays = [np.array([1, np.nan, np.inf, -2], np.float32), np.array([np.inf, 1.0])]
    made = [pending(a, a.tobytes(), False) for a in arrays]
    assert settle_all(made) == [summarize(a) for a in arrays]
    assert settle_all(made)[0].nan == 1 and settle_all(made)[0].inf == 1


def test_settling_pending_lines_gives_the_lines_of_summaries_taken_at_the_call():
    import orjson
    arrays = [np.arange(10, dtype=np.float32), np.arange(3, dtype=np.int16)]
    rows = [["OpEnd", 1, 1, 5, 9, "f", "PyFunc", None, 3, [pending(a, a.tobytes(), False)],
             []] for a in arrays]
    kept = b"\n".join(orjson.dumps(r) for r in rows) + b"\n"
    here = b"\n".join(orjson.dumps(["OpEnd", 1, 1, 5, 9, "f", "PyFunc", None, 3,
                                    [summarize(a).row], []]) for a in arrays) + b"\n"
    assert settle_lines(kept) == here


def test_an_in_memory_trace_settles_every_summary_when_read(tmp_path):
    """In memory too, a callback leaves its summaries pending; whatever reads the events
    (``tr.events``, the counts, a Chrome file saved on exit) sees each summary settled."""
    from pyfunc_debug.trace.pending import PendingOpEnd
    run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
    with pfd.trace(tmp_path / "t.json") as tr:
        for v in VALUES:
            run.call(op, lambda v: v, (v,))
        assert any(e.__class__ is PendingOpEnd for e in tr._events)   # deferred at the call
        during = tr.events
        run.call(op, lambda v: v, (VALUES[0],))   # appended after that read: not in it
        assert len(during) == len(tr._events) - 2
        assert not any(e.__class__ is PendingOpEnd for e in during)
        run.end()
    ends = [e for e in tr.events if isinstance(e, ev.OpEnd)]
    assert all(e.__class__ is ev.OpEnd for e in ends)
    assert [e.outputs for e in ends] == [(summarize(v),) for v in VALUES + VALUES[:1]]
    assert tr.op_count == len(VALUES) + 1
    chrome = json.loads((tmp_path / "t.json").read_text())
    assert sum(1 for e in chrome["traceEvents"] if e.get("ph") == "X") >= len(VALUES) + 1


def test_the_consoles_printer_takes_pending_summaries_and_prints_the_same_diagnostics():
    """``run --console``: its printer reads no summary of an op's end, so callbacks leave
    theirs pending there too; the diagnostics, taken from them, read as before."""
    import io

    from pyfunc_debug.debug.console import DiagnosticPrinter
    from pyfunc_debug.debug.frontend import LocalLink

    def make_nan(v):
        return v * np.float32(np.nan)

    def printed(settles):
        run, op = CallbackRun("test"), ExternalOp("f", "PyFunc")
        printer = DiagnosticPrinter(io.StringIO())
        link = LocalLink()
        link.start(printer, lambda p: link.answer("continue"), capture="summary",
                   settles=printer if settles else None)
        try:
            run.call(op, lambda v: v + 1, (np.ones((2, 3), np.float32),))
            run.call(op, make_nan, (np.ones((2, 3), np.float32),))
            run.call(op, lambda v: v[:1], (np.ones((2, 3), np.float32),))
            run.end()
        finally:
            link.stop()
        return printer.deferred, printer.stdout.getvalue()

    deferred, text = printed(True)
    assert deferred   # the summaries were left pending
    assert (False, text) == printed(False)
    assert "made 6 NaN in output 0 from finite inputs" in text
    assert "in its call with in 0 = [1, 1, 1, 1, 1, 1] (float32)" in text   # settled to say it
    assert "returned shape (1, 3)" in text
