"""The bridge between the executing (worker) thread and the app.

The app talks to a ``Link`` (the debugger core's frontend protocol), local or
remote alike. Worker side: events go into a deque (the app drains it on a
timer, in batches — never one ``call_from_thread`` per event); a pause posts
itself to the app once and the link holds the run until ``answer(action)``;
pdb sessions are bracketed by ``pdb_session`` so the app is suspended while
pdb owns the terminal. App side: ``answer(action)``, ``drain(limit)``,
``interrupt()``, ``quit()``.
"""
from __future__ import annotations

import collections
import contextlib
import sys
import threading
import time
from typing import NamedTuple

from pyfunc_debug import events as ev
from pyfunc_debug.trace.pending import PendingOpEnd, held_array, held_bytes, settled
from pyfunc_debug.trace.summary import ROW_FIELDS

from .rows import CallInputs
from .timing import PdbSpan

__all__ = ["Bridge", "Call", "Printed", "PSEUDO"]

_OpEnd = ev.OpEnd
_RUN_ID, _THREAD, _OP, _PARENT, _INPUTS, _OUTPUTS = map(
    _OpEnd._fields.index, ("run_id", "thread", "op", "parent", "inputs", "outputs"))
_VALUE = ROW_FIELDS   # a summary's ``value``: the field after its row's

# values up to this size are copied with each event so the inspector can show them
VALUE_BYTES = 64 * 1024
PRINTED_KEPT = 20_000     # lines of the script's output kept to print again after the UI
# bytes held by the events drained and not yet recorded, at most: 16 MB is 16,000 calls of
# an 8x8 float32 callback (as hex), two seconds of a hot tf.data pipeline
RECORD_PENDING = 16 << 20
RECORD_CHUNK = 4096   # events recorded at a time (about 15 ms of the UI thread)


class Printed(NamedTuple):
    """Text the script printed, queued with the events so the log keeps their order."""

    text: str
    stderr: bool


class Call(NamedTuple):
    """The values of one call of an op: inputs as it started, outputs (none if it failed)."""

    run_id: int
    inputs: list
    outputs: list
    failed: bool = False


class _PrintSink:
    """Textual's print-capture target: what the script prints joins the event queue, and
    is kept to be printed again on the terminal when the UI closes."""

    def __init__(self, queue, kept):
        self._append = queue.append
        self._keep = kept.append

    def post_message(self, message) -> bool:
        printed = Printed(message.text, message.stderr)
        self._append(printed)
        self._keep(printed)
        return True


