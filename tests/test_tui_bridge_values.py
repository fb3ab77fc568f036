"""The bridge keeps each op's latest values for the inspector and queues its events as
they came (issue 24: this runs on the program's threads, so it builds records in C and
copies nothing: stripping the values cost about 3 µs an event there); the record of the
session leaves the values out; what the inspector gets are the values themselves."""
from __future__ import annotations

import numpy as np
import pytest

from pyfunc_debug import events as ev
from pyfunc_debug.trace.summary import non_finite, summarize

pytest.importorskip("textual")
from pyfunc_debug.tui.bridge import Bridge  # noqa: E402
from pyfunc_debug.tui.model import RunModel  # noqa: E402


def _bridge() -> Bridge:
    return Bridge(lambda pause: None)


def _end(ins, outs, **tail):
    return ev.OpEnd(7, 3, 1_000, 11, "augment", "EagerPyFunc", None, 500, ins, outs, **tail)


def test_an_op_end_is_queued_as_it_came_its_record_has_no_values_the_latest_call_has():
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    y = np.full(3, np.nan, np.float32)
    s_in, s_out = summarize(x, 1 << 16), summarize(y, 1 << 16)
    assert non_finite(s_out) and s_in.value is not None
    b = _bridge()
    end = _end((s_in,), (s_out,))
    b._on_event(end)
    (queued,) = b.drain(10)
    assert queued is end
    (recorded,) = list(b.recorded)
    assert recorded.inputs == (s_in._replace(value=None),)
    assert recorded.outputs[0].value is None and recorded.outputs[0].row == s_out.row
    assert non_finite(recorded.outputs[0])     # its NaNs kept marked (rows, JSON)
    for call in (b.latest("augment"), b.finished("augment")):   # the same call
        assert (call.run_id, call.failed) == (3, False)
        np.testing.assert_array_equal(call.inputs[0], x)
        np.testing.assert_array_equal(call.outputs[0], y)


def test_a_workers_fields_survive_in_the_queue_and_the_record():
    s = summarize(np.float32(2.0))   # capture="summary": no value to strip
    b = _bridge()
    remote = _end((s,), (s,), worker="tcp://10.0.0.2:4000", pid=4242)
    b._on_event(remote)
    with_values = _end((summarize(np.ones(4, np.float32), 1 << 16),), (), worker="w", pid=1)
    b._on_event(with_values)
    assert b.drain(10) == [remote, with_values]
    first, second = b.recorded
    assert first == remote
    assert (second.worker, second.pid, second.outputs) == ("w", 1, ())
    assert second.inputs[0].value is None and second.inputs[0].shape == (4,)


def test_a_child_op_end_leaves_the_latest_call_of_its_op_alone():
    """An eager op run inside a py_function (``parent`` set) is not the op's call."""
    s = summarize(np.ones(2, np.float32), 1 << 16)
    b = _bridge()
    child = ev.OpEnd(8, 3, 1_000, 11, "inner/add", "AddV2", "outer", 10, (s,), (s,))
    b._on_event(child)
    assert "inner/add" not in b.latest_values
    assert b.events.pop() is child


def test_an_input_modified_warning_keeps_the_inputs_as_left_and_is_queued_without_them():
    left = np.array([9.0, 2.0], np.float32)
    w = ev.Warning(9, 3, 2_000, 11, "augment", "EagerPyFunc", None, "wrote into input 0",
                   "input_modified", (summarize(left, 1 << 16),))
    b = _bridge()
    b._on_event(w)
    queued = b.events.pop()
    assert queued == w._replace(inputs=(w.inputs[0]._replace(value=None),))
    run_id, values = b.inputs_after["augment"]
    assert run_id == 3
    np.testing.assert_array_equal(values[0], left)
    plain = w._replace(inputs=(summarize(left),))   # no values: queued as it came
    b._on_event(plain)
    assert b.events.pop() is plain


def test_a_callbacks_small_summaries_are_taken_when_read_and_equal_summarize():
    """The UI's link leaves a framework callback's small arrays' summaries pending on the
    program's thread (their bytes: the copy it keeps anyway), still pending once drained;
    the model's row and the record take them: the summaries ``summarize`` gives, the
    inspector the values,
    a big array keeps its copy, and an output holding a NaN is summarised at the call."""
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun
    from pyfunc_debug.trace.pending import PendingOpEnd

    small = np.arange(64, dtype=np.float32).reshape(8, 8) * 0.37
    big = np.linspace(-1, 1, 4096, dtype=np.float32)
    nan = np.array([1.0, np.nan], np.float32)
    run, op = CallbackRun("test"), ExternalOp("augment", "EagerPyFunc")
    b = _bridge()
    queued = []

    def program():
        for x in (small, big, nan):
            run.call(op, lambda v: v * 2, (x,))
            queued.append(b.events[-1])
        run.end()

    b.run(program)
    assert [type(e) for e in queued] == [PendingOpEnd] * 3
    assert queued[0].inputs[0].__class__ is tuple   # pending: not summarised at the call
    assert queued[2].outputs[0].__class__ is not tuple and queued[2].outputs[0].nan == 1
    drained = b.drain(100)
    ends = [e for e in drained if type(e) in (ev.OpEnd, PendingOpEnd)]
    assert ends == queued and ends[0].inputs[0].__class__ is tuple   # taken when read:
    for e, x in zip(ends, (small, big, nan)):   # by the model's row of the op,
        model = RunModel()
        model.apply(e)
        row = model.rows["augment"]
        assert row.inputs[0][:-1] == summarize(x)[:-1], x.size
        assert row.outputs[0][:-1] == summarize(x * 2)[:-1] == row.ended[1][0][:-1], x.size
        assert (row.outputs[0].value is not None) == (x is not small)
    recorded = [e for e in b.recorded if type(e) is ev.OpEnd]   # and by the record
    assert len(recorded) == 3 and not b._unrecorded
    for e, x in zip(recorded, (small, big, nan)):
        assert e.inputs[0][:-1] == summarize(x)[:-1], x.size
        assert e.outputs[0][:-1] == summarize(x * 2)[:-1], x.size
    call = b.latest("augment")   # the NaN call: its output summarised, with its copy
    np.testing.assert_array_equal(call.outputs[0], nan * 2)
    b.run(lambda: run.call(ExternalOp("scale", "EagerPyFunc"), lambda v: v * 2, (small,)))
    for call in (b.latest("scale"), b.finished("scale")):   # made of the pending bytes
        assert call.failed is False
        np.testing.assert_array_equal(call.inputs[0], small)
        np.testing.assert_array_equal(call.outputs[0], small * 2)
