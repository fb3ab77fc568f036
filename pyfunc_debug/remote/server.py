"""The target side: serve this process's events and debugger to one attached client.

The server is a frontend of a ``LocalLink``: a client's attach starts the
link (the debugger is attached and events flow), its detach — or its
connection breaking — stops it, continuing any paused op. With no client the
process runs as if nothing listened. One client at a time: a second one is
refused ("another client is attached").
"""
from __future__ import annotations

import collections
import contextlib
import hmac
import os
import socket
import struct
import sys
import threading
import time

from .. import events as ev
from ..debug.frontend import LocalLink
from ..debug.pause import ACTIONS
from ..trace.codec import event_to_row
from ..runtime.records import RecordSink
from .event_stream import Encoder
from .protocol import breakpoints_message, pause_message
from .streams import SocketStdin, SocketStdout
from .wire import VERSION, Channel, ChannelClosed, to_npy

__all__ = ["Server"]

HANDSHAKE_TIMEOUT = 5.0
SEND_EVERY = 0.01        # seconds between event batches
BATCH = 5000             # events per message at most
QUEUE_LIMIT = 200_000    # events waiting for a slow client; beyond, they are dropped (counted)
SEND_TIMEOUT = 30        # seconds a client may stop reading before it is dropped
_BREAK_KEYS = ("op", "op_type", "when", "on_error", "hit_count", "on_warning")


