"""The JSONL writer queues events and writes them in batches: nothing lost, nothing
reordered, lines on disk without waiting for the run to end, errors not swallowed."""
from __future__ import annotations

import gc
import json
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.trace import flusher, jsonl
from pyfunc_debug.trace.codec import event_to_row, strict_row
from pyfunc_debug.trace.jsonl import JsonlWriter
from pyfunc_debug.trace.lines import generic_lines
from pyfunc_debug.trace.summary import ValueSummary, summarize


def _lines_on_disk(path) -> int:
    with open(path, "rb") as f:
        return f.read().count(b"\n") - 1  # the header


def _start(seq, op="op", thread=7, run_id=1):
    return ev.OpStart(seq, run_id, seq * 10, thread, op, "PyFunc", None, "f.py:1", ())


def test_queued_events_reach_the_file_without_a_run_end(tmp_path):
    """The helper thread writes what waits at least every FLUSH_NS: an op that hangs
    (or a process killed during it) still has its OpStart in the file."""
    path = tmp_path / "t.jsonl"
    w = JsonlWriter(path, "summary")
    try:
        for i in range(3):
            w.write(_start(i + 1))
        deadline = time.monotonic() + 10
        while _lines_on_disk(path) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _lines_on_disk(path) == 3
        assert [e.seq for e in tf.load_trace(path)] == [1, 2, 3]
    finally:
        w.close()


def test_every_run_end_writes_the_run_out(tmp_path, monkeypatch):
    monkeypatch.setattr(flusher, "FLUSH_NS", 10**12)  # no help from the thread
    path = tmp_path / "t.jsonl"
    w = JsonlWriter(path, "summary")
    w.write(_start(1))
    w.write(ev.RunEnd(2, 1, 30, 7, 20, True))
    assert _lines_on_disk(path) == 2
    w.close()


def test_full_batches_are_encoded_before_the_run_ends(tmp_path, monkeypatch):
    import gc
    monkeypatch.setattr(flusher, "FLUSH_NS", 10**12)
    w = JsonlWriter(tmp_path / "t.jsonl", "summary")
    was_on = gc.isenabled()
    gc.disable()   # no collection writes the queue first (below): the size rule alone
    try:
        for i in range(jsonl.BATCH_EVENTS):
            w.write(_start(i + 1))
    finally:
        if was_on:
            gc.enable()
    assert len(w._queue) == 0 and w.count == jsonl.BATCH_EVENTS
    w.close()


def test_a_collection_encodes_the_queued_events_first_so_they_die_young(tmp_path,
                                                                       monkeypatch):
    """Queued events kept alive until a run's end were walked by the collector and moved
    to its old generations, whose full passes walk the whole program: a fifth of a
    traced op's time. A collection's start encodes them (they are then dropped)."""
    import gc
    monkeypatch.setattr(flusher, "FLUSH_NS", 10**12)
    # a process that has seen a Dask worker's events writes their origins file at each
    # flush: not from a collection's start (no I/O there), so not encoded early either
    monkeypatch.setattr(ev, "_origins", type(ev._origins)())
    path = tmp_path / "t.jsonl"
    w = JsonlWriter(path, "summary")
    for i in range(10):
        w.op_write(_start(i + 1))   # as an executor's ops: queued, no size check
    assert len(w._queue) == 10
    gc.collect(0)
    assert len(w._queue) == 0 and w.counts[ev.OpStart] == 10   # encoded, and let go
    w.close()
    assert [e.seq for e in tf.load_trace(path)] == list(range(1, 11))


