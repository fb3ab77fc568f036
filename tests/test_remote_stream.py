"""Events streamed to an attached client as op records (``runtime.records``,
``remote.event_stream``): the client receives what an in-process subscriber would."""
from __future__ import annotations

import collections
import time

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.debug.frontend import LocalLink
from pyfunc_debug.remote.client import RemoteLink
from pyfunc_debug.remote.event_stream import Decoder, Encoder
from pyfunc_debug.remote.server import Server
from pyfunc_debug.remote.wire import Channel
from pyfunc_debug.runtime.records import END, RECORD, START, RecordSink


def _inc(a):
    return a + 1


def _chain(n=5, middle=None):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = x
        for i in range(n):
            if middle is not None and i == n // 2:
                y = middle(y)
            else:
                y = tf.compat.v1.py_func(_inc, [y], tf.float32, name=f"inc{i}")
    return g, x, y


def _recorded(g, x, y, feeds, flush_every=None):
    """Run with a record-taking subscriber; (queue items, decoded events)."""
    q = collections.deque()
    sink = RecordSink(q)
    sub = ev.subscribe(sink.put_event, records=sink)
    items = []
    try:
        with tf.compat.v1.Session(graph=g) as sess:
            for v in feeds:
                try:
                    sess.run(y, {x: v})
                except tf.errors.OpError:
                    pass
    finally:
        sub.close()
    items = list(q)
    enc, dec = Encoder(sink), Decoder()
    out = []
    for i in range(0, len(items), flush_every or len(items)):
        line = enc.encode(items[i:i + (flush_every or len(items))])
        out += _decode(dec, line)
    return items, out


def _decode(dec, data: bytes | None) -> list:
    import json
    if data is None:
        return []
    line, _, rest = data.partition(b"\n")
    msg = json.loads(line)
    return dec.decode(msg, [rest] if rest else [])


def to_events(info, record: bytes) -> tuple:
    """The reference reading of one record (runtime.records' layout), apart from the Decoder."""
    kind, _, run, thread, s0, t0, s1, t1 = RECORD.unpack(record)
    name, typ, src, producers = info[:4]
    out = ()
    if kind & START:
        out += (ev.OpStart(s0, run, t0, thread, name, typ, None, src, producers),)
    if kind & END:
        out += (ev.OpEnd(s1, run, t1, thread, name, typ, None, t1 - t0),)
    return out


def _events_of(items) -> list:
    """What the records stand for, expanded here (the reference)."""
    infos, out = {}, []
    for x in items:
        if type(x) is tuple:
            infos[id(x)] = x
        elif type(x) is list:
            for r in x:
                out.extend(to_events(infos[int.from_bytes(r[8:16], "little", signed=True)], r))
        else:
            out.append(x)
    return sorted(out, key=lambda e: e.seq)


def _shape(events) -> list:
    return [(type(e).__name__, getattr(e, "op", ""), getattr(e, "op_type", ""))
            for e in events]


def test_records_decode_to_the_events_a_subscriber_sees():
    g, x, y = _chain()
    plain = []
    with ev.subscribe(plain.append):
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(y, {x: 1.0})
            sess.run(y, {x: 2.0})
    items, decoded = _recorded(g, x, y, [1.0, 2.0], flush_every=3)
    assert sum(len(i) for i in items if type(i) is list) == 10   # the ops came as records
    assert decoded == _events_of(items)                        # exactly, field by field
    assert _shape(decoded) == _shape(plain)
    runs = [e for e in decoded if type(e) is ev.RunStart]
    assert runs[1].ops == runs[0].ops == tuple(f"inc{i}" for i in range(5))  # numbered lists
    assert [e.seq for e in decoded] == sorted(e.seq for e in decoded)
    for start, end in zip(decoded[1::2], decoded[2::2]):
        if type(end) is ev.OpEnd:
            assert end.t_ns - end.duration_ns == start.t_ns and start.op == end.op
            assert start.producers == plain[[e.seq for e in plain].index(
                next(p.seq for p in plain if type(p) is ev.OpStart and p.op == start.op))].producers


def test_a_failing_op_streams_its_start_and_its_error():
    def bad(a):
        raise ValueError("no good")

    g, x, y = _chain(middle=lambda t: tf.compat.v1.py_func(bad, [t], tf.float32, name="bad"))
    items, decoded = _recorded(g, x, y, [1.0])
    shape = _shape(decoded)
    assert shape[shape.index(("OpStart", "bad", "PyFunc")) + 1][:2] == ("OpError", "bad")
    assert ("OpEnd", "bad", "PyFunc") not in shape
    assert shape[-1][0] == "RunEnd" and decoded[-1].ok is False


