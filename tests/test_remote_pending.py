"""A framework callback's small summaries on the wire (``attach`` with the UI): the target
copies a small array's bytes instead of summarising it (``trace.pending``), the client
checks every pending summary before anything reads it, and what the UI shows, once
settled, is ``summarize`` of the very arrays the call saw."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from pyfunc_debug import events as ev
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.debug.frontend import LocalLink
from pyfunc_debug.external_calls import CallbackRun
from pyfunc_debug.remote.client import RemoteLink
from pyfunc_debug.remote.event_stream import Decoder, Encoder
from pyfunc_debug.remote.server import Server
from pyfunc_debug.remote.wire import WireError, parse_line
from pyfunc_debug.trace.pending import DEFER_LIMIT, PendingOpEnd, pending, settled
from pyfunc_debug.trace.summary import ValueSummary, summarize

from test_remote import _until  # noqa: E402

TOKEN = "t0k"


def _end(ins, outs, seq=7, run_id=1) -> PendingOpEnd:
    return tuple.__new__(PendingOpEnd, (seq, run_id, 100, 1, "augment", "EagerPyFunc", None,
                                        5, tuple(ins), tuple(outs), None, None))


def _pending(a):
    return pending(a, a.tobytes(), False)


def _message(events) -> dict:
    data = Encoder().encode(events)
    assert data is not None and data.endswith(b"\n")   # no records: no blob
    return parse_line(data)


def test_a_pending_summary_crosses_the_wire_and_settles_to_summarize():
    x = np.random.default_rng(1).random((8, 8), dtype=np.float32)
    y = np.arange(5, dtype=np.int64)
    e = _end([_pending(x)], [_pending(y), summarize(np.float32(2.5))])
    got = Decoder(pending=True).decode(_message([e]))
    assert len(got) == 1 and got[0].__class__ is PendingOpEnd
    assert got[0].inputs[0] == _pending(x) and got[0].outputs[0] == _pending(y)
    settled(got)
    assert got[0].__class__ is ev.OpEnd
    assert got[0].inputs == (summarize(x),)
    assert got[0].outputs == (summarize(y), summarize(np.float32(2.5)))


def _hostile(mutate) -> dict:
    msg = _message([_end([_pending(np.ones(4, np.float32))], [])])
    mutate(msg["rows"][0][9][0])   # the OpEnd row's first input
    return msg


@pytest.mark.parametrize("mutate, says", [
    (lambda p: p.__setitem__(10, "zz" * 16), "hex"),
    (lambda p: p.__setitem__(10, "0000803f" * 3 + "000080  "), "hex"),
    (lambda p: p.__setitem__(1, "object"), "never deferred"),
    (lambda p: p.__setitem__(0, [3]), "shape|bytes"),
    (lambda p: (p.__setitem__(0, [DEFER_LIMIT * 4]), p.__setitem__(2, DEFER_LIMIT * 4),
                p.__setitem__(10, "00" * 16 * DEFER_LIMIT)), "at most"),
    (lambda p: p.__setitem__(10, None), "bytes"),
    (lambda p: p.__setitem__(10, 7), "bytes"),
    (lambda p: p.__setitem__(3, "low"), "min"),
])
def test_a_malformed_pending_summary_ends_the_link_naming_the_field(mutate, says):
    with pytest.raises(WireError, match="field 'rows'") as info:
        Decoder(pending=True).decode(_hostile(mutate))
    assert any(w in str(info.value) for w in says.split("|"))


def test_a_batch_orjson_cannot_encode_goes_out_settled():
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    big = ev.Warning(2 ** 70, None, 1, 1, "augment", "EagerPyFunc", None, "w", "user")
    got = Decoder(pending=True).decode(_message([_end([_pending(x)], []), big]))
    assert got[0].__class__ is ev.OpEnd and got[0].inputs == (summarize(x),)
    assert got[1].seq == 2 ** 70


def _serve_calls(values, pending_summaries: bool):
    """Calls of a framework callback (``x * 2``) served to a client that asked for summaries,
    and pending ones if ``pending_summaries``; the client's events."""
    server = Server("127.0.0.1", 0, TOKEN, LocalLink())
    link = RemoteLink(f"127.0.0.1:{server.port}", TOKEN, capture="summary",
                      pending=pending_summaries)
    got = []

    class Frontend:
        deferred = False

    frontend = Frontend()
    link.start(got.append, lambda p: link.answer("continue"), settles=frontend)
    run, op = CallbackRun("tensorflow"), ExternalOp("double", "EagerPyFunc", "prog.py:3")
    try:
        _until(lambda: server._client is not None and server.link._active, "the attach")
        for v in values:
            run.call(op, lambda a: a * np.float32(2), (v,))
        run.end()
        _until(lambda: any(type(e) is ev.RunEnd for e in got), "the events")
    finally:
        link.stop()
        server.close()
    return got, frontend


