"""The same TUI against a remote process (Pilot): events stream in, a pause is answered from
the app, breakpoints toggled in the app take effect in the target, ``s`` runs pdb in the
target with the app's pdb streams, ``q`` detaches."""
from __future__ import annotations

import contextlib
import io
import threading
import time

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug.debug.frontend import LocalLink
from pyfunc_debug.remote.client import RemoteLink
from pyfunc_debug.remote.server import Server
from pyfunc_debug.tui.launch import attach_app

pytestmark = pytest.mark.asyncio


def _double(a):
    return a * 2


async def _until(pilot, cond, what, deadline=20.0):
    end = time.monotonic() + deadline
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


async def test_tui_attached_to_a_remote_process(monkeypatch):
    monkeypatch.setenv("PDBPP_COLORS", "0")
    server = Server("127.0.0.1", 0, "t", LocalLink())
    link = RemoteLink(f"127.0.0.1:{server.port}", "t")
    link.break_on(op="double")
    pdb_out = io.StringIO()
    app = attach_app(link, suspend=contextlib.nullcontext,
                     pdb_io=(io.StringIO("p a.sum()\nc\n"), pdb_out), show_timings=False)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        z = tf.add(tf.numpy_function(_double, [x], tf.float32, name="double"), 1.0, name="plus")
    results = []

    def target():
        server.wait_for_client(10)
        with tf.compat.v1.Session(graph=g) as sess:
            for _ in range(2):
                results.append(sess.run(z, {x: np.arange(3, dtype=np.float32)}))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            runner = threading.Thread(target=target, daemon=True)
            runner.start()
            await _until(pilot, lambda: app.pause is not None, "the remote pause")
            assert app.pause.op_name == "double" and app.pause.value("inputs", 0).sum() == 3
            await pilot.press("e")                        # break on error, set in the target
            await _until(pilot, lambda: any(b.on_error for b in server.link.breakpoints),
                         "the target's error breakpoint")
            await pilot.press("c")
            await _until(pilot, lambda: app.pause is not None and app.model.runs == 2,
                         "the second run's pause")
            await pilot.press("s")                        # pdb in the target, our streams
            await _until(pilot, lambda: len(results) == 2, "the runs to finish")
            await _until(pilot, lambda: "3.0" in pdb_out.getvalue(), "pdb's output")
            assert "_double()" in pdb_out.getvalue()
            await _until(pilot, lambda: app.model.ops_done >= 2, "the events")
            await pilot.press("q")                        # detach: the target runs on
            await _until(pilot, lambda: link.ended.is_set(), "the detach")
            app.stop_ticking()
    finally:
        server.close()
    np.testing.assert_array_equal(results[1], [1, 3, 5])
    assert server.link.breakpoints == []


async def test_a_trace_exported_from_the_attached_ui_names_the_targets_pid(tmp_path,
                                                                           monkeypatch):
    """``x`` in the attached UI wrote the client's own pid into the trace (JSONL header and
    Chrome metadata): the recording said it came from the process that only watched."""
    import json
    monkeypatch.chdir(tmp_path)
    server = Server("127.0.0.1", 0, "t", LocalLink())
    link = RemoteLink(f"127.0.0.1:{server.port}", "t")
    link.pid = 424242          # the target's, as its welcome said (here: the same process)
    app = attach_app(link, suspend=contextlib.nullcontext, show_timings=False)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.numpy_function(_double, [x], tf.float32, name="double")

    def target():
        server.wait_for_client(10)
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(y, {x: np.ones(2, np.float32)})
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            threading.Thread(target=target, daemon=True).start()
            await _until(pilot, lambda: app.model.ops_done >= 1, "the run's events")
            for name in ("t.jsonl", "t.json"):
                await pilot.press("x")
                await pilot.pause(0.1)
                app.screen.query_one("Input").value = name
                await pilot.press("enter")
                await _until(pilot, lambda: (tmp_path / name).exists(), name)
            await pilot.press("q")
            await _until(pilot, lambda: link.ended.is_set(), "the detach")
            app.stop_ticking()
    finally:
        server.close()
    header = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])
    assert header["pid"] == 424242
    meta = json.loads((tmp_path / "t.json").read_text())["traceEvents"][0]
    assert meta["args"]["os_pid"] == 424242
