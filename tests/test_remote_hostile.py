"""Attach under hostile conditions (SPEC §7a): peers that lie, flood, trickle or stop
reading, against the target (``Server``, ``PdbPort``) and the client (``RemoteLink``).

Loopback only. Every wait is a timeout (a deadline for something that must happen),
never a threshold on how fast the machine is.
"""
from __future__ import annotations

import contextlib
import io
import json
import socket
import struct
import threading
import time
import tracemalloc
from contextlib import closing

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyfunc_debug as tf
from pyfunc_debug.debug.frontend import LocalLink
from pyfunc_debug.debug.pause import Pause
from pyfunc_debug.debug.pdb_bridge import PdbQuit, PdbRunner
from pyfunc_debug.remote import outbox
from pyfunc_debug.remote import wire
from pyfunc_debug.remote.client import AttachError, ProtocolError, RemoteLink
from pyfunc_debug.remote.event_stream import Decoder
from pyfunc_debug.remote.gate import MAX_PENDING
from pyfunc_debug.remote.pdb_channel import PdbPort, connect, relay
from pyfunc_debug.remote.protocol import PauseView, breakpoints_from, pause_message
from pyfunc_debug.remote.server import Server
from pyfunc_debug.remote.wire import VERSION, WireError, from_npy, parse_line, to_npy
from pyfunc_debug.runtime.records import BOTH, RECORD

from test_remote import _graph, _run_in_thread  # a numpy_function 'double', run on a thread

TOKEN = "s3cret"
MiB = 1 << 20


