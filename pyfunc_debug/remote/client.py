"""The client side: ``RemoteLink``, the frontend protocol against another process.

One reader thread receives everything the target sends: events go to the
frontend's ``on_event``; pauses are handed to ``on_pause`` on a dispatcher
thread (a frontend may block there and still fetch values); replies wake the
request waiting for them; pdb output goes to the terminal. ``wait()`` returns
how the connection ended: the target said goodbye, the client detached, or
the target went away (killed): a non-zero status.

The target is not trusted: a malformed, oversized or impostor message
(anything a decode can raise, a line over ``wire.MAX_LINE``, blobs over
``wire.MAX_BLOB`` in one message, read as they arrive) ends the link with one
line and status 2 (``ProtocolError`` during the handshake, an ``Outcome``
after); ``wait()`` returns once the reader has ended, however it ended.
"""
from __future__ import annotations

import itertools
import queue
import socket
import threading
import time

from ..debug.frontend import BreakpointInfo, Link
from ..script import Outcome
from .address import parse_address
from .event_stream import Decoder
from .protocol import PauseView, breakpoints_from
from .relay import TerminalRelay
from .wire import VERSION, Channel, ChannelClosed, WireError, decoding, from_npy

__all__ = ["RemoteLink", "AttachError", "ProtocolError"]

REPLY_TIMEOUT = 30.0
WELCOME_LINE = 1 << 20   # the welcome: pid, title, the breakpoint list


class AttachError(ConnectionError):
    """Attaching failed: nothing listens there, or the target refused (wrong token, busy).
    ``status`` is the exit status a command line should end with."""

    status = 1


class ProtocolError(AttachError):
    """What answered is not a pyfunc-debug target speaking our protocol: a malformed,
    oversized or unexpected message (status 2)."""

    status = 2


def _clean(text, limit: int = 200) -> str:
    """Text from the target, safe to print on one line (no control characters)."""
    text = str(text)
    return "".join(c if c.isprintable() else "?" for c in text[:limit]) \
        + ("..." if len(text) > limit else "")