def test_py_function_ops_keep_their_eager_children_inside():
    def body(t):
        return tf.add(t, 1.0)

    g, x, y = _chain(middle=lambda t: tf.py_function(body, [t], tf.float32, name="eager"))
    _, decoded = _recorded(g, x, y, [1.0])
    shape = _shape(decoded)
    i, j = shape.index(("OpStart", "eager", "EagerPyFunc")), shape.index(("OpEnd", "eager",
                                                                            "EagerPyFunc"))
    children = decoded[i + 1:j]
    assert children and all(e.parent == "eager" for e in children)


def test_a_long_op_is_seen_running_before_it_ends():
    def slow(a):
        time.sleep(0.3)
        return a

    g, x, y = _chain(3, middle=lambda t: tf.compat.v1.py_func(slow, [t], tf.float32,
                                                             name="slow"))
    q = collections.deque()
    sink = RecordSink(q)
    enc, dec = Encoder(sink), Decoder()
    seen = []
    with ev.subscribe(sink.put_event, records=sink):
        import threading
        done = threading.Event()

        def run():
            with tf.compat.v1.Session(graph=g) as sess:
                sess.run(y, {x: 1.0})
            done.set()
        threading.Thread(target=run).start()
        saw_running = False
        while not done.is_set() or q:
            items = [q.popleft() for _ in range(len(q))]
            line = enc.encode(items)
            if line is not None:
                seen += _decode(dec, line)
            if not done.is_set() and ("OpStart", "slow", "PyFunc") in _shape(seen) and \
                    ("OpEnd", "slow", "PyFunc") not in _shape(seen):
                saw_running = True
            time.sleep(0.02)
    assert saw_running                       # its start came while it ran
    shape = _shape(seen)
    assert shape.count(("OpStart", "slow", "PyFunc")) == 1   # and never twice
    assert shape.count(("OpEnd", "slow", "PyFunc")) == 1
    assert shape.index(("OpStart", "slow", "PyFunc")) < shape.index(("OpEnd", "slow", "PyFunc"))
    end = next(e for e in seen if type(e) is ev.OpEnd and e.op == "slow")
    assert end.duration_ns >= 0.25e9


def test_a_run_inside_a_wrapped_function_streams_inside_its_op():
    inner_g, inner_x, inner_y = _chain(2)

    def nested(a):
        with tf.compat.v1.Session(graph=inner_g) as sess:
            return sess.run(inner_y, {inner_x: a})

    g, x, y = _chain(3, middle=lambda t: tf.compat.v1.py_func(nested, [t], tf.float32,
                                                               name="nested"))
    items, decoded = _recorded(g, x, y, [1.0], flush_every=1)
    shape = _shape(decoded)
    start, end = shape.index(("OpStart", "nested", "PyFunc")), shape.index(("OpEnd", "nested",
                                                                           "PyFunc"))
    inner = shape[start + 1:end]
    assert inner[0][0] == "RunStart" and inner[-1][0] == "RunEnd" and len(inner) == 6
    assert shape.count(("OpStart", "nested", "PyFunc")) == 1
    assert [e.seq for e in decoded] == sorted(e.seq for e in decoded)


def test_an_attached_client_receives_every_op_over_the_socket():
    g, x, y = _chain(50)
    srv = Server("127.0.0.1", 0, "tok", LocalLink())
    got = []
    link = RemoteLink(f"127.0.0.1:{srv.port}", "tok")
    try:
        link.start(got.append)
        assert srv.wait_for_client(10)
        with tf.compat.v1.Session(graph=g) as sess:
            for v in range(3):
                assert sess.run(y, {x: float(v)}) == pytest.approx(v + 50)
        deadline = time.monotonic() + 10
        while sum(type(e) is ev.RunEnd for e in got) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        link.quit()
        srv.close()
    shape = _shape(got)
    assert shape.count(("RunEnd", "", "")) == 3
    assert [s for s in shape if s[0] == "OpEnd"] == [("OpEnd", f"inc{i}", "PyFunc")
                                                      for i in range(50)] * 3
    assert all(type(e.thread) is int and e.thread > 0 for e in got if type(e) is ev.OpStart)


def test_a_client_that_attaches_mid_stretch_still_gets_well_formed_events():
    dec = Decoder()
    enc = Encoder(RecordSink(collections.deque()))
    from pyfunc_debug.runtime.records import BOTH, RECORD
    line = enc.encode([RECORD.pack(BOTH, 12345, 1, 7, 10, 100, 11, 200)])
    (start, end) = _decode(dec, line)
    assert start.op == end.op and start.op.startswith("<op ")
    assert end.duration_ns == 100


