"""The UI does a running program's per-call work only for what it shows (issue 24): a
framework callback's small summaries stay pending, and its log lines unformatted, until
the screen shows them (the log's lines in view, the op list's rows, the inspector's op)
or the session is recorded (when the program idles, or past a memory budget). What the
user reads is the same as if everything had been taken at once."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

from pyfunc_debug import events as ev
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.external_calls import CallbackRun
from pyfunc_debug.trace.pending import PendingOpEnd, settled
from pyfunc_debug.trace.summary import summarize

pytest.importorskip("textual")
from pyfunc_debug.tui import bridge as bridge_module  # noqa: E402
from pyfunc_debug.tui.app import PfdApp  # noqa: E402
from pyfunc_debug.tui.bridge import Bridge  # noqa: E402
from pyfunc_debug.tui.log_text import format_event  # noqa: E402
from pyfunc_debug.tui.widgets.event_log import EventLog  # noqa: E402
from pyfunc_debug.tui.widgets.op_list import OpList  # noqa: E402

SIZE = (120, 40)
CALLS = 400
DATA = np.random.default_rng(0).random((8, 8), dtype=np.float32)


def _callback_events(calls: int = CALLS) -> list:
    """``calls`` calls of two callback ops (8x8 float32) as the UI's link queues them."""
    run = CallbackRun("tensorflow")
    ops = [ExternalOp("augment", "EagerPyFunc", "prog.py:7"),
           ExternalOp("scale", "EagerPyFunc", "prog.py:9")]
    b = Bridge(lambda pause: None)

    def program():
        for i in range(calls):
            run.call(ops[i % 2], lambda a, k=i: a * np.float32(k + 1), (DATA,))
        run.end()

    b.run(program)
    return list(b.events)


def _screen_lines(widget) -> list[str]:
    return ["".join(seg.text for seg in widget.render_line(y)).rstrip()
            for y in range(widget.size.height)]


@pytest.mark.asyncio
async def test_a_hot_callbacks_lines_and_summaries_are_taken_only_as_shown():
    events = _callback_events()
    assert sum(type(e) is PendingOpEnd for e in events) == CALLS
    app = PfdApp(None, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        app._ticker.pause()
        app.bridge.deferred = True   # as the UI's link sets it
        for e in events:
            app.bridge._on_event(e)
        app.tick()
        await pilot.pause()
        log = app.query_one(EventLog)
        # only the lines the log drew were formatted (and their summaries taken)
        waiting = sum(entry.__class__ is not str for entry in log._lines)
        assert len(events) - 2 * log.size.height <= waiting < len(events)
        assert len(app.bridge._unrecorded) == len(events)   # the program is still running

        # what the screen shows is what taking everything at once gives
        eager = list(events)
        settled(eager)
        lines = [format_event(e, False) for e in eager]
        shown = [line for line in _screen_lines(log) if line]
        assert len(shown) >= 10   # each cut at the pane's width
        for line, full in zip(shown, lines[-len(shown):]):
            assert full.startswith(line) and len(line) > 20, (line, full)
        assert lines[-2].endswith(summarize(DATA * np.float32(CALLS)).short())
        assert lines[-1].startswith(shown[-1]) and "end   ok" in lines[-1]
        last = {e.op: e for e in eager if type(e) is ev.OpEnd}
        rows = _screen_lines(app.query_one(OpList))
        for name, end in last.items():
            (row,) = [r for r in rows if f" {name} " in f" {r} "]
            cut = row.split("EagerPyFunc", 1)[1].strip()   # cut at the pane's width
            assert cut and end.outputs[0].short().startswith(cut), (row, end.outputs[0])
            assert app.model.rows[name].outputs[0][:-1] == end.outputs[0][:-1]
        log.scroll_home(animate=False, immediate=True)   # the user scrolls to the top
        await pilot.pause()
        top = [line for line in _screen_lines(log) if line]
        assert top[0].startswith(f"{events[0].seq:>8} run")
        for line, full in zip(top, lines):
            assert full.startswith(line) and len(line) > 20, (line, full)
        assert list(log.lines) == lines   # read in full: every line formatted

        # a tick with no new event (the program idles): the session is recorded, settled
        app.tick()
        assert not app.bridge._unrecorded
        recorded = list(app.bridge.recorded)
        assert len(recorded) == len(events)
        assert [e.outputs[0][:-1] for e in recorded if type(e) is ev.OpEnd] == \
            [e.outputs[0][:-1] for e in eager if type(e) is ev.OpEnd]
        app.stop_ticking()


def test_the_record_takes_its_pending_summaries_past_its_memory_budget(monkeypatch):
    """A program that never idles: the bytes waiting to be recorded stay bounded (the
    oldest first, at least as many events as came), and the record keeps their order."""
    events = _callback_events(60)
    one_call = 2 * 2 * DATA.nbytes   # an input and an output, as hex
    monkeypatch.setattr(bridge_module, "RECORD_PENDING", 10 * one_call)
    monkeypatch.setattr(bridge_module, "RECORD_CHUNK", 4)   # two calls
    b = Bridge(lambda pause: None)
    b.deferred = True
    drained = 0
    for i in range(0, len(events), 6):   # 3 calls a drain
        for e in events[i:i + 6]:
            b._on_event(e)
        drained += len(b.drain(100))
        assert b._unrecorded_bytes <= 13 * one_call
        assert len(b._record) + len(b._unrecorded) == drained
    assert len(b._record) > 0 and all(type(e) is not PendingOpEnd for e in b._record)
    b.settle_record(3)   # the oldest three
    assert [e.seq for e in b.recorded] == [e.seq for e in events]
    assert all(type(e) is not PendingOpEnd for e in b.recorded)