class RemoteLink(Link):
    """Attach to ``address`` (``HOST:PORT``) with ``token``; the target streams at once.

    ``capture="summary"`` asks for value summaries in the streamed events (the
    target then summarises every value it computes: slower); pauses always carry
    summaries, and values on request. ``pending``: a framework callback's small
    arrays may come as pending summaries (``trace.pending``: their bytes), for a
    frontend that takes them when it shows them (``start``'s ``settles``); the
    target's threads then copy them instead of summarising them.
    """

    remote = True

    def __init__(self, address: str, token: str, timeout: float = 10.0,
                 capture: str = "none", pending: bool = False):
        self.address = address
        self.capture = capture
        self.pending = bool(pending)
        host, port = parse_address(address)
        deadline = time.monotonic() + timeout
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise AttachError(f"cannot connect to {host}:{port}: {e.strerror or e}") from None
        self._ch = Channel(sock)
        try:
            self._ch.send({"t": "attach", "version": VERSION, "token": token,
                           "capture": capture, **({"pending": True} if pending else {})})
            msg, _ = self._ch.receive(WELCOME_LINE, deadline=deadline, max_blob=0)
            self._welcome(msg, f"{host}:{port}")
        except AttachError:
            self._ch.close()
            raise
        except WireError as e:
            self._ch.close()
            raise ProtocolError(f"{host}:{port} sent a malformed answer ({_clean(e)}); "
                                "is it a pyfunc-debug target?") from None
        except (ChannelClosed, OSError) as e:
            self._ch.close()
            timed_out = isinstance(e, TimeoutError) or _clean(e) == "timed out"   # (wrapped)
            what = "did not answer the handshake in time" if timed_out \
                else f"closed the connection during the handshake ({_clean(e)})"
            raise AttachError(f"{host}:{port} {what}; is it a pyfunc-debug target?") from None
        sock.settimeout(None)
        self._req = itertools.count(1)
        self._decoder = Decoder(self.pending)
        self._pending: dict = {}
        self._lock = threading.Lock()
        self._early: list = []                  # events before start()
        self._on_event = self._early.append
        self._on_pause = None
        self._pauses: queue.Queue = queue.Queue()
        self._paused = None
        self.relay = TerminalRelay(self._send_quietly)
        self.ended = threading.Event()
        self._outcome: Outcome | None = None
        self._said_bye, self._detached = False, False
        self.target_status: int | None = None   # the exit status its goodbye gave
        threading.Thread(target=self._read, name="pfd-attach-read", daemon=True).start()

    def _welcome(self, msg: dict, where: str) -> None:
        if msg["t"] == "refused":
            raise AttachError(f"{where} refused the attach: "
                              f"{_clean(msg.get('reason', 'no reason given'))}")
        if msg["t"] != "welcome":
            raise WireError(f"expected a welcome message, not {_clean(msg['t'], 40)!r}")
        with decoding("welcome", "pid"):
            pid = msg.get("pid")
            if pid is not None and type(pid) is not int:
                raise TypeError(f"not an int: {type(pid).__name__}")
            self.pid = pid
        with decoding("welcome", "program"):
            self.program = _clean(msg.get("program") or "")
        self._breakpoints = breakpoints_from(msg.get("list", []))

    # -- the frontend protocol ---------------------------------------------------------------
    @property
    def streams_values(self) -> bool:
        return self.capture != "none"

    def start(self, on_event=None, on_pause=None, capture: str = "summary",
              capture_bytes: int = 0, settles=None) -> None:
        """Deliver events and pauses from now on; releases a target waiting for a client.
        ``settles``: told (its ``deferred`` set) that events may hold pending summaries,
        when this link asked for them."""
        if settles is not None and self.pending:
            settles.deferred = True
        with self._lock:
            early, self._early = self._early, []
            self._on_event = on_event or (lambda e: None)
            for e in early:
                self._on_event(e)
        self._on_pause = on_pause
        threading.Thread(target=self._dispatch_pauses, name="pfd-attach-pauses",
                         daemon=True).start()
        self._send_quietly({"t": "go"})

    def stop(self) -> None:
        """Detach (the target runs on)."""
        if not self.ended.is_set():
            self._detached = True
            self._send_quietly({"t": "detach"})
            self._ch.close()

    def quit(self) -> None:
        self.stop()

    def answer(self, action: str) -> None:
        pause, self._paused = self._paused, None
        if pause is not None:
            self._send_quietly({"t": "answer", "pause": pause.id, "action": action})

    def break_on(self, op=None, op_type=None, when=None, on_error=False, hit_count=None,
                 on_warning=False) -> BreakpointInfo:
        if when is not None and not isinstance(when, str):
            raise ValueError("a condition sent to another process must be a string: a builtin "
                             "name (nan_producer, has_nan, ...) or an expression")
        spec = {"op": op, "op_type": op_type, "when": when, "on_error": on_error,
                "hit_count": hit_count, "on_warning": on_warning}
        reply, _ = self._request({"t": "break_on", "spec": spec})
        if not reply.get("ok"):
            raise ValueError(_clean(reply.get("error", "the target refused the breakpoint")))
        try:
            info = breakpoints_from([reply.get("bp")])[0]
        except WireError as e:   # the link ends (status 2), and the caller hears why
            self._fail(e)
            raise ProtocolError(f"{self.address} answered with a malformed breakpoint "
                                f"({_clean(e)})") from None
        if all(b.id != info.id for b in self._breakpoints):
            self._breakpoints = self._breakpoints + [info]
        return info

    def remove(self, bp_id: int) -> None:
        self._request({"t": "remove", "id": bp_id})
        self._breakpoints = [b for b in self._breakpoints if b.id != bp_id]

    @property
    def breakpoints(self) -> list:
        return list(self._breakpoints)

    def interrupt(self) -> None:
        self._send_quietly({"t": "interrupt"})

    def interrupt_pdb(self) -> None:
        self._send_quietly({"t": "pdb_interrupt"})

    def set_terminal(self, stdin=None, stdout=None, around=None) -> None:
        self.relay.stdin, self.relay.stdout, self.relay.around = stdin, stdout, around

    def wait(self, timeout: float | None = None) -> Outcome | None:
        """How the connection ended (an ``Outcome``: status 0 after a goodbye or a detach,
        1 when the target went away), or None on timeout."""
        if not self.ended.wait(timeout):
            return None
        return self._outcome

    # -- requests ---------------------------------------------------------------------------
    def _send_quietly(self, msg: dict) -> None:
        try:
            self._ch.send(msg)
        except ChannelClosed:
            pass   # the reader reports how the connection ended

    def _request(self, msg: dict) -> tuple[dict, list]:
        req = next(self._req)
        slot = [threading.Event(), None, None]
        self._pending[req] = slot
        try:
            self._ch.send(dict(msg, req=req))
        except ChannelClosed:
            self._pending.pop(req, None)
            raise ConnectionError(f"not connected to {self.address}") from None
        if not slot[0].wait(REPLY_TIMEOUT) or slot[1] is None:
            self._pending.pop(req, None)
            raise ConnectionError(f"no reply from {self.address} (the target went away?)")
        return slot[1], slot[2]

    def _fetch(self, pause_id: int, which: str, index: int):
        try:
            reply, blobs = self._request({"t": "value", "pause": pause_id, "which": which,
                                          "index": index})
        except ConnectionError:
            return None
        if not reply.get("ok") or not blobs:
            return None
        try:
            return from_npy(blobs[0], "value")
        except WireError as e:   # an impostor's array: the link ends, as for any bad message
            self._fail(e)
            return None

    # -- the reader thread -----------------------------------------------------------------
    def _read(self) -> None:
        try:
            while True:
                msg, blobs = self._ch.receive()
                self._handle(msg, blobs)
        except WireError as e:
            self._fail(e)
        except ChannelClosed as e:
            self._ended(str(e))
        except Exception as e:  # noqa: BLE001 - whatever a message caused: end, never hang
            self._fail(WireError(f"{type(e).__name__}: {e}"))

    def _fail(self, error: Exception) -> None:
        """The target sent what no pyfunc-debug target sends: end the link (status 2)."""
        with self._lock:
            if self._outcome is None:
                self._outcome = Outcome(2, error, f"pyfunc-debug attach: malformed message from "
                                        f"{self.address} ({_clean(error)}); is it a "
                                        "pyfunc-debug target?")
        self._ch.close()
        self._ended(str(error))

    def _handle(self, msg: dict, blobs: list) -> None:
        kind = msg["t"]
        if kind == "events":
            events = self._decoder.decode(msg, blobs)
            with self._lock:
                deliver = self._on_event
                for e in events:
                    deliver(e)
        elif kind == "pause":
            view = PauseView(msg, blobs, self._fetch)
            self._paused = view
            self._pauses.put(view)
        elif kind == "breakpoints":
            self._breakpoints = breakpoints_from(msg.get("list"))
        elif kind == "reply":
            req = msg.get("req")
            if type(req) is not int:
                raise WireError("malformed reply message: field 'req' is not an int")
            slot = self._pending.pop(req, None)   # None: a reply that came too late
            if slot is not None:
                slot[1], slot[2] = msg, blobs
                slot[0].set()
        elif kind == "pdb_start":
            self.relay.start()
        elif kind == "pdb_out":
            self.relay.write(str(msg.get("text", "")))
        elif kind == "pdb_end":
            self.relay.stop()
        elif kind == "bye":
            self._said_bye = True
            status = msg.get("status")
            if isinstance(status, int) and not isinstance(status, bool):
                self.target_status = status
            self._outcome = Outcome(0, None, "pyfunc-debug attach: the target process ended"
                                    + (f" (exit status {_clean(status, 20)})"
                                       if status is not None else ""))
        else:
            raise WireError(f"unknown message type {_clean(kind, 40)!r}")

    def _ended(self, why: str) -> None:
        self.relay.stop()
        for slot in list(self._pending.values()):
            slot[0].set()
        if self._outcome is None:
            if self._detached:
                self._outcome = Outcome(0, None, f"pyfunc-debug attach: detached from "
                                        f"{self.address}; the target runs on")
            else:
                self._outcome = Outcome(1, None, f"pyfunc-debug attach: lost the target at "
                                        f"{self.address} ({why}): it ended without saying "
                                        "goodbye (killed?)")
        self.ended.set()
        self._pauses.put(None)

    def _dispatch_pauses(self) -> None:
        while True:
            pause = self._pauses.get()
            if pause is None:
                return
            if self._on_pause is not None:
                self._on_pause(pause)