def test_the_channel_carries_the_records_blob(tmp_path):
    import socket
    a, b = socket.socketpair()
    enc, dec = Encoder(), Decoder()
    g, x, y = _chain(3)
    items, _ = _recorded(g, x, y, [1.0])
    Channel(a).send_raw(enc.encode(items))
    msg, blobs = Channel(b).receive()
    assert len(blobs) == 1 and len(blobs[0]) == 64 * 3   # one record per op
    assert dec.decode(msg, blobs) == _events_of(items)
    a.close()
    b.close()


def test_a_lagging_client_switches_the_target_to_bounded_events(monkeypatch):
    import pyfunc_debug.remote.outbox as outbox
    import pyfunc_debug.remote.server as server_module
    from pyfunc_debug.runtime.records import BOTH, RECORD
    monkeypatch.setattr(outbox, "QUEUE_LIMIT", 500)
    monkeypatch.setattr(server_module, "BATCH", 2)
    srv = Server("127.0.0.1", 0, "tok", LocalLink())
    try:
        stream = srv._stream
        srv.link.start(srv._on_event, None, capture="none", records=stream.sink)
        assert ev._bus.records is stream.sink
        record = RECORD.pack(BOTH, 1, 1, 1, 1, 1, 2, 2)
        for _ in range(10):                       # 10 batches of 100 ops for a lagging client
            stream.queue.append([record] * 100)
        assert stream.queue.ops == 500 and len(stream.queue) == 5   # the rest: dropped

        class Sink:
            def send_raw(self, line):
                pass
        srv._flush(Sink())                        # 2 sent; the queue was full
        assert ev._bus.records is None            # ops now come as events, under the limit
        stream.queue.clear()
        srv._flush(Sink())
        assert ev._bus.records is stream.sink     # caught up: records again
    finally:
        srv.link.stop()
        srv.close()


def test_ops_on_helper_threads_stream_whole():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        outs = [tf.numpy_function(lambda v, i=i: v + np.float32(i), [x], tf.float32,
                                  name=f"branch{i}") for i in range(16)]
        total = outs[0]
        for o in outs[1:]:
            total = tf.add(total, o)
    q = collections.deque()
    sink = RecordSink(q)
    with ev.subscribe(sink.put_event, records=sink):
        with tf.Session(graph=g, inter_op_threads=2) as sess:
            for _ in range(5):
                assert sess.run(total, {x: 1.0}) == pytest.approx(16 + sum(range(16)))
    items = list(q)
    enc, dec = Encoder(sink), Decoder()
    got = []
    for i in range(0, len(items), 3):
        got += _decode(dec, enc.encode(items[i:i + 3]))
    assert got == _events_of(items)
    opened = collections.Counter()
    for e in got:
        if type(e) is ev.OpStart:
            opened[(e.run_id, e.op)] += 1
        elif type(e) is ev.OpEnd:
            opened[(e.run_id, e.op)] -= 1
            assert opened[(e.run_id, e.op)] == 0       # its start came first
    assert sum(1 for e in got if type(e) is ev.OpEnd) == 5 * 31
    assert len({e.thread for e in got if type(e) is ev.OpEnd}) > 1   # helper threads ran ops


def test_folded_and_plan_ops_are_all_named():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(np.float32(2), name="c")
        folded = tf.numpy_function(lambda v: v * 3, [c], tf.float32, stateful=False,
                                   name="folded")   # runs once, outside the plan's steps
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = tf.compat.v1.py_func(_inc, [tf.add(x, folded, name="plus")], tf.float32,
                                 name="inc")
    items, decoded = _recorded(g, x, y, [1.0, 2.0], flush_every=2)
    ends = [e.op for e in decoded if type(e) is ev.OpEnd]
    assert ends == ["folded", "plus", "inc", "plus", "inc"]
    assert not any(e.op.startswith("<op ") for e in decoded if type(e) is ev.OpStart)


def test_a_huge_plan_names_its_ops_as_they_run(monkeypatch):
    import pyfunc_debug.runtime.records as records
    monkeypatch.setattr(records, "NAME_ALL_LIMIT", 2)   # this 5-op plan counts as huge
    calls = []
    monkeypatch.setattr(records.RecordSink, "name_all", lambda self, infos: calls.append(1))
    g, x, y = _chain()
    items, decoded = _recorded(g, x, y, [1.0], flush_every=2)
    assert calls == []                                      # not all up front...
    assert len([x for x in items if type(x) is tuple]) == 5   # ...but each as it ran
    assert [e.op for e in decoded if type(e) is ev.OpEnd] == [f"inc{i}" for i in range(5)]
