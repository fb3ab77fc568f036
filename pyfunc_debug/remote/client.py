"""The client side: ``RemoteLink``, the frontend protocol against another process.

One reader thread receives everything the target sends: events go to the
frontend's ``on_event``; pauses are handed to ``on_pause`` on a dispatcher
thread (a frontend may block there and still fetch values); replies wake the
request waiting for them; pdb output goes to the terminal. ``wait()`` returns
how the connection ended: the target said goodbye, the client detached, or
the target went away (killed): a non-zero status.
"""
from __future__ import annotations

import itertools
import queue
import socket
import threading

from ..debug.frontend import BreakpointInfo, Link
from ..script import Outcome
from .address import parse_address
from .event_stream import Decoder
from .protocol import PauseView, breakpoints_from
from .relay import TerminalRelay
from .wire import VERSION, Channel, ChannelClosed, from_npy

__all__ = ["RemoteLink", "AttachError"]

REPLY_TIMEOUT = 30.0


class AttachError(ConnectionError):
    """Attaching failed: nothing listens there, or the target refused (wrong token, busy)."""


class RemoteLink(Link):
    """Attach to ``address`` (``HOST:PORT``) with ``token``; the target streams at once.

    ``capture="summary"`` asks for value summaries in the streamed events (the
    target then summarises every value it computes: slower); pauses always carry
    summaries, and values on request.
    """

    remote = True

    def __init__(self, address: str, token: str, timeout: float = 10.0,
                 capture: str = "none"):
        self.address = address
        host, port = parse_address(address)
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise AttachError(f"cannot connect to {host}:{port}: {e.strerror or e}") from None
        self._ch = Channel(sock)
        try:
            self._ch.send({"t": "attach", "version": VERSION, "token": token,
                           "capture": capture})
            msg, _ = self._ch.receive()
        except (ChannelClosed, OSError) as e:
            self._ch.close()
            raise AttachError(f"{host}:{port} closed the connection during the handshake "
                              f"({e}); is it a pyfunc-debug target?") from None
        if msg.get("t") != "welcome":
            self._ch.close()
            raise AttachError(f"{host}:{port} refused the attach: "
                              f"{msg.get('reason', 'no reason given')}")
        sock.settimeout(None)
        self.pid = msg.get("pid")
        self.program = str(msg.get("program") or "")
        self._breakpoints = breakpoints_from(msg.get("list", []))
        self._req = itertools.count(1)
        self._decoder = Decoder()
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
        threading.Thread(target=self._read, name="pfd-attach-read", daemon=True).start()

    # -- the frontend protocol ---------------------------------------------------------------
    def start(self, on_event=None, on_pause=None, capture: str = "summary",
              capture_bytes: int = 0) -> None:
        """Deliver events and pauses from now on; releases a target waiting for a client."""
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
            raise ValueError(reply.get("error", "the target refused the breakpoint"))
        info = BreakpointInfo(*reply["bp"])
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
        return from_npy(blobs[0])

    # -- the reader thread -----------------------------------------------------------------
    def _read(self) -> None:
        why = "connection closed"
        try:
            while True:
                msg, blobs = self._ch.receive()
                self._handle(msg, blobs)
        except ChannelClosed as e:
            why = str(e)
        except (ValueError, KeyError, TypeError) as e:   # a malformed message
            why = f"malformed message from the target: {e}"
            self._ch.close()
        self._ended(why)

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
            self._breakpoints = breakpoints_from(msg["list"])
        elif kind == "reply":
            slot = self._pending.pop(msg.get("req"), None)
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
            self._outcome = Outcome(0, None, "pyfunc-debug attach: the target process ended"
                                    + (f" (exit status {status})" if status is not None else ""))

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