def test_served_callbacks_come_pending_to_a_ui_and_settle_to_what_they_saw():
    rng = np.random.default_rng(0)
    xs = [rng.random((8, 8), dtype=np.float32) for _ in range(3)]
    nan = np.array([1.0, np.nan, 2.0], np.float32)
    got, frontend = _serve_calls(xs + [nan], pending_summaries=True)
    assert frontend.deferred
    ends = [e for e in got if isinstance(e, ev.OpEnd)]
    assert len(ends) == 4 and all(e.__class__ is PendingOpEnd for e in ends[:3])
    assert all(s.__class__ is tuple for e in ends[:3] for s in e.inputs + e.outputs)
    # an output holding a NaN is summarised at once, in the target: its counts are exact
    assert ends[3].outputs[0].__class__ is not tuple and ends[3].outputs[0].nan == 1
    settled(ends)
    for e, x in zip(ends, xs + [nan]):
        assert e.inputs == (summarize(x),) and e.outputs == (summarize(x * np.float32(2)),)


def test_a_client_that_takes_no_pending_summaries_gets_them_summarised():
    x = np.random.default_rng(2).random(64, dtype=np.float32)
    got, frontend = _serve_calls([x], pending_summaries=False)
    assert not frontend.deferred
    end = next(e for e in got if isinstance(e, ev.OpEnd))
    assert end.__class__ is ev.OpEnd and isinstance(end.inputs[0], ValueSummary)
    assert end.inputs == (summarize(x),)


@pytest.mark.asyncio
async def test_the_attached_ui_shows_a_served_callbacks_values_and_records_them_settled():
    import contextlib

    from pyfunc_debug.tui.launch import attach_app
    from pyfunc_debug.tui.widgets.event_log import EventLog

    server = Server("127.0.0.1", 0, TOKEN, LocalLink())
    link = RemoteLink(f"127.0.0.1:{server.port}", TOKEN, capture="summary", pending=True)
    app = attach_app(link, suspend=contextlib.nullcontext, show_timings=False)
    xs = [np.full((2, 3), i, np.float32) for i in range(5)]
    run, op = CallbackRun("tensorflow"), ExternalOp("double", "EagerPyFunc", "prog.py:3")

    def program():
        server.wait_for_client(10)
        for x in xs:
            run.call(op, lambda a: a * np.float32(2), (x,))
        run.end()

    try:
        async with app.run_test(size=(120, 40)) as pilot:
            threading.Thread(target=program, daemon=True).start()
            deadline = time.monotonic() + 20
            while app.model.events < 12 and time.monotonic() < deadline:   # 5 calls, a run
                await pilot.pause(0.05)
            assert app.bridge.deferred   # the link asked for pending summaries
            row = app.model.rows["double"]
            assert row.calls == 5
            assert row.inputs == (summarize(xs[-1]),)
            assert row.outputs == (summarize(xs[-1] * 2),)
            shown = "\n".join(app.query_one(EventLog).lines)
            assert summarize(xs[-1] * 2).short() in shown
            ends = [e for e in app.bridge.recorded if isinstance(e, ev.OpEnd)]
            assert [e.outputs for e in ends] == [(summarize(x * 2),) for x in xs]
            await pilot.press("q")
            app.stop_ticking()
    finally:
        link.stop()
        server.close()


def test_attach_streams_values_and_diagnostics_unless_told_otherwise():
    from pyfunc_debug.cli import build_parser
    p = build_parser()
    assert p.parse_args(["attach", "127.0.0.1:1"]).capture == "summary"
    assert p.parse_args(["attach", "127.0.0.1:1", "--capture", "none"]).capture == "none"


@pytest.mark.asyncio
@pytest.mark.parametrize("capture", ["none", "summary"])
async def test_an_attached_ui_says_why_it_shows_no_values(capture):
    """With ``--capture none`` the events carry no summaries: the inspector must not say
    the op has no inputs or outputs, and the title says what the stream leaves out. With
    summaries, a graph op's values come only with a pause (not "too big to keep")."""
    import contextlib

    import pyfunc_debug as tf
    from pyfunc_debug.tui.launch import attach_app
    from pyfunc_debug.tui.rows import NOT_STREAMED
    from pyfunc_debug.tui.widgets.inspector import Inspector
    from pyfunc_debug.tui.widgets.op_list import OpList

    server = Server("127.0.0.1", 0, TOKEN, LocalLink())
    link = RemoteLink(f"127.0.0.1:{server.port}", TOKEN, capture=capture, pending=True)
    app = attach_app(link, suspend=contextlib.nullcontext, show_timings=False)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        tf.numpy_function(lambda a: a * 2, [x], tf.float32, name="double")

    def program():
        server.wait_for_client(10)
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run("double:0", {x: np.arange(3, dtype=np.float32)})

    try:
        async with app.run_test(size=(120, 40)) as pilot:
            said = "with --capture none (no values)" in app.sub_title
            assert said == (capture == "none")
            threading.Thread(target=program, daemon=True).start()
            deadline = time.monotonic() + 20
            while app.model.ops_done < 1 and time.monotonic() < deadline:
                await pilot.pause(0.05)
            app.query_one(OpList).select("double")
            app._show_selected("double")
            await pilot.pause()
            caption = str(app.query_one(Inspector).query_one("#insp-caption").render())
            assert "no inputs or outputs" not in caption and "bigger" not in caption
            assert (NOT_STREAMED in caption) == (capture == "none")
            assert ("come with a pause" in caption) == (capture == "summary")
            await pilot.press("q")
            app.stop_ticking()
    finally:
        link.stop()
        server.close()