class Server:
    """Listens on ``(host, port)``; ``token`` is required from every client."""

    def __init__(self, host: str, port: int, token: str, link: LocalLink | None = None,
                 title: str = ""):
        self.link = link or LocalLink()
        self.token = token
        self.title = title
        self.stdin = SocketStdin()
        self.link.set_terminal(self.stdin, SocketStdout(self._pdb_out), around=self._pdb_session)
        self._sock = socket.create_server((host, port))
        self.host, self.port = self._sock.getsockname()[:2]
        self.attached = threading.Event()      # a client is attached and ready ("go")
        self._conn: Channel | None = None
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()     # events, then the pause that follows them
        self._events: collections.deque = collections.deque()
        self._new_stream()
        self._pause = None
        self._pause_id = 0
        self._client_bps: set = set()
        self._closed = False
        threading.Thread(target=self._accept, name="pfd-listen", daemon=True).start()

    # -- connections -------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed:
            try:
                sock, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(sock,), name="pfd-client",
                             daemon=True).start()

    def _handshake(self, ch: Channel) -> tuple[str | None, str]:
        """(why the client is refused or None, the capture level it asks for)."""
        try:
            msg, _ = ch.receive()
        except (ChannelClosed, OSError):
            return "no attach message", ""
        if msg.get("t") != "attach":
            return "expected an attach message", ""
        if msg.get("version") != VERSION:
            return (f"protocol version {msg.get('version')!r} is not supported "
                    f"(this is {VERSION})"), ""
        token = msg.get("token")
        if type(token) is not str or not hmac.compare_digest(token.encode(), self.token.encode()):
            return "wrong token", ""
        capture = msg.get("capture", "none")
        if capture not in ("none", "summary"):
            return f"capture must be none or summary, not {str(capture)[:20]!r}", ""
        return None, capture

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(HANDSHAKE_TIMEOUT)
        ch = Channel(sock)
        why, capture = self._handshake(ch)
        with self._lock:
            if why is None and self._conn is not None:
                why = "another client is attached (one at a time)"
            if why is None:
                self._conn = ch
        if why is not None:
            with contextlib.suppress(ChannelClosed):
                ch.send({"t": "refused", "reason": why})
            ch.close()
            return
        sock.settimeout(None)
        _send_timeout(sock, SEND_TIMEOUT)
        self.stdin.connect()
        self._events.clear()   # what a loop still running for the last client put there
        self._new_stream()
        try:
            ch.send({"t": "welcome", "version": VERSION, "pid": os.getpid(),
                     "program": self.title,
                     "list": breakpoints_message(self.link.breakpoints)["list"]})
            self.link.start(self._on_event, self._on_pause, capture=capture,
                            records=self._records)
            threading.Thread(target=self._send_events, args=(ch,), name="pfd-send",
                             daemon=True).start()
            while True:
                msg, _ = ch.receive()
                self._handle(ch, msg)
        except ChannelClosed:
            why = "the debugging client went away"
        except Exception as e:  # noqa: BLE001 - a message we mishandled: drop the client, run on
            why = f"the debugging client was dropped ({type(e).__name__}: {e})"
        self._drop(ch, why)

    def _drop(self, ch: Channel, why: str) -> None:
        """The client left: remove its breakpoints, continue a paused op, stop the link."""
        with self._lock:
            if self._conn is not ch:
                return
            self._conn = None
        ch.close()
        self.stdin.disconnect()
        pause, self._pause = self._pause, None
        for bp_id in self._client_bps:
            self.link.remove(bp_id)
        self._client_bps.clear()
        if pause is not None:
            self.link.debugger._warn(pause.op_name, pause.op_type,
                                     f"{why} while op '{pause.op_name}' was paused; continuing",
                                     "detached", pause.run_id)
        self.link.stop()
        self._events.clear()

    def _new_stream(self) -> None:
        """A client's event stream starts afresh: no op named to it yet, nothing dropped."""
        self._dropped = 0
        self._per_item = 1.0                   # records per queued item, lately
        self._records = RecordSink(self._events)
        self._encoder = Encoder(self._records)

    # -- client messages ------------------------------------------------------------------
    def _handle(self, ch: Channel, msg: dict) -> None:
        kind = msg["t"]
        if kind == "go":
            self.attached.set()
        elif kind == "answer":
            if msg.get("pause") == self._pause_id and msg.get("action") in ACTIONS:
                self._pause = None
                self.link.answer(msg["action"])
        elif kind == "interrupt":
            self.link.interrupt()
        elif kind == "pdb_interrupt":
            self.link.interrupt_pdb()
        elif kind == "pdb_in":
            self.stdin.feed(str(msg.get("text", "")), bool(msg.get("eof")))
        elif kind == "break_on":
            self._break_on(ch, msg)
        elif kind == "remove":
            self.link.remove(msg.get("id"))
            self._client_bps.discard(msg.get("id"))
            self._reply(ch, msg, {"ok": True})
            ch.send(breakpoints_message(self.link.breakpoints))
        elif kind == "value":
            self._value(ch, msg)
        elif kind == "detach":
            raise ChannelClosed("detached")
        else:
            self._reply(ch, msg, {"ok": False, "error": f"unknown message type {kind!r}"})

    def _reply(self, ch: Channel, msg: dict, body: dict, blobs=()) -> None:
        if "req" in msg:
            ch.send({"t": "reply", "req": msg["req"], **body}, blobs)

    def _break_on(self, ch: Channel, msg: dict) -> None:
        spec = msg.get("spec")
        if not _valid_spec(spec):
            self._reply(ch, msg, {"ok": False, "error": f"bad breakpoint spec {str(spec)[:80]}"})
            return
        try:
            info = self.link.break_on(**spec)
        except (ValueError, TypeError) as e:
            self._reply(ch, msg, {"ok": False, "error": str(e)})
            return
        self._client_bps.add(info.id)
        self._reply(ch, msg, {"ok": True, "bp": breakpoints_message([info])["list"][0]})
        ch.send(breakpoints_message(self.link.breakpoints))

    def _value(self, ch: Channel, msg: dict) -> None:
        pause = self._pause
        if pause is None or msg.get("pause") != self._pause_id:
            self._reply(ch, msg, {"ok": False, "error": "the op is no longer paused"})
            return
        which = "outputs" if msg.get("which") == "outputs" else "inputs"
        try:
            data = to_npy(pause.value(which, int(msg.get("index", 0))))
        except (IndexError, TypeError, ValueError) as e:
            self._reply(ch, msg, {"ok": False, "error": f"no such value: {e}"})
            return
        if data is None:
            self._reply(ch, msg, {"ok": False, "error": "this value cannot be sent (objects)"})
            return
        self._reply(ch, msg, {"ok": True, "value": 0}, [data])

    # -- the executing thread's side --------------------------------------------------------
    def _on_event(self, e) -> None:
        if len(self._events) < QUEUE_LIMIT:
            self._records.put_event(e)
        else:
            self._dropped += 1

    def _flush(self, ch: Channel) -> None:
        with self._send_lock:
            events = self._events
            n = min(len(events), BATCH)
            pop = events.popleft
            items = [pop() for _ in range(n)]
            extra = []
            if self._dropped:   # said in the stream itself, where the gap is
                dropped, self._dropped = self._dropped, 0
                extra.append(event_to_row(ev.Warning(
                    ev.next_seq(), None, time.perf_counter_ns(), threading.get_ident(), "", "",
                    None, f"{dropped} events were not sent: the client did not keep up",
                    "dropped")))
            line = self._encoder.encode(items, extra)
            if line is not None:
                ch.send_raw(line)
            # records come in lists that skip the queue's limit: while the client lags (the
            # queue holds QUEUE_LIMIT ops, estimated), ops send events, which obey it
            sizes = [len(x) for x in items if type(x) is list]
            if sizes:
                self._per_item = max(1.0, sum(sizes) / len(sizes))
            backlog = len(events) * self._per_item
            self.link.take_records(self._records if backlog < QUEUE_LIMIT else None)

    def _send_events(self, ch: Channel) -> None:
        try:
            while self._conn is ch:
                self._flush(ch)
                if len(self._events) < BATCH:
                    time.sleep(SEND_EVERY)   # bigger batches: fewer GIL hand-offs
        except ChannelClosed:
            pass

    def _on_pause(self, pause) -> None:
        ch = self._conn
        self._pause_id += 1
        self._pause = pause
        try:
            if ch is None:
                raise ChannelClosed("no client")
            while self._events:
                self._flush(ch)
            msg, blobs = pause_message(pause, self._pause_id)
            ch.send(msg, blobs)
            ch.send(breakpoints_message(self.link.breakpoints))
        except ChannelClosed:
            self.link.answer("continue")

    # -- pdb over the connection ---------------------------------------------------------------
    def _pdb_out(self, text: str) -> None:
        ch = self._conn
        if ch is not None:
            with contextlib.suppress(ChannelClosed):
                ch.send({"t": "pdb_out", "text": text})

    @contextlib.contextmanager
    def _pdb_session(self):
        ch = self._conn
        self.stdin.reset()
        if ch is not None:
            with contextlib.suppress(ChannelClosed):
                ch.send({"t": "pdb_start"})
        try:
            yield
        finally:
            ch = self._conn
            if ch is not None:
                with contextlib.suppress(ChannelClosed):
                    ch.send({"t": "pdb_end"})

    # -- ending ----------------------------------------------------------------------------
    def wait_for_client(self, timeout: float | None = None) -> bool:
        """Block until a client is attached and ready (``--wait``)."""
        return self.attached.wait(timeout)

    def close(self, status: int | None = None) -> None:
        """The process is ending: say goodbye (with its exit status) and stop listening."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.close()
        ch = self._conn
        if ch is not None:
            with contextlib.suppress(ChannelClosed):
                self._flush(ch)
                ch.send({"t": "bye", "status": status})
            self._drop(ch, "the process ended")

    def announce(self, stream=None) -> None:
        """The one line saying where to attach."""
        out = stream or sys.stderr
        out.write(f"pyfunc-debug: listening on {self.host}:{self.port} token {self.token}\n")
        out.flush()


_SPEC_TYPES = {"op": (str, type(None)), "op_type": (str, type(None)),
               "when": (str, type(None)), "on_error": (bool,), "on_warning": (bool,),
               "hit_count": (int, type(None))}


def _valid_spec(spec) -> bool:
    """A breakpoint from the wire: known keys, plain values (conditions as strings only)."""
    return type(spec) is dict and all(k in _SPEC_TYPES and type(v) in _SPEC_TYPES[k]
                                      for k, v in spec.items())


def _send_timeout(sock: socket.socket, seconds: int) -> None:
    """Sends give up after ``seconds`` (a client that stopped reading is dropped); receives
    still wait as long as they need to."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", seconds, 0))
    except (OSError, AttributeError, struct.error):
        pass   # not on this platform: a stalled client can then stall a pause
