"""The target side: serve this process's events and debugger to one attached client.

The server is a frontend of a ``LocalLink``: a client's attach starts the
link (the debugger is attached and events flow), its detach — or its
connection breaking — stops it, continuing any paused op. With no client the
process runs as if nothing listened. One client at a time: a second one is
refused ("another client is attached").

Bounds (SPEC §7a):

- before the token is checked, ``gate.Gate``: at most ``MAX_PENDING`` (8)
  connections waiting, ``HANDSHAKE_LINE`` (4 KiB) each, ``handshake_timeout``
  seconds (5) in all; a bad handshake gets a ``refused`` line, nothing is printed;
- after, the client's queue holds at most ``outbox.QUEUE_LIMIT`` ops (200,000;
  more are dropped and counted), and a client that has not taken a whole
  message within ``send_timeout`` seconds (30) is dropped, so the next one can
  attach; its messages are lines of at most ``CLIENT_LINE`` bytes, without blobs;
- a hand-over is atomic: the leaving client's breakpoints are removed, its
  pause continued, its stream stopped before the next client is admitted; each
  client has its own stream and breakpoint set, and pause ids are never reused.
"""
from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
import threading
import time

from ..debug.frontend import LocalLink
from ..debug.pause import ACTIONS
from . import outbox
from .gate import HANDSHAKE_TIMEOUT, Gate, token_matches
from .protocol import breakpoints_message, pause_message
from .streams import SocketStdin, SocketStdout
from .wire import VERSION, Channel, ChannelClosed, to_npy

__all__ = ["Server", "SEND_TIMEOUT", "CLIENT_LINE"]

SEND_EVERY = 0.01        # seconds between event batches
BATCH = 5000             # queued items per message at most
SEND_TIMEOUT = 30.0      # seconds to send one message before the client is dropped
CLIENT_LINE = 1 << 20    # a client's messages: commands and lines typed into pdb
CLOSE_WAIT = 2.0         # seconds the ending process gives the goodbye to a client
_BREAK_KEYS = ("op", "op_type", "when", "on_error", "hit_count", "on_warning")


class _Client:
    """One attached connection and what belongs to it alone."""

    def __init__(self, ch: Channel, stream: outbox.Stream):
        self.ch = ch
        self.stream = stream
        self.bps: set = set()   # ids of the breakpoints it set
        self.pause = None       # (pause id, Pause) it was shown and has not answered
        self.steps = False      # it answered a pause or interrupted: a step pause is its own