class Bridge:
    """Moves a link's events and pauses to the app (``pyfunc_debug.debug.frontend.Link``:
    local — a debugger in this process — or remote, the same code path)."""

    def __init__(self, post_pause, request_suspend=None, link=None, pdb_io=None,
                 guard_mutation: bool = False):
        self._post_pause = post_pause              # called (off the UI thread) with each Pause
        self._request_suspend = request_suspend    # asks the app to suspend for pdb
        self.events: collections.deque = collections.deque()
        self.printed: collections.deque = collections.deque(maxlen=PRINTED_KEPT)
        self.print_sink = _PrintSink(self.events, self.printed)
        # every event, values stripped (for export), kept as its line: a long session's
        # events take a third of the memory and are nothing the collector walks
        from pyfunc_debug.trace.lines import EventLines
        self._record = EventLines()
        # drained events holding pending summaries, recorded once settled: when the program
        # idles or pauses (``settle_record``), or past RECORD_PENDING bytes (the summaries'
        # pending bytes and captured values)
        self._unrecorded: list = []
        self._unrecorded_bytes = 0
        # op -> its latest call, and its latest call that finished (may be the same): a
        # ``Call``, or the call's ``OpEnd`` itself, made a ``Call`` when read (``latest``,
        # ``finished``); op -> (run_id, inputs) as the op left them, when it wrote into them
        self.latest_values: dict = {}
        self.last_finished: dict = {}
        self.inputs_after: dict = {}
        self._pause_inputs: dict = {}              # (op, thread) -> (run_id, inputs) at a pause
        self.interrupted = False                   # Ctrl+C ended the session
        self.pdb_done = threading.Event()
        self.app_suspended = threading.Event()
        self.app_back = threading.Event()          # the app is drawing again after pdb
        self.quitting = False
        self.paused = None
        # a settling sink (``events.subscribe``'s ``settles``): a framework callback leaves
        # its small arrays' summaries pending; the UI's thread takes them when it shows
        # them, and the record when the program idles (``settle_record``)
        self.deferred = False
        if link is None:   # imported here: a remote link (attach) needs no debugger here
            from pyfunc_debug.debug.frontend import LocalLink
            link = LocalLink(guard_mutation=guard_mutation)
        self.link = link
        stdin, stdout = pdb_io if pdb_io is not None else (sys.__stdin__, sys.__stdout__)
        self.link.set_terminal(stdin, stdout, around=self.pdb_session)

    @property
    def debugger(self):
        """The in-process debugger (local links only)."""
        return getattr(self.link, "debugger", None)

    # -- worker side -------------------------------------------------------------------
    def _on_event(self, e) -> None:
        """The link's callback, on the executing threads: written for speed (every event of
        a running program passes here while the UI is up). An op's values are kept as its
        latest call. The event keeps them too: what holds it (the queue, the model's row
        of its op) holds that call's values anyway, its record (``recorded``) leaves
        them out, and stripping them here cost the program's thread a tenth of this link.
        A framework callback's ``PendingOpEnd`` keeps its small arrays as pending
        summaries (their bytes): summarising them there was most of this link's cost to
        the program (measured: +18 µs a call before, +9.3 µs after, the console's +8.6),
        and the UI's thread takes them when it shows them (``settle_record``).
        The event itself is kept as its op's latest call: a ``Call`` is made of it only
        when the inspector asks (``latest``)."""
        cls = e.__class__
        if cls is _OpEnd or cls is PendingOpEnd:
            if e[_PARENT] is None:
                if self._pause_inputs:
                    self._pause_inputs.pop((e[_OP], e[_THREAD]), None)
                self.latest_values[e[_OP]] = self.last_finished[e[_OP]] = e
        elif cls is ev.OpError and e.parent is None:
            self._failed(e)
            return
        elif cls is ev.Warning:   # input_modified: the inputs as the op left them
            stripped = ev.without_values(e)
            if stripped is not e and e.parent is None:
                self.inputs_after[e.op] = (e.run_id, [s.value for s in e.inputs])
            e = stripped
        self.events.append(e)

    op_write = _on_event   # as a settling sink: the events of a callback with no debugger

    def _failed(self, e) -> None:
        """A call failed: its values are the inputs a pause before it saw, never those of
        another call (a framework op may run many calls at once)."""
        seen = self._pause_inputs.pop((e.op, e.thread), None)
        inputs, summaries = seen[1:] if seen is not None and seen[0] == e.run_id else ([], ())
        self.latest_values[e.op] = Call(e.run_id, inputs, [], failed=True)
        self.events.append(e)
        if summaries:
            self.events.append(CallInputs(e.op, e.run_id, tuple(summaries)))

    def _on_pause(self, pause) -> None:
        if self.quitting:
            self.link.answer("abort")
            return
        if pause.parent is None and pause.when == "before":
            self._pause_inputs[(pause.op_name, pause.thread)] = (
                pause.run_id, list(pause.inputs), pause.input_summaries())
        elif pause.parent is None and pause.when == "error":   # its OpError came first
            call = self.latest(pause.op_name)
            if call is not None and call.failed and not call.inputs and pause.inputs:
                self.latest_values[pause.op_name] = call._replace(inputs=list(pause.inputs))
                self.events.append(CallInputs(pause.op_name, pause.run_id,
                                              tuple(pause.input_summaries())))
        self.paused = pause
        self._post_pause(pause)

    @contextlib.contextmanager
    def pdb_session(self):
        """Around every pdb session: the app is suspended until it ends."""
        if not self.app_suspended.is_set() and self._request_suspend is not None:
            self._request_suspend()                 # e.g. breakpoint() in user code
            self.app_suspended.wait(timeout=10)
        start = time.perf_counter_ns()              # the clock of events' t_ns
        try:
            yield
        finally:
            # the op's duration must not count the time the user spent in pdb
            self.events.append(PdbSpan(threading.get_ident(), start, time.perf_counter_ns()))
            self.app_suspended.clear()
            self.app_back.clear()
            self.pdb_done.set()
            # what the program prints next belongs in the log: while the app is suspended
            # it would go to the terminal, under the UI once it is back (bounded: an app
            # that is gone must not hold the program). A quit in pdb: the app leaves at once
            if not getattr(self.link, "quit_in_pdb", None):
                self.app_back.wait(timeout=5)

    def run(self, target) -> object:
        """Run ``target()`` (in the worker) with the link started, recording events.
        Remote, ``target`` waits for the other process to end."""
        self.link.start(self._on_event, self._on_pause, capture="full",
                        capture_bytes=VALUE_BYTES, settles=self)
        try:
            return target()
        finally:
            self.link.stop()

    # -- app side -----------------------------------------------------------------------
    def latest(self, name: str) -> Call | None:
        """Op ``name``'s latest call (its values as kept: see ``Call``)."""
        return _as_call(self.latest_values.get(name))

    def finished(self, name: str) -> Call | None:
        """Op ``name``'s latest call that finished."""
        return _as_call(self.last_finished.get(name))

    def answer(self, action: str) -> None:
        self.paused = None
        self.link.answer(action)

    def keep_paused_call(self, pause) -> None:
        """A pause at an op's error ends: its call stays the op's latest — its ``OpError``
        carried no inputs, and another call of the op may have failed while it was paused."""
        if pause.when != "error" or pause.parent is not None:
            return
        name = pause.op_name
        self.latest_values[name] = Call(pause.run_id, list(pause.inputs), [], failed=True)
        after = getattr(pause, "inputs_after", None)   # a remote pause has none
        if after is not None:
            self.inputs_after[name] = (pause.run_id, list(after))
        else:   # another call's: not this one's
            self.inputs_after.pop(name, None)

    def drain(self, limit: int) -> list:
        """Up to ``limit`` events and ``Printed`` texts, oldest first (the app's timer)."""
        out = []
        pop = self.events.popleft
        try:
            for _ in range(limit):
                out.append(pop())
        except IndexError:
            pass
        kept = [e for e in out if type(e) not in PSEUDO]
        if self.deferred:   # pending summaries (see _on_event): taken when needed
            self._unrecorded += kept
            self._unrecorded_bytes += held_bytes(kept)
            if self._unrecorded_bytes > RECORD_PENDING:   # never behind by more than that
                self.settle_record(max(RECORD_CHUNK, len(kept)))
        else:
            self._record.extend(kept)
        return out

    def settle_record(self, limit: int | None = None) -> None:
        """Record the events drained with pending summaries, these taken (``trace.pending``),
        the oldest ``limit`` of them (all: None). The app records them when a tick finds no
        new event (a chunk a tick, so the screen stays responsive), and past RECORD_PENDING
        bytes. While a program runs hot, its ops' summaries are taken only for what the UI
        shows: the log's lines in view, the op list's rows, the inspector's op."""
        waiting = self._unrecorded
        if not waiting:
            return
        chunk = waiting if limit is None or limit >= len(waiting) else waiting[:limit]
        self._unrecorded = waiting[len(chunk):]
        self._unrecorded_bytes = self._unrecorded_bytes - held_bytes(chunk) \
            if self._unrecorded else 0
        settled(chunk)
        self._record.extend(chunk)

    @property
    def recorded(self):
        """Every event drained, values stripped (``trace.lines.EventLines``: for export)."""
        self.settle_record()
        return self._record

    def interrupt(self) -> None:
        """Pause before the next op that runs (any thread)."""
        self.link.interrupt()

    def quit(self, interrupted: bool = False) -> None:
        """The app is leaving: a local run aborts (a paused one at once, a running one at its
        next op); a remote process is detached from. ``interrupted``: by Ctrl+C (exit 130)."""
        self.quitting = True
        self.interrupted = self.interrupted or interrupted
        self.paused = None
        self.link.quit()


def _value(s):
    """A summary's captured value; the array a pending summary holds (``trace.pending``)."""
    return held_array(s) if s.__class__ is tuple else s.value


def _as_call(kept) -> Call | None:
    """A call as ``Bridge`` keeps it (a ``Call``, or the ``OpEnd`` of one) as a ``Call``."""
    if kept is None or kept.__class__ is Call:
        return kept
    return Call(kept[_RUN_ID], list(map(_value, kept[_INPUTS])),
                list(map(_value, kept[_OUTPUTS])))


# what the queue carries besides events: not recorded, not counted as events
PSEUDO = (Printed, PdbSpan, CallInputs)