def test_events_from_many_threads_are_each_written_once_in_queue_order(tmp_path):
    path = tmp_path / "t.jsonl"
    w = JsonlWriter(path, "summary")
    order = []
    lock = threading.Lock()

    def emit(t):
        for i in range(3000):
            with lock:  # as the recorder does: one order for the queue and this list
                e = _start(t * 10_000 + i, op=f"t{t}", thread=t)
                order.append(e.seq)
                w.write(e)
    threads = [threading.Thread(target=emit, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert w.count == 12_000
    w.close()
    assert [e.seq for e in tf.load_trace(path)] == order


def test_a_batch_encodes_as_each_event_alone(tmp_path):
    """Summaries shared between events, several per event, NaN/Inf, -0.0 beside 0.0,
    a None run_id and other event types in one batch: the generic encoding, line by line."""
    shared = summarize(np.float32(2.0))
    sums = [summarize(v) for v in (np.float64(-0.0), np.float64(0.0), np.float32(np.nan),
                                   np.array([1.0, -np.inf]), np.array([b"x"], dtype=object))]
    odd = ValueSummary((2,), "float32", 2, 1.0, 2.0, 1.5, 0, 0, '"quoted"\\', True)
    batch = [ev.RunStart(1, 1, 0, 7, "session", "", ("a", "b"), (), (), ("PyFunc", "PyFunc")),
             _start(2, op="a"),
             ev.OpEnd(3, 1, 40, 7, "a", "PyFunc", None, 5, (shared,), (sums[0],)),
             _start(4, op="b", run_id=None),
             ev.OpEnd(5, None, 60, 7, "b", "PyFunc", "a", 5, (sums[0], shared), (sums[1],)),
             ev.OpEnd(6, 1, 70, 7, "b", "PyFunc", None, 5, tuple(sums[2:]), (odd, shared)),
             ev.Warning(7, 1, 80, 7, "b", "PyFunc", None, "msg", "input_modified", (sums[2],)),
             ev.RunEnd(8, 1, 90, 7, 90, True)]
    w = JsonlWriter(tmp_path / "t.jsonl", "summary")
    assert _same_json(w._encode(batch), _generic(batch))
    for e in batch:
        w.write(e)
    w.close()
    loaded = tf.load_trace(tmp_path / "t.jsonl")
    assert [type(e) for e in loaded] == [type(e) for e in batch]
    assert str(loaded[2].outputs[0].min) == "-0.0" and str(loaded[4].outputs[0].min) == "0.0"
    assert loaded[5].outputs[0] == odd


def _disk_full(w, first):
    """``w``'s file refuses every write; ``first`` queued, and the helper thread's error
    waited for. Returns the deadline it waited with."""
    def fail(text):
        raise OSError(28, "No space left on device")
    w._f.write = fail
    first(_start(1))
    deadline = time.monotonic() + 10
    while w._error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return deadline


def test_a_write_error_on_the_helper_thread_is_raised_on_close(tmp_path):
    w = JsonlWriter(tmp_path / "t.jsonl", "summary")
    _disk_full(w, w.write)
    del w._f.write
    with pytest.raises(OSError, match="No space left"):
        w.close()


def test_after_a_write_error_later_events_are_dropped_not_kept(tmp_path):
    """A full disk mid-run: the helper thread goes on taking
    batches, so a long run's events do not pile up in memory until it ends."""
    w = JsonlWriter(tmp_path / "t.jsonl", "summary")
    deadline = _disk_full(w, w.op_write)
    for seq in range(2, 2000):
        w.op_write(_start(seq))   # ops between runs: only the helper thread writes them
    while w._queue and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not w._queue and flusher.thread().is_alive()
    del w._f.write
    with pytest.raises(OSError, match="No space left"):
        w.close()


def test_one_helper_thread_serves_every_writer_and_ends_when_none_is_open(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr(flusher, "IDLE_S", 0.05)
    a = JsonlWriter(tmp_path / "a.jsonl", "summary")
    b = JsonlWriter(tmp_path / "b.jsonl", "summary")
    thread = flusher.thread()
    assert thread.is_alive() and thread.daemon
    a.op_write(_start(1))
    b.op_write(_start(2))   # between runs: only the helper thread writes them
    deadline = time.monotonic() + 10
    while (a._queue or b._queue) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _lines_on_disk(tmp_path / "a.jsonl") == 1 == _lines_on_disk(tmp_path / "b.jsonl")
    a.close()
    assert a not in flusher.open_writers() and b in flusher.open_writers()
    b.close()
    b.close()  # twice is harmless
    thread.join(10)
    assert not thread.is_alive() and flusher.thread() is None


def test_full_capture_writes_each_event_at_once(tmp_path):
    w = JsonlWriter(tmp_path / "t.jsonl", "full")
    assert w not in flusher.open_writers()
    s = summarize(np.arange(3.0), capture_bytes=1 << 20)
    w.write(ev.OpEnd(1, 1, 10, 7, "a", "PyFunc", None, 1, (), (s,)))
    assert _lines_on_disk(tmp_path / "t.jsonl") == 1
    w.close()
    (e,) = tf.load_trace(tmp_path / "t.jsonl")
    np.testing.assert_array_equal(e.outputs[0].value, np.arange(3.0))


@pytest.mark.parametrize("capture", ["summary", "full"])
def test_the_window_gets_the_latest_events_in_file_order_without_values(tmp_path, capture):
    import collections
    window = collections.deque(maxlen=5)
    path = tmp_path / "t.jsonl"
    w = JsonlWriter(path, capture, window=window)
    s = summarize(np.arange(4.0), capture_bytes=1 << 20 if capture == "full" else 0)
    events = [ev.RunStart(1, 1, 0, 7, "session", "")]
    for i in range(4):
        events += [_start(2 + 2 * i, op=f"op{i}"),
                   ev.OpEnd(3 + 2 * i, 1, 40, 7, f"op{i}", "PyFunc", None, 5, (s,), (s,))]
    events.append(ev.RunEnd(10, 1, 90, 7, 90, True))
    for e in events:
        w.write(e)
    w.settle_window()   # the reader's step (``Trace.events``): lines kept until then
    assert [e.seq for e in window] == [6, 7, 8, 9, 10]  # written at the RunEnd
    assert all(x.value is None for e in window if type(e) is ev.OpEnd
               for x in e.inputs + e.outputs)
    assert w.counts[ev.OpEnd] == 4 and w.counts[ev.RunStart] == 1 and w.counts[ev.RunEnd] == 1
    w.close()
    loaded = tf.load_trace(path)
    assert [e.seq for e in loaded[-5:]] == [e.seq for e in window]
    if capture == "full":
        np.testing.assert_array_equal(loaded[-2].outputs[0].value, np.arange(4.0))


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_writes_without_waiting_for_the_parents_helper_thread(tmp_path):
    import os
    path = tmp_path / "t.jsonl"
    w = JsonlWriter(path, "summary")
    w.write(_start(1))
    with w._lock:  # as if the helper thread were writing a batch when the process forked
        pid = os.fork()
        if pid == 0:  # the child: its own lock, no helper thread, the parent's queue not its own
            try:
                w.write(_start(2))
                w.write(ev.RunEnd(3, 1, 30, 7, 20, True))
                os._exit(0 if flusher.thread() is None else 1)
            finally:
                os._exit(2)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.01)
    else:
        os.kill(pid, 9)
        pytest.fail("the forked child hung on the writer's lock")
    assert os.waitstatus_to_exitcode(status) == 0
    w.close()
    assert sorted(e.seq for e in tf.load_trace(path)) == [1, 2, 3]


def _no_constants(name):
    raise AssertionError(f"not strict JSON: {name}")


def _generic(batch) -> list:
    """``batch``'s lines by the generic (standard library) encoding, one per event."""
    return generic_lines(batch).decode().splitlines()


def _same_json(data, lines: list) -> bool:
    """``data`` (a batch's lines, bytes-like) holds the same strict-JSON rows as ``lines``,
    exactly: the same values in the same order, floats to the bit (-0.0 is not 0.0)."""
    data = bytes(data)
    assert data.endswith(b"\n")
    got = [json.loads(line, parse_constant=_no_constants) for line in data.split(b"\n")[:-1]]
    want = [json.loads(line, parse_constant=_no_constants) for line in lines]
    return json.dumps(got) == json.dumps(want)


def test_jsonl_fast_rows_equal_the_generic_encoding(tmp_path):
    sums = [summarize(v) for v in (np.float32(1.5), np.float64(np.nan), np.array([1.0, np.inf]),
                                   np.array([b"a\"b", b"\n"], dtype=object), None, np.int32(7),
                                   np.array([[True, False]]), np.float64(-0.0),
                                   np.float64(1e20), np.float32(1e-7), np.int64(2**62),
                                   np.uint8(255))]
    v = 2.5  # built by hand: one float object, a preview that needs escapes
    sums += [ValueSummary((), "float32", 1, v, v, v, 0, 0, 'a"b\\c\n', False),
             ValueSummary((), "float32", 1, v, v, v, 0, 0, "é", False)]
    events = [ev.OpStart(1, 3, 10, 7, 'op "q"\\n', "PyFunc", None, "f.py:1", ("a", "b")),
              ev.OpStart(2, None, 11, 7, "op/é", "EagerPyFunc", "parent", "", ()),
              ev.OpEnd(3, 3, 12, 7, "op", "PyFunc", None, 5, tuple(sums[:3]), tuple(sums[3:])),
              ev.OpEnd(4, None, 13, 7, "op", "PyFunc", "p", 0, (), (sums[0],)),
              ev.OpEnd(5, 3, 14, 7, "op", "PyFunc", None, 1, tuple(sums[7:]), ())]
    w = JsonlWriter(tmp_path / "t.jsonl", "summary")
    for e in events:
        row = event_to_row(e)
        try:
            generic = json.dumps(row, separators=(",", ":"), allow_nan=False)
        except ValueError:
            generic = json.dumps(strict_row(row), separators=(",", ":"), allow_nan=False)
        assert _same_json(w._encode([e]), [generic])
        w.write(e)
    # one batch, shared summaries
    assert _same_json(w._encode(events), _generic(events))
    w.close()
    loaded = tf.load_trace(str(tmp_path / "t.jsonl"))
    assert [e.seq for e in loaded] == [1, 2, 3, 4, 5]
    assert loaded[2].inputs[1].nan == 1 and loaded[3].outputs[0].min == 1.5


@pytest.mark.parametrize("event", [
    ev.OpStart(2**64, 1, 10, 7, "big seq", "PyFunc"),           # beyond 64 bits
    ev.OpStart(3, 1, 10, 7, "lone \udc80 surrogate", "PyFunc"),  # not valid UTF-8
])
def test_an_odd_event_round_trips_whichever_way_it_is_encoded(tmp_path, event):
    path = tmp_path / "t.jsonl"
    w = JsonlWriter(path, "summary")
    w.write(_start(1))
    w.write(event)
    w.close()
    loaded = tf.load_trace(path)
    assert [tuple(e) for e in loaded] == [tuple(_start(1)), tuple(event)]


def test_a_finished_jsonl_trace_frees_its_events_without_the_collector(tmp_path):
    """Once the ``with`` block ends, the writer and its window of events go with the last
    reference, as plain refcounting frees them (no cycle left for a full collection)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.compat.v1.py_func(lambda v: v + 1, [x], tf.float32)
    sess = tf.compat.v1.Session(graph=g)
    was_on = gc.isenabled()
    gc.disable()
    try:
        with tf.trace(tmp_path / "t.jsonl") as tr:
            sess.run(y, {x: np.float32(1)})
        writer = weakref.ref(tr._writer)
        assert [type(e) for e in tr.events] == [ev.RunStart, ev.OpStart, ev.OpEnd, ev.RunEnd]
        del tr
        assert writer() is None
    finally:
        if was_on:
            gc.enable()


def test_encoding_a_batch_keeps_no_reference_to_it():
    """msgspec 0.22's ``encode_lines`` keeps a reference to an iterator it is given: a
    batch handed over as one would stay alive, with every event of it, for ever."""
    from pyfunc_debug.trace.lines import encode_batch
    batch = [_start(i + 1) for i in range(50)]
    before = [sys.getrefcount(batch)] + [sys.getrefcount(e) for e in batch]
    for _ in range(3):
        encode_batch(batch)
    assert [sys.getrefcount(batch)] + [sys.getrefcount(e) for e in batch] == before


def test_types_the_fast_encoder_hands_back_are_written_as_json_has_them(tmp_path):
    """A str subclass (numpy's str_) as text, a NaN summary's stats as strings, captured
    values of any numpy type left out: the file reads back as the events."""
    s64 = summarize(np.float64(2.5), 1 << 20)
    s32 = summarize(np.float32(1.5), 1 << 20)
    arr = summarize(np.arange(3.0), 1 << 20)
    nan = summarize(np.array([np.nan, 1.0]))
    assert isinstance(s64.value, np.float64) and s32.value is not None and arr.value is not None
    events = [ev.OpStart(1, 1, 10, 7, np.str_("named by numpy"), "PyFunc"),
              ev.OpEnd(2, 1, 11, 7, "op", "PyFunc", None, 1, (s64, s32), (arr, nan))]
    path = tmp_path / "t.jsonl"
    w = JsonlWriter(path, "summary")
    for e in events:
        w.write(e)
    w.close()
    start, end = tf.load_trace(path)
    assert start.op == "named by numpy" and type(start.op) is str
    assert end == ev.without_values(events[1])
    assert end.outputs[1].nan == 1 and end.outputs[1].row[3:6] == nan.row[3:6]


def test_what_an_open_trace_queues_reaches_its_file_when_the_program_ends(tmp_path):
    """A trace left open (its ``with`` never left): ops queued between runs were lost
    at exit when the helper thread had not written them yet."""
    import subprocess
    script = tmp_path / "left_open.py"
    script.write_text(
        "import importlib\n"
        "import pyfunc_debug as pfd\n"
        "from pyfunc_debug import events as ev\n"
        "flusher = importlib.import_module('pyfunc_debug.trace.flusher')\n"
        "flusher.FLUSH_NS = 10**12   # the helper thread does not get to it\n"
        f"tr = pfd.trace({str(tmp_path / 't.jsonl')!r}).__enter__()\n"
        "tr._writer.op_write(ev.OpStart(ev.next_seq(), 1, 1, 1, 'a', 'PyFunc', None,\n"
        "                               'x.py:1', ()))\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert [e.op for e in tf.load_trace(tmp_path / "t.jsonl")] == ["a"]