class Server:
    """Listens on ``(host, port)``; ``token`` is required from every client."""

    def __init__(self, host: str, port: int, token: str, link: LocalLink | None = None,
                 title: str = "", *, handshake_timeout: float = HANDSHAKE_TIMEOUT,
                 send_timeout: float = SEND_TIMEOUT):
        self.link = link or LocalLink()
        self.token = token
        self.title = title
        self.send_timeout = send_timeout
        self.stdin = SocketStdin()
        self.link.set_terminal(self.stdin, SocketStdout(self._pdb_out), around=self._pdb_session)
        self._sock = socket.create_server((host, port))
        self.host, self.port = self._sock.getsockname()[:2]
        self.gate = Gate(self._sock, self._check, handshake_timeout)
        self.attached = threading.Event()      # a client is attached and ready ("go")
        self._client: _Client | None = None
        self._lock = threading.Lock()
        self._handover = threading.Lock()      # a client leaving, or one being admitted
        self._send_lock = threading.Lock()     # events, then the pause that follows them
        self._stream = outbox.Stream()
        self._pause_id = 0
        self._closed = False
        threading.Thread(target=self._accept, name="pfd-listen", daemon=True).start()

    @property
    def _conn(self) -> Channel | None:
        client = self._client
        return client.ch if client is not None else None

    @property
    def refusals(self) -> int:
        """Connections refused so far (never printed)."""
        return self.gate.refusals

    # -- connections -------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed:
            try:
                got = self.gate.next(stop=lambda: self._closed)
                if got is not None:
                    self._admit(*got)
            except Exception:  # noqa: BLE001 - no peer stops the server or prints on stderr
                time.sleep(0.05)
        with contextlib.suppress(Exception):
            self.gate.close()

    def _check(self, msg: dict) -> str | None:
        """Why an attach message (from a peer not yet trusted) is refused, or None."""
        if msg["t"] != "attach":
            return "expected an attach message"
        if msg.get("version") != VERSION:
            return (f"protocol version {str(msg.get('version'))[:20]!r} is not supported "
                    f"(this is {VERSION})")
        if not token_matches(msg.get("token"), self.token):
            return "wrong token"
        capture = msg.get("capture", "none")
        if capture not in ("none", "summary"):
            return f"capture must be none or summary, not {str(capture)[:20]!r}"
        if type(msg.get("pending", False)) is not bool:
            return "pending must be true or false"
        return None

    def _admit(self, sock: socket.socket, msg: dict) -> None:
        """A client that presented the token: the one attached, unless one is."""
        with self._handover, self._lock:   # a leaving client's state is gone first
            busy = self._client is not None or self._closed
            if not busy:
                self._stream = outbox.Stream()
                client = self._client = _Client(Channel(sock), self._stream)
        if busy:
            self.gate.refuse(sock, "another client is attached (one at a time)")
            return
        try:
            threading.Thread(target=self._serve, args=(client, msg.get("capture", "none"),
                                                       msg.get("pending", False)),
                             name="pfd-client", daemon=True).start()
        except RuntimeError:   # no thread to spare
            self._drop(client, "the target could not serve the client")

    def _serve(self, client: _Client, capture: str, pending: bool = False) -> None:
        ch = client.ch
        why = "the debugging client went away"
        try:
            ch.limit_sends(self.send_timeout)
            ch.send({"t": "welcome", "version": VERSION, "pid": os.getpid(),
                     "program": self.title,
                     "list": breakpoints_message(self.link.breakpoints)["list"]})
            with self._handover:
                if self._client is not client:
                    return   # closed meanwhile
                self.stdin.connect()
                # a client taking pending summaries: a callback's small arrays are copied,
                # not summarised, on the program's threads (``trace.pending``)
                self.link.start(client.stream.on_event, functools.partial(self._on_pause, client),
                                capture=capture, records=client.stream.sink,
                                settles=client.stream if pending else None)
            threading.Thread(target=self._send_events, args=(client,), name="pfd-send",
                             daemon=True).start()
            while True:
                msg, _ = ch.receive(CLIENT_LINE, max_blob=0)
                self._handle(client, msg)
        except ChannelClosed as e:
            if isinstance(e, ValueError):
                why = f"the debugging client was dropped ({e})"
        except Exception as e:  # noqa: BLE001 - a message we mishandled: drop the client, run on
            why = f"the debugging client was dropped ({type(e).__name__}: {e})"
        self._drop(client, why)

    def _drop(self, client: _Client, why: str) -> None:
        """The client left: its breakpoints removed, a paused op continued, the link
        stopped — all before another client can be admitted."""
        with self._handover:
            if self._client is not client:
                return
            try:
                client.ch.close()
                self.stdin.disconnect()
                for bp_id in client.bps:
                    self.link.remove(bp_id)
                pause, client.pause = client.pause, None
                if pause is not None:
                    p = pause[1]
                    said = f"{why} while op '{p.op_name}' was paused; continuing"
                    self.link.debugger._warn(p.op_name, p.op_type, said, "detached", p.run_id)
                    # the event has no reader once its client is gone: the process's own
                    # terminal, where it said it listens, is told too
                    with contextlib.suppress(Exception):
                        sys.stderr.write(f"pyfunc-debug: {said}\n")
                        sys.stderr.flush()
                self.link.stop()
            finally:   # whatever failed above, the next client can attach
                client.stream.queue.clear()
                with self._lock:
                    self._client = None

    # -- client messages ------------------------------------------------------------------
    def _handle(self, client: _Client, msg: dict) -> None:
        kind, ch = msg["t"], client.ch
        if kind == "go":
            self.attached.set()
        elif kind == "answer":
            shown = client.pause
            if shown is not None and msg.get("pause") == shown[0] \
                    and msg.get("action") in ACTIONS:
                client.pause, client.steps = None, True
                self.link.answer(msg["action"])
        elif kind == "interrupt":
            client.steps = True
            self.link.interrupt()
        elif kind == "pdb_interrupt":
            self.stdin.reset()   # as a terminal's Ctrl+C: lines typed ahead are dropped
            self.link.interrupt_pdb()
        elif kind == "pdb_in":
            self.stdin.feed(str(msg.get("text", "")), bool(msg.get("eof")))
        elif kind == "break_on":
            self._break_on(client, msg)
        elif kind == "remove":
            bp_id = msg.get("id")
            if type(bp_id) is int:
                self.link.remove(bp_id)
                client.bps.discard(bp_id)
            self._reply(ch, msg, {"ok": True})
            ch.send(breakpoints_message(self.link.breakpoints))
        elif kind == "value":
            self._value(client, msg)
        elif kind == "detach":
            raise ChannelClosed("detached")
        else:
            self._reply(ch, msg, {"ok": False, "error": f"unknown message type {kind[:40]!r}"})

    def _reply(self, ch: Channel, msg: dict, body: dict, blobs=()) -> None:
        if "req" in msg:
            ch.send({"t": "reply", "req": msg["req"], **body}, blobs)

    def _break_on(self, client: _Client, msg: dict) -> None:
        spec, ch = msg.get("spec"), client.ch
        if not _valid_spec(spec):
            self._reply(ch, msg, {"ok": False, "error": f"bad breakpoint spec {str(spec)[:80]}"})
            return
        try:
            info = self.link.break_on(**spec)
        except (ValueError, TypeError) as e:
            self._reply(ch, msg, {"ok": False, "error": str(e)})
            return
        client.bps.add(info.id)
        self._reply(ch, msg, {"ok": True, "bp": breakpoints_message([info])["list"][0]})
        ch.send(breakpoints_message(self.link.breakpoints))

    def _value(self, client: _Client, msg: dict) -> None:
        shown, ch = client.pause, client.ch
        if shown is None or msg.get("pause") != shown[0]:
            self._reply(ch, msg, {"ok": False, "error": "the op is no longer paused"})
            return
        which = "outputs" if msg.get("which") == "outputs" else "inputs"
        try:
            data = to_npy(shown[1].value(which, int(msg.get("index", 0))))
        except (IndexError, TypeError, ValueError, OverflowError) as e:
            self._reply(ch, msg, {"ok": False, "error": f"no such value: {e}"})
            return
        if data is None:
            self._reply(ch, msg, {"ok": False, "error": "this value cannot be sent (objects)"})
            return
        self._reply(ch, msg, {"ok": True, "value": 0}, [data])

    # -- the executing thread's side --------------------------------------------------------
    def _on_event(self, e) -> None:
        self._stream.on_event(e)

    def _flush(self, ch, stream: outbox.Stream | None = None) -> None:
        with self._send_lock:
            self._flush_locked(ch, stream or self._stream)

    def _flush_locked(self, ch, stream: outbox.Stream) -> None:
        line, full = stream.batch(BATCH)
        if line is not None:
            ch.send_raw(line)
        # records come in lists, dropped whole when the queue is full: while it is, ops
        # send events, dropped one by one
        if stream is self._stream:
            self.link.take_records(None if full else stream.sink)

    def _send_events(self, client: _Client) -> None:
        queue = client.stream.queue
        try:
            while self._client is client:
                self._flush(client.ch, client.stream)
                if len(queue) < BATCH:
                    time.sleep(SEND_EVERY)   # bigger batches: fewer GIL hand-offs
        except ChannelClosed as e:   # the client stopped reading (or left): drop it now
            self._drop(client, f"the debugging client was dropped ({e})")

    def _on_pause(self, client: _Client, pause) -> None:
        if self._client is not client or self._stale(client, pause):
            self.link.answer("continue")   # a pause begun for a client that left
            return
        with self._lock:
            self._pause_id += 1
            pause_id = self._pause_id
        client.pause = (pause_id, pause)
        try:
            while client.stream.queue:
                self._flush(client.ch, client.stream)
            msg, blobs = pause_message(pause, pause_id)
            client.ch.send(msg, blobs)
            client.ch.send(breakpoints_message(self.link.breakpoints))
        except ChannelClosed:
            self.link.answer("continue")

    def _stale(self, client: _Client, pause) -> bool:
        """A pause this client did not ask for: at a breakpoint removed meanwhile, or a
        step or interrupt of the client before it."""
        bp = pause.breakpoint
        if bp is None:
            return not client.steps
        return bp.id != 0 and bp not in self.link.debugger.breakpoints

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
        client = self._client
        if client is not None:
            # the process is ending: a client that stopped reading delays it CLOSE_WAIT at most
            if client.ch.send_timeout is not None:
                client.ch.send_timeout = min(client.ch.send_timeout, CLOSE_WAIT)
            if self._send_lock.acquire(timeout=CLOSE_WAIT):
                try:
                    with contextlib.suppress(ChannelClosed):
                        self._flush_locked(client.ch, client.stream)
                        client.ch.send({"t": "bye", "status": status})
                finally:
                    self._send_lock.release()
            self._drop(client, "the process ended")

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

