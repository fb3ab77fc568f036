"""What waits to be sent to one attached client: its event stream, bounded.

The queue holds events, op records (in lists, ``runtime.records``) and the
infos that name them. It counts ops — a list of records one per record, any
other item one — and holds at most ``QUEUE_LIMIT`` (200,000: about 20 MB as
op records, more as events carrying value summaries). Beyond that, what the
running threads add is dropped and counted, and the client is told how many
events it missed, in a ``Warning`` where the gap is. Infos are always kept:
they name ops for the rest of the stream (the record sink holds them anyway).

The bound holds while the sender is blocked on a client that stopped reading
(the executing threads add, the queue refuses), so the target's memory stays
bounded until that client's send times out and it is dropped (``server``).
"""
from __future__ import annotations

import collections
import threading
import time

from .. import events as ev
from ..runtime.records import RecordSink
from ..trace.codec import event_to_row
from .event_stream import Encoder

__all__ = ["Stream", "BoundedQueue", "QUEUE_LIMIT"]

QUEUE_LIMIT = 200_000   # ops waiting for one client; beyond, they are dropped (counted)


class BoundedQueue(collections.deque):
    """A deque that holds at most ``QUEUE_LIMIT`` ops (``ops``) and counts what it refused
    (``dropped``, in events); safe for many adding threads and one taking thread."""

    def __init__(self):
        super().__init__()
        self.ops = 0
        self.dropped = 0
        self._count = threading.Lock()

    def append(self, item) -> None:
        t = type(item)
        n = len(item) if t is list else 1
        with self._count:
            if t is not tuple and self.ops + n > QUEUE_LIMIT:
                self.dropped += 2 * n if t is list else 1   # a record stands for two events
                return
            self.ops += n
            collections.deque.append(self, item)

    def take(self, n: int) -> tuple[list, int, int]:
        """Up to ``n`` items from the front, the events dropped since the last take, and the
        ops queued before it."""
        pop = self.popleft
        items = [pop() for _ in range(min(n, len(self)))]
        taken = sum(len(x) if type(x) is list else 1 for x in items)
        with self._count:
            before = self.ops
            self.ops -= taken
            dropped, self.dropped = self.dropped, 0
        return items, dropped, before

    def clear(self) -> None:
        with self._count:
            collections.deque.clear(self)
            self.ops = 0


class Stream:
    """One client's event stream: ``queue``, the ``sink`` its ops' records go to, and the
    ``encoder`` that remembers what it has named to that client."""

    def __init__(self):
        self.queue = BoundedQueue()
        self.sink = RecordSink(self.queue)
        self.encoder = Encoder(self.sink)
        self.deferred = False   # as ``subscribe``'s ``settles``: pending summaries queued

    def on_event(self, e) -> None:
        """The event bus's callback (executing threads): queued, or dropped when full."""
        self.sink.put_event(e)

    op_write = on_event   # as a settling sink: a callback's events with no debugger

    def batch(self, n: int) -> tuple[bytes | None, bool]:
        """The next ``events`` message (up to ``n`` items; None when there is nothing to
        send) and whether the queue was full before it (ops should come as events)."""
        items, dropped, before = self.queue.take(n)
        extra = []
        if dropped:   # said in the stream itself, where the gap is
            extra.append(event_to_row(ev.Warning(
                ev.next_seq(), None, time.perf_counter_ns(), threading.get_ident(), "", "",
                None, f"{dropped} events were not sent: the client did not keep up",
                "dropped")))
        return self.encoder.encode(items, extra), before >= QUEUE_LIMIT