def _until(cond, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


@pytest.fixture
def server():
    srv = Server("127.0.0.1", 0, TOKEN, LocalLink(), handshake_timeout=2.0)
    yield srv
    srv.close()


def _connect(port: int, rcvbuf: int | None = None) -> socket.socket:
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def _line(msg: dict) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def _answer(sock: socket.socket, timeout: float = 10.0) -> tuple[dict | None, bool]:
    """(The first message the peer sent, whether it closed the connection within
    ``timeout``)."""
    sock.settimeout(timeout)
    data, closed = b"", False
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                closed = True
                break
            data += chunk
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        pass
    first = data.split(b"\n")[0]
    return (json.loads(first) if first else None), closed


def _trickle(sock: socket.socket, stop: threading.Event, head: bytes = b'{"t":"attach",'):
    """Send ``head``, then one byte every 50 ms until ``stop`` or the peer hangs up."""
    def run():
        with contextlib.suppress(OSError):
            sock.sendall(head)
            while not stop.wait(0.05):
                sock.send(b" ")
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


# -- before the token: a small fixed budget per connection --------------------------------
def _peak_while(send) -> int:
    """Bytes this process allocated at the peak while ``send()`` ran (tracemalloc)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        send()
        time.sleep(0.2)   # the target's thread has read what it was going to read
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_declared_blob_is_never_read_before_the_token(server):
    chunk = memoryview(bytearray(MiB))   # made before measuring: sending allocates nothing
    s = _connect(server.port)
    sent = [0]

    def send():
        with contextlib.suppress(OSError):
            s.sendall(_line({"t": "attach", "version": VERSION, "token": "guess",
                             "blobs": [64 * MiB]}))
            for _ in range(64):
                s.sendall(chunk)
                sent[0] += len(chunk)
    peak = _peak_while(send)
    s.close()
    assert peak < MiB                       # was 64 MiB: the blob read before the token
    assert sent[0] < 64 * MiB               # the target hung up instead of reading it
    _until(lambda: server.refusals == 1, "the refusal")


def test_a_first_line_is_cut_at_a_few_kib(server):
    chunk = memoryview(b"a" * MiB)
    s = _connect(server.port)

    def send():
        with contextlib.suppress(OSError):
            s.sendall(b'{"t":"attach","token":"')
            for _ in range(8):
                s.sendall(chunk)
    peak = _peak_while(send)
    s.close()
    assert peak < MiB                       # was 8 MiB: lines up to 64 MiB were buffered
    _until(lambda: server.refusals == 1, "the refusal")


def test_a_trickling_peer_is_refused_at_the_handshake_deadline():
    srv = Server("127.0.0.1", 0, TOKEN, LocalLink(), handshake_timeout=0.5)
    stop = threading.Event()
    try:
        s = _connect(srv.port)
        _trickle(s, stop)                   # one byte every 50 ms: each read is quick
        msg, closed = _answer(s, timeout=10)
    finally:
        stop.set()
        srv.close()
    assert closed, "the trickling peer was still connected after 10 s"
    assert msg["t"] == "refused" and "no attach message within 0.5 s" in msg["reason"]


def test_waiting_connections_are_capped_and_a_real_client_still_gets_in(server):
    server.gate.timeout = 60                # they would wait a minute each
    threads = threading.active_count()
    silent = [_connect(server.port) for _ in range(MAX_PENDING + 40)]
    try:
        # the gate pushes out the oldest, then takes the new one in: read from here, the
        # count of refusals can lead the count waiting by one for a moment
        _until(lambda: server.refusals >= 40 and server.gate.pending == MAX_PENDING,
               "the oldest waiting ones pushed out, the newest waiting")
        assert server.gate.pending == MAX_PENDING   # the cap
        assert threading.active_count() <= threads   # no thread per waiting peer
        first, closed = _answer(silent[0])
        assert closed and "too many connections waiting" in first["reason"]
        link = RemoteLink(f"127.0.0.1:{server.port}", TOKEN)   # while MAX_PENDING wait
        link.quit()
        assert link.wait(10).status == 0
    finally:
        for s in silent:
            s.close()


BAD_HANDSHAKES = {
    "lone surrogate token": b'{"t":"attach","version":2,"token":"\\ud800"}\n',
    "reversed surrogate pair": b'{"t":"attach","version":2,"token":"\\udfff\\ud800"}\n',
    "deep JSON": b'{"t":"attach","token":' + b"[" * 3000 + b"\n",
    "not UTF-8": b'{"t":"attach","version":2,"token":"\xff\xfe"}\n',
    "UTF-16": '{"t":"attach","version":2}\n'.encode("utf-16"),
    "token not a string": b'{"t":"attach","version":2,"token":{"a":[1]}}\n',
    "huge integer": b'{"t":"attach","version":' + b"9" * 4000 + b"}\n",
    "NaN version": b'{"t":"attach","version":NaN,"token":"s3cret"}\n',
    "not an object": b"[1,2]\n",
    "no type": b'{"token":"s3cret"}\n',
    "type not a string": b'{"t":["attach"]}\n',
    "not an attach": b'{"t":"go"}\n',
    "empty line": b"\n",
    "version nested": b'{"t":"attach","version":' + b"[" * 500 + b"]" * 500 + b"}\n",
    "right token, with a blob": _line({"t": "attach", "version": VERSION, "token": TOKEN,
                                       "blobs": [4]}) + b"abcd",
    "right token, then more": _line({"t": "attach", "version": VERSION, "token": TOKEN})
    + b'{"t":"go"}\n',
}


def test_bad_handshakes_get_a_refusal_and_nothing_on_stderr(server, capfd):
    for name, payload in BAD_HANDSHAKES.items():
        s = _connect(server.port)
        s.sendall(payload)
        msg, closed = _answer(s)
        s.close()
        assert closed and msg is not None and msg["t"] == "refused", name
    assert server.refusals == len(BAD_HANDSHAKES)
    RemoteLink(f"127.0.0.1:{server.port}", TOKEN).quit()   # still serving
    assert capfd.readouterr().err == ""


# -- the Dask worker's pdb port ------------------------------------------------------------
def _target(x):
    return x * 2 + 1


def _serve_pdb(port, outcome, timeout):
    def run():
        streams = port.accept("secret", timeout)
        if streams is None:
            outcome.append("nobody")
            return
        try:
            outcome.append(PdbRunner(streams.stdin, streams.stdout).step_into(_target, (20,)))
        except PdbQuit as e:
            outcome.append(e)
        finally:
            streams.close()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _relay_within(port, seconds: float, lines: str = "c\n") -> None:
    deadline = time.monotonic() + seconds
    relay(connect(port.address, "secret"), io.StringIO(lines), io.StringIO(),
          alive=lambda: time.monotonic() < deadline)


def test_the_pdb_port_refuses_bad_handshakes_quietly_and_lets_the_caller_in(capfd):
    outcome: list = []
    with closing(PdbPort()) as port:
        thread = _serve_pdb(port, outcome, timeout=20)
        for name, payload in BAD_HANDSHAKES.items():
            s = _connect(port.address[1])
            s.sendall(payload)
            msg, closed = _answer(s)
            s.close()
            assert closed and msg["t"] == "refused", name
        _relay_within(port, 15)
        thread.join(10)
    assert outcome == [41]
    assert capfd.readouterr().err == ""


def test_the_pdb_port_timeout_is_a_total_deadline_however_a_peer_trickles():
    stop = threading.Event()
    result: list = []
    with closing(PdbPort()) as port:
        s = _connect(port.address[1])
        _trickle(s, stop)
        thread = threading.Thread(target=lambda: result.append(port.accept("secret", 0.5)),
                                  daemon=True)
        thread.start()
        thread.join(10)
        stop.set()
        s.close()
    assert not thread.is_alive() and result == [None]


def test_a_caller_gets_the_pdb_port_while_a_peer_trickles():
    stop = threading.Event()
    outcome: list = []
    with closing(PdbPort()) as port:
        s = _connect(port.address[1])
        _trickle(s, stop)                   # first in line, and never done
        thread = _serve_pdb(port, outcome, timeout=20)
        _relay_within(port, 15)
        thread.join(10)
        stop.set()
        s.close()
    assert outcome == [41]


# -- after the token ------------------------------------------------------------------------
def _chain(n=200):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = x
        for i in range(n):
            y = tf.compat.v1.py_func(lambda a: a + 1, [y], tf.float32, name=f"inc{i}")
    return g, x, y


def test_a_client_that_stops_reading_is_dropped_and_the_next_one_attaches(monkeypatch):
    monkeypatch.setattr(outbox, "QUEUE_LIMIT", 5000)
    srv = Server("127.0.0.1", 0, TOKEN, LocalLink(), send_timeout=1.0)
    stop, most = threading.Event(), [0]
    g, x, y = _chain()

    def run():
        with tf.compat.v1.Session(graph=g) as sess:
            while not stop.is_set():
                sess.run(y, {x: np.float32(0)})
    try:
        s = _connect(srv.port, rcvbuf=4096)   # it never reads a byte
        s.sendall(_line({"t": "attach", "version": VERSION, "token": TOKEN}))
        _until(lambda: srv._conn is not None, "the attach")
        s.sendall(b'{"t":"go"}\n')
        runner = threading.Thread(target=run, daemon=True)
        runner.start()

        def dropped():
            most[0] = max(most[0], srv._stream.queue.ops)
            return srv._conn is None
        _until(dropped, "the stalled client dropped", timeout=60)
        assert most[0] <= 5000              # the queue's bound held while the send waited
        link = RemoteLink(f"127.0.0.1:{srv.port}", TOKEN)   # the next one is welcome
        events: list = []
        link.start(events.append)
        _until(lambda: len(events) > 100, "events for the new client")
        link.quit()
        assert link.wait(10).status == 0
    finally:
        stop.set()
        s.close()
        srv.close()


def test_the_process_ends_promptly_with_a_stalled_client_and_says_bye_to_a_good_one():
    srv = Server("127.0.0.1", 0, TOKEN, LocalLink())   # the default 30 s send timeout
    good = RemoteLink(f"127.0.0.1:{srv.port}", TOKEN)
    srv.close(status=3)
    assert "exit status 3" in good.wait(10).report
    srv = Server("127.0.0.1", 0, TOKEN, LocalLink())
    s = _connect(srv.port, rcvbuf=4096)                 # it never reads a byte
    try:
        s.sendall(_line({"t": "attach", "version": VERSION, "token": TOKEN}))
        _until(lambda: srv._conn is not None, "the attach")
        for i in range(200_000):                        # far more than the buffers hold
            srv._on_event(tf.events.OpStart(i, 1, 0, 1, f"op{i}", "PyFunc"))
        closing_ = threading.Thread(target=srv.close, daemon=True)
        closing_.start()
        closing_.join(20)
        assert not closing_.is_alive(), "close() waited on a client that reads nothing"
    finally:
        s.close()


def _attach_when_free(srv, timeout=10.0) -> RemoteLink:
    """Attach as soon as the last client has left: tried again and again while it is
    attached (and while it detaches), so the attach lands at the hand-over itself."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return RemoteLink(f"127.0.0.1:{srv.port}", TOKEN)
        except AttachError as e:
            if "another client" not in str(e) or time.monotonic() > deadline:
                raise


def _next_client(srv):
    """A thread already knocking; ``join()`` it for the client that got in."""
    got: list = []
    thread = threading.Thread(target=lambda: got.append(_attach_when_free(srv)), daemon=True)
    thread.start()

    def join() -> RemoteLink:
        thread.join(15)
        assert got, "the next client never got in"
        return got[0]
    return join


def test_a_hand_over_shows_the_new_client_none_of_the_old_ones_breakpoints(server):
    g, x, z = _graph()
    old = _attach_when_free(server)
    for i in range(50):
        old.break_on(op="double")
        knocking = _next_client(server)
        old.quit()
        new = knocking()
        assert new.breakpoints == [], f"round {i}: welcomed with {new.breakpoints}"
        pauses: list = []
        new.break_on(op="plus")
        new.start(None, pauses.append)
        t, out = _run_in_thread(g, x, z, np.float32(1))
        _until(lambda: pauses, f"round {i}: the new client's own pause", timeout=10)
        assert [p.op_name for p in pauses] == ["plus"], f"round {i}"
        new.answer("continue")
        t.join(10)
        assert out == {"result": 3.0}
        old = new
    old.quit()


def test_a_client_leaving_mid_pause_hands_over_nothing(server):
    g, x, z = _graph()
    for i in range(20):
        old = _attach_when_free(server)
        paused: list = []
        old.break_on(op="double")
        old.start(None, paused.append)
        t, out = _run_in_thread(g, x, z, np.float32(1))
        _until(lambda: paused, "the old client's pause")
        knocking = _next_client(server)
        old.quit()                          # gone while 'double' waits for it
        new = knocking()
        pauses: list = []
        new.start(None, pauses.append)
        t.join(10)
        assert out == {"result": 3.0} and new.breakpoints == [], f"round {i}"
        t, out = _run_in_thread(g, x, z, np.float32(1))
        t.join(10)
        assert out == {"result": 3.0} and pauses == [], f"round {i}"
        new.quit()


# -- impostor targets, for the client ----------------------------------------------------
WELCOME = _line({"t": "welcome", "version": VERSION, "pid": 1, "program": "fake", "list": []})


class FakeTarget:
    """Answers one attach with ``script`` (bytes, as given; ``trickle``: a byte every
    0.2 s), the first request with ``reply``, and keeps the connection open until closed."""

    def __init__(self, script: bytes, trickle: bool = False, reply: bytes = b""):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self._done = threading.Event()
        self._script, self._trickle, self._reply = script, trickle, reply
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.sock.accept()
            with conn:
                lines = conn.makefile("rb")
                lines.readline()
                if self._trickle:
                    for i in range(len(self._script)):
                        if self._done.wait(0.2):
                            break
                        conn.sendall(self._script[i:i + 1])
                else:
                    conn.sendall(self._script)
                if self._reply:                 # the answer to the first request
                    lines.readline()
                    conn.sendall(self._reply)
                self._done.wait(30)

    def close(self) -> None:
        self._done.set()
        self.sock.close()


def _npy(header: str, body: bytes = b"\0" * 8) -> bytes:
    """A ``.npy`` (version 1.0) with ``header`` as its header dictionary, padded."""
    text = header + " " * (-(len(header) + 11) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1") + body


def _pause_with_value(data: bytes, index: int = 0) -> bytes:
    """A well-formed pause message whose one input value is ``data`` (blob ``index``)."""
    msg, _ = pause_message(Pause(None, "double", "PyFunc", "before", [np.zeros(1)]), 1)
    msg["values"]["inputs"] = [index]
    msg["blobs"] = [len(data)]
    return _line(msg) + data


_REC = RECORD.pack(BOTH, 1, 1, 1, 1, 1, 2, 2)
IMPOSTOR_MESSAGES = {
    "deep JSON": b"[" * 100_000 + b"\n",
    "not UTF-8": b'{"t":"pdb_out","text":"\xff"}\n',
    "unknown type": b'{"t":"surprise"}\n',
    "record blob index out of range":
        _line({"t": "events", "rows": [], "ops": [], "recs": 3, "blobs": [64]}) + _REC,
    "record blob not of 64-byte records":
        _line({"t": "events", "rows": [], "recs": 0, "blobs": [10]}) + b"x" * 10,
    "unknown record kind":
        _line({"t": "events", "rows": [], "recs": 0, "blobs": [64]})
        + RECORD.pack(9, 1, 1, 1, 1, 1, 2, 2),
    "bad event row": _line({"t": "events", "rows": [["OpStart", "x"]]}),
    "bad op names": _line({"t": "events", "rows": [], "ops": [[1, 5]]}),
    "blob declared at 8 TiB": _line({"t": "events", "rows": [], "blobs": [8 << 40]}),
    "npy header claiming 8 TiB":
        _pause_with_value(_npy("{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (1099511627776,), }")),
    "npy shape beyond int64":
        _pause_with_value(_npy("{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (1180591620717411303424, 1), }")),
    "npy header unbalanced": _pause_with_value(_npy("{'descr': '<f8', 'shape': ((((((, }")),
    "npy of objects": _pause_with_value(_npy("{'descr': '|O', 'fortran_order': False, "
                                             "'shape': (1,), }")),
    "npy not an npy": _pause_with_value(b"not an array at all"),
    "pause without fields": _line({"t": "pause", "id": 1}),
    "pause with a blob index out of range":
        _pause_with_value(to_npy(np.zeros(1)), index=7),
    "breakpoints of the wrong types": _line({"t": "breakpoints", "list": [[1, 2, 3]]}),
    "reply to an unhashable request": _line({"t": "reply", "req": [1]}),
}


@pytest.mark.parametrize("name", list(IMPOSTOR_MESSAGES))
def test_a_malformed_message_after_the_welcome_ends_the_link_with_status_2(name):
    fake = FakeTarget(WELCOME + IMPOSTOR_MESSAGES[name])
    try:
        link = RemoteLink(fake.address, TOKEN)
        outcome = link.wait(10)             # the reader's end ends the link: no hang
    finally:
        fake.close()
    assert outcome is not None, f"{name}: wait() hung"
    assert outcome.status == 2 and "malformed message" in outcome.report, outcome.report
    assert "\n" not in outcome.report


def test_a_malformed_reply_fails_the_request_and_ends_the_link():
    bad_bp = _line({"t": "reply", "req": 1, "ok": True, "bp": [1, "x"]})
    fake = FakeTarget(WELCOME, reply=bad_bp)
    try:
        link = RemoteLink(fake.address, TOKEN)
        with pytest.raises(ProtocolError, match="malformed breakpoint"):
            link.break_on(op="double")
        outcome = link.wait(10)
    finally:
        fake.close()
    assert outcome.status == 2 and "not a list of 10 fields" in outcome.report


def test_a_line_or_blob_beyond_the_clients_caps_ends_the_link(monkeypatch):
    monkeypatch.setattr(wire, "MAX_LINE", 4096)
    fake = FakeTarget(WELCOME + _line({"t": "pdb_out", "text": "x" * 10_000}))
    try:
        outcome = RemoteLink(fake.address, TOKEN).wait(10)
    finally:
        fake.close()
    assert outcome.status == 2 and "longer than 4096" in outcome.report


IMPOSTOR_WELCOMES = {
    "deep JSON": b"[" * 100_000 + b"\n",
    "not a welcome": _line({"t": "events", "rows": []}),
    "a welcome with a bad breakpoint list": _line({"t": "welcome", "list": [["x"]]}),
    "a welcome with a bad pid": _line({"t": "welcome", "pid": "1; rm", "list": []}),
    "a welcome with blobs": _line({"t": "welcome", "list": [], "blobs": [4]}) + b"abcd",
    "an HTTP server": b"HTTP/1.1 400 Bad Request\r\n\r\n",
    "a welcome of 2 MiB": b'{"t":"welcome","program":"' + b"x" * (2 * MiB) + b'"}\n',
}


@pytest.mark.parametrize("name", list(IMPOSTOR_WELCOMES))
def test_an_impostor_answering_the_attach_is_a_protocol_error(name):
    fake = FakeTarget(IMPOSTOR_WELCOMES[name])
    try:
        with pytest.raises(ProtocolError) as caught:
            RemoteLink(fake.address, TOKEN, timeout=10)
    finally:
        fake.close()
    assert caught.value.status == 2 and "\n" not in str(caught.value)


def test_a_refusal_is_printed_clean_and_a_silent_target_times_out():
    fake = FakeTarget(_line({"t": "refused", "reason": "\x1b[2Jbusy\nreally"}))
    try:
        with pytest.raises(AttachError) as caught:
            RemoteLink(fake.address, TOKEN)
    finally:
        fake.close()
    assert caught.value.status == 1 and "busy?really" in str(caught.value)
    assert "\x1b" not in str(caught.value)
    fake = FakeTarget(WELCOME, trickle=True)   # the whole handshake within the timeout
    try:
        # said to time out, not to have closed the connection ("... closed the connection
        # during the handshake (timed out)", which it had not)
        with pytest.raises(AttachError, match="did not answer the handshake in time"):
            RemoteLink(fake.address, TOKEN, timeout=1.0)
    finally:
        fake.close()


# -- wire decoding: ValueError naming the field, for any input --------------------------------
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
_fuzz = settings(max_examples=150, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


@_fuzz
@given(st.binary(max_size=200))
def test_any_line_is_a_message_or_a_wire_error(data):
    with contextlib.suppress(WireError):
        assert type(parse_line(data)) is dict


@_fuzz
@given(st.binary(max_size=200), st.integers(0, 200), st.binary(max_size=8))
def test_any_npy_bytes_are_an_array_or_a_wire_error(tail, cut, patch):
    good = to_npy(np.arange(6, dtype=np.float32).reshape(2, 3))
    for data in (tail, good[:cut] + patch + good[cut + len(patch):], good[:cut]):
        with contextlib.suppress(WireError):
            from_npy(data)


@_fuzz
@given(st.dictionaries(st.sampled_from(["rows", "ops", "lists", "recs", "blobs"]), _json),
       st.lists(st.binary(max_size=130), max_size=2))
def test_any_events_message_decodes_or_names_its_field(msg, blobs):
    try:
        Decoder().decode(msg, blobs)
    except WireError as e:
        assert "field '" in str(e)


@_fuzz
@given(st.dictionaries(st.sampled_from(["id", "op", "op_type", "when", "actions", "describe",
                                        "describe_short", "inputs", "outputs", "values",
                                        "error", "warning", "producers", "breakpoint"]),
                       _json), _json)
def test_any_pause_or_breakpoint_list_decodes_or_names_its_field(msg, rows):
    try:
        PauseView(msg, [], None)
    except WireError as e:
        assert "field '" in str(e)
    with contextlib.suppress(WireError):
        breakpoints_from(rows)


def test_the_attach_command_ends_with_one_line_and_status_2_on_an_impostor(capsys):
    """What a user of ``pyfunc-debug attach`` meets at a target speaking nonsense."""
    from pyfunc_debug.cli import main
    fake = FakeTarget(IMPOSTOR_WELCOMES["a welcome of 2 MiB"])
    try:
        status = main(["attach", "--console", fake.address, "--token", TOKEN])
    finally:
        fake.close()
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert err.startswith("pyfunc-debug attach: ") and "\n" not in err and "Traceback" not in err

