"""Events kept as JSONL lines in memory (``trace.lines``): what a streamed trace's window
and the UI's record of a session keep. Read back, they are the events kept: every type,
NaN/Inf, a worker's tail, an int too big for the compiled encoder."""
from __future__ import annotations

import gc
import math
import tracemalloc
import warnings

import numpy as np

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.trace.lines import EventLines


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _events() -> list:
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=None)
        a = tf.compat.v1.py_func(lambda v: np.log(v - 1).astype(np.float32), [x], tf.float32,
                                 name="logit")
        b = tf.compat.v1.py_func(lambda v: (v * 2, np.int64(3)), [a], [tf.float32, tf.int64],
                                 name="two")
        c = tf.numpy_function(lambda v: np.array([b"a", b"b"]), [a], tf.string, name="strs")
        bad = tf.numpy_function(lambda v: 1 / 0, [x], tf.float32, name="fails")
    with warnings.catch_warnings(), tf.trace() as tr, tf.Session(graph=g) as s:
        warnings.simplefilter("ignore", RuntimeWarning)
        for v in (np.float32(0.5), np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(5)):
            s.run([b, c], {x: v})
        try:
            s.run(bad, {x: 1.0})
        except Exception:
            pass
    events = list(tr.events)
    assert {type(e) for e in events} >= {ev.RunStart, ev.OpStart, ev.OpEnd, ev.OpError,
                                         ev.RunEnd, ev.Warning}
    worker = ev.OpStart(10**6, 1, 5, -1, "remote", "PyFunc", None, "", (), "tcp://h:1", 42)
    huge = ev.OpStart(10**6 + 1, 1, 2**70, 7, "huge clock", "PyFunc")   # beyond 64 bits
    return events + [worker, huge]


def test_events_kept_as_lines_read_back_as_the_same_events():
    events = _events()
    kept = EventLines()
    kept.extend(events[:7])
    kept.extend(iter(events[7:-1]))
    kept.extend(events[-1:])          # a batch the compiled encoder refuses
    kept.extend([])
    assert len(kept) == len(events)
    back = list(kept)
    assert len(back) == len(events)
    for want, got in zip(events, back):
        assert _same(tuple(got), tuple(want)) and type(got) is type(want), (want, got)
    assert back[-2].worker == "tcp://h:1" and back[-1].t_ns == 2**70


def test_a_captured_value_is_left_out_never_an_error():
    """The UI keeps its record without values; one that still carries a value (a copy the
    summary kept) is kept without it, on either encoding."""
    from pyfunc_debug.trace.summary import summarize
    s = summarize(np.arange(4.0), 1 << 20)
    assert s.value is not None
    small = ev.OpEnd(3, 1, 40, 7, "op", "PyFunc", None, 5, (s,), (s,))
    huge = ev.OpEnd(4, 1, 2**70, 7, "op", "PyFunc", None, 5, (s,), (s,))
    kept = EventLines()
    kept.extend([small])
    kept.extend([huge])
    assert list(kept) == [ev.without_values(small), ev.without_values(huge)]


def test_an_event_that_is_not_json_is_kept_as_it_is():
    odd = ev.OpStart(1, 1, 2, 3, "op", "PyFunc", None, "", (object(),))
    plain = ev.OpStart(2, 1, 3, 3, "op", "PyFunc")
    kept = EventLines()
    kept.extend([odd, plain])
    back = list(kept)
    assert back[0] is odd and back[1] == plain and len(kept) == 2


def test_lines_take_a_third_of_the_memory_and_nothing_the_collector_walks():
    events = [e for e in _events()[:-2] if type(e) in (ev.OpStart, ev.OpEnd)] * 200
    gc.collect()
    tracked = len(gc.get_objects())
    tracemalloc.start()
    try:
        kept = EventLines()
        kept.extend(events)
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(gc.get_objects()) - tracked < 10
    assert size < 400 * len(events)      # the events themselves: 700 bytes and more each


def test_an_event_of_a_type_no_row_is_named_for_is_kept_as_it_is():
    class Custom(ev.OpStart):
        __slots__ = ()
    odd = tuple.__new__(Custom, tuple(ev.OpStart(1, 1, 2, 3, "op", "PyFunc")))
    kept = EventLines()
    kept.extend([odd])
    assert list(kept)[0] is odd
