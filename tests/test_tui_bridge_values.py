"""The bridge keeps each op's latest values for the inspector and queues its events
without them (issue 24: this runs on the program's threads, so it builds records in C):
what is queued equals the event with every summary's value removed, summary classes
and a worker's trailing fields kept; what the inspector gets are the values themselves."""
from __future__ import annotations

import numpy as np
import pytest

from pyfunc_debug import events as ev
from pyfunc_debug.trace.summary import NonFiniteSummary, summarize

pytest.importorskip("textual")
from pyfunc_debug.tui.bridge import Bridge  # noqa: E402


def _bridge() -> Bridge:
    return Bridge(lambda pause: None)


def _end(ins, outs, **tail):
    return ev.OpEnd(7, 3, 1_000, 11, "augment", "EagerPyFunc", None, 500, ins, outs, **tail)


def test_queued_op_end_has_no_values_and_the_latest_call_keeps_them():
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    y = np.full(3, np.nan, np.float32)
    s_in, s_out = summarize(x, 1 << 16), summarize(y, 1 << 16)
    assert type(s_out) is NonFiniteSummary and s_in.value is not None
    b = _bridge()
    b._on_event(_end((s_in,), (s_out,)))
    queued = b.events.pop()
    assert type(queued) is ev.OpEnd
    assert queued == _end((s_in._replace(value=None),), (s_out._replace(value=None),))
    assert type(queued.outputs[0]) is NonFiniteSummary     # its class kept (rows, JSON)
    call = b.latest_values["augment"]
    assert b.last_finished["augment"] is call
    assert (call.run_id, call.failed) == (3, False)
    np.testing.assert_array_equal(call.inputs[0], x)
    np.testing.assert_array_equal(call.outputs[0], y)


def test_a_workers_fields_survive_and_an_op_without_values_is_queued_as_it_came():
    s = summarize(np.float32(2.0))   # capture="summary": no value to strip
    b = _bridge()
    remote = _end((s,), (s,), worker="tcp://10.0.0.2:4000", pid=4242)
    b._on_event(remote)
    assert b.events.pop() is remote
    with_values = _end((summarize(np.ones(4, np.float32), 1 << 16),), (), worker="w", pid=1)
    b._on_event(with_values)
    queued = b.events.pop()
    assert (queued.worker, queued.pid, queued.outputs) == ("w", 1, ())
    assert queued.inputs[0].value is None and queued.inputs[0].shape == (4,)


def test_a_child_op_end_leaves_the_latest_call_of_its_op_alone():
    """An eager op run inside a py_function (``parent`` set) is not the op's call."""
    s = summarize(np.ones(2, np.float32), 1 << 16)
    b = _bridge()
    child = ev.OpEnd(8, 3, 1_000, 11, "inner/add", "AddV2", "outer", 10, (s,), (s,))
    b._on_event(child)
    assert "inner/add" not in b.latest_values
    assert b.events.pop().inputs[0].value is None


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
