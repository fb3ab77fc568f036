"""Attach to a running process (SPEC §7): the frontend protocol over a socket.

In-process: a ``Server`` and a ``RemoteLink`` in this process (loopback).
Subprocess: a real target (``PYFUNC_DEBUG_LISTEN``, ``pfd.debug.listen``) and a
real client (``pyfunc-debug attach --console``), killed with SIGKILL.
"""
from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.debug.frontend import LocalLink
from pyfunc_debug.remote.client import AttachError, RemoteLink
from pyfunc_debug.remote.server import Server
from pyfunc_debug.remote.wire import from_npy, to_npy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "s3cret"


def _until(cond, what, timeout=15.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.fixture
def server():
    srv = Server("127.0.0.1", 0, TOKEN, LocalLink())
    yield srv
    srv.close()


def _attach(srv, **kw):
    return RemoteLink(f"127.0.0.1:{srv.port}", TOKEN, **kw)


def _graph(big=False):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = tf.numpy_function(_double, [x], tf.float32, name="double")
        z = tf.add(y, 1.0, name="plus")
    return g, x, z


def _double(a):
    doubled = a * 2
    return doubled


def _stepped_into_double(srv, stdin, stdout, n):
    """Attach with pdb on ``stdin``/``stdout``, run ``double`` on arange(n) in a thread and
    answer its pause with step-into: (link, thread, its result dict)."""
    link = _attach(srv)
    link.set_terminal(stdin, stdout)
    pauses = []
    link.break_on(op="double")
    link.start(None, pauses.append)
    t, out = _run_in_thread(*_graph(), np.arange(n, dtype=np.float32))
    _until(lambda: pauses, "the pause")
    link.answer("step_into")
    return link, t, out


def _run_in_thread(g, x, z, value):
    out = {}

    def run():
        try:
            with tf.compat.v1.Session(graph=g) as sess:
                out["result"] = sess.run(z, {x: value})
        except Exception as e:  # noqa: BLE001 - the test looks at it
            out["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


# -- in-process ----------------------------------------------------------------------------
def test_attach_break_inspect_continue(server):
    link = _attach(server, capture="summary")      # summaries in every streamed event
    events, pauses = [], []
    link.break_on(op="double")
    link.start(events.append, pauses.append)
    assert server.wait_for_client(10)
    big = np.arange(40_000, dtype=np.float32)      # 160 kB: travels only on request
    t, out = _run_in_thread(*_graph(), big)
    _until(lambda: pauses, "the pause")
    pause = pauses[0]
    assert (pause.op_name, pause.when) == ("double", "before")
    assert "step_into" in pause.actions
    assert pause.input_summaries()[0].shape == (40_000,)
    assert pause.inputs[0] is None                 # summary only, until asked for
    np.testing.assert_array_equal(pause.value("inputs", 0), big)
    assert link.breakpoints[0].hits == 1
    link.answer("continue")
    t.join(10)
    np.testing.assert_array_equal(out["result"], big * 2 + 1)
    _until(lambda: any(type(e) is ev.RunEnd for e in events), "the run's events")
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "RunStart" and "BreakpointHit" in kinds and kinds[-1] == "RunEnd"
    ends = [e for e in events if type(e) is ev.OpEnd]
    assert [e.op for e in ends] == ["double", "plus"] and ends[0].outputs[0].max == 79_998.0
    link.quit()
    assert link.wait(5).status == 0


def test_wrong_token_and_a_second_client_are_refused(server):
    with pytest.raises(AttachError, match="wrong token"):
        RemoteLink(f"127.0.0.1:{server.port}", "guess")
    first = _attach(server)
    with pytest.raises(AttachError, match="another client is attached"):
        _attach(server)
    first.quit()
    _until(lambda: server._conn is None, "the detach")
    _attach(server).quit()      # once detached, the next one is welcome


def test_a_printed_token_is_never_taken_for_an_option():
    """``attach HOST:PORT --token T`` as the target prints it: a token starting with "-"
    (a base64 one did, one time in 64) made argparse stop with "expected one argument"."""
    from pyfunc_debug.cli import main
    from pyfunc_debug.remote.listen import new_token
    tokens = {new_token() for _ in range(2000)}
    assert len(tokens) == 2000 and not any(t.startswith("-") for t in tokens)
    assert all(len(t) >= 32 for t in tokens)      # 128 bits, as before

    def status(token):
        try:
            return main(["attach", "127.0.0.1:9", "--token", token, "--console"])
        except SystemExit as e:
            return e.code
    assert status("-Qm9v") == 2                  # a usage error: the failure this prevents
    assert status(min(tokens)) not in (0, 2)      # read as the token; nobody listens there


def test_detach_mid_pause_continues_with_a_warning_and_removes_its_breakpoints(server, capsys):
    """The Warning event has no reader once the client is gone: the process's stderr,
    where it said it listens, says it too."""
    warnings = []
    sub = ev.subscribe(lambda e: type(e) is ev.Warning and warnings.append(e))
    try:
        link = _attach(server)
        pauses = []
        link.break_on(op="double")
        link.start(None, pauses.append)
        t, out = _run_in_thread(*_graph(), np.ones(3, np.float32))
        _until(lambda: pauses, "the pause")
        link.quit()                                # detach while paused
        t.join(10)
    finally:
        sub.close()
    np.testing.assert_array_equal(out["result"], [3, 3, 3])
    assert any(w.kind == "detached" and w.op == "double" for w in warnings)
    assert server.link.breakpoints == []           # the client's breakpoints left with it
    assert "pyfunc-debug: the debugging client went away while op 'double' was paused; " \
        "continuing" in capsys.readouterr().err


def test_bad_condition_is_refused_with_its_reason(server):
    link = _attach(server)
    with pytest.raises(ValueError, match="syntax"):
        link.break_on(when="outputs[0] >")
    with pytest.raises(ValueError, match="must be a string"):
        link.break_on(when=lambda p: True)
    link.quit()


def test_step_into_runs_pdb_in_the_target_on_the_clients_streams(server, monkeypatch):
    monkeypatch.setenv("PDBPP_COLORS", "0")
    shown = io.StringIO()
    link, t, out = _stepped_into_double(server, io.StringIO("p a.sum()\nc\n"), shown, 4)
    t.join(15)
    np.testing.assert_array_equal(out["result"], [1, 3, 5, 7])
    _until(lambda: "6.0" in shown.getvalue(), "pdb's answer")   # printed a.sum() ...
    assert "_double()" in shown.getvalue()                       # ... stopped in the function
    link.quit()


def test_a_client_leaving_mid_pdb_session_lets_the_function_run_on(server, monkeypatch):
    monkeypatch.setenv("PDBPP_COLORS", "0")
    typing = threading.Event()

    class Silent:                     # a user who never types anything
        def readline(self):
            typing.wait(30)
            return ""
    shown = io.StringIO()
    link, t, out = _stepped_into_double(server, Silent(), shown, 3)
    _until(lambda: "(Pdb" in shown.getvalue(), "pdb's prompt on the client")
    link.quit()                       # gone while pdb waits for a command
    t.join(15)
    typing.set()
    np.testing.assert_array_equal(out["result"], [1, 3, 5])


def test_wire_never_pickles():
    assert to_npy(np.array([object()], dtype=object)) is None
    strings = np.array([b"ab", b"c"], dtype=object)
    assert list(from_npy(to_npy(strings))) == [b"ab", b"c"]
    assert from_npy(to_npy(np.float32(2.5))) == np.float32(2.5)
    bad = io.BytesIO()
    np.save(bad, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        from_npy(bad.getvalue())


# -- subprocesses --------------------------------------------------------------------------
SCRIPT = """
    import sys
    import numpy as np
    import pyfunc_debug as tf
    {listen}
    x = tf.compat.v1.placeholder(tf.float32)
    y = tf.numpy_function(lambda a: a + 1, [x], tf.float32, name="inc")
    with tf.compat.v1.Session() as sess:
        print("result", sess.run(y, {{x: np.float32(41)}}), flush=True)
"""


def _env(tmp_path, **extra):
    env = dict(os.environ, HOME=str(tmp_path), PYTHONUNBUFFERED="1", PDBPP_COLORS="0")
    for k in ("PYFUNC_DEBUG_LISTEN", "PYFUNC_DEBUG_TOKEN", "PYFUNC_DEBUG_WAIT"):
        env.pop(k, None)
    env.update(extra)
    return env


def _target(tmp_path, listen="", **env):
    path = tmp_path / "target.py"
    path.write_text(textwrap.dedent(SCRIPT.format(listen=listen)))
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(tmp_path, **env))
    line = proc.stderr.readline()
    found = re.search(r"pyfunc-debug: listening on (\S+) token (\S+)", line)
    assert found, line + proc.stderr.read()
    return proc, found.group(1), found.group(2)


def _client(tmp_path, address, token, *args):
    return subprocess.Popen([sys.executable, "-m", "pyfunc_debug", "attach", address,
                             "--console", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(tmp_path, PYFUNC_DEBUG_TOKEN=token))


def _read_until(stream, text):
    seen = ""
    while text not in seen:
        ch = stream.read(1)
        if not ch:
            raise AssertionError(f"{text!r} never came; got {seen[-500:]!r}")
        seen += ch
    return seen


def test_wait_holds_the_first_run_not_the_program(tmp_path):
    path = tmp_path / "target.py"
    path.write_text(textwrap.dedent(SCRIPT.replace(
        "    with tf.compat.v1.Session()", "    print('setup done', flush=True)\n"
        "    with tf.compat.v1.Session()").format(listen="")))
    target = subprocess.Popen([sys.executable, "-m", "pyfunc_debug", "run", "--listen",
                               "127.0.0.1:0", "--wait", str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_env(tmp_path))
    try:
        found = re.search(r"listening on (\S+) token (\S+)", target.stderr.readline())
        line = []
        reader = threading.Thread(target=lambda: line.append(target.stdout.readline()),
                                  daemon=True)
        reader.start()
        reader.join(15)
        assert line == ["setup done\n"]          # the program runs up to its first run
        time.sleep(0.3)
        assert target.poll() is None                          # which waits for a client
        client = _client(tmp_path, found.group(1), found.group(2))
        out, _ = target.communicate(timeout=30)
        client.communicate(timeout=30)
    finally:
        target.kill()
    assert out == "result 42.0\n" and target.returncode == 0


def test_client_killed_while_the_target_is_paused_lets_it_resume(tmp_path):
    target, address, token = _target(tmp_path, PYFUNC_DEBUG_LISTEN="127.0.0.1:0",
                                     PYFUNC_DEBUG_WAIT="1")
    client = _client(tmp_path, address, token, "--break", "inc")
    try:
        _read_until(client.stdout, "(pfd) ")       # the target is paused before 'inc'
        client.send_signal(signal.SIGKILL)
        out, err = target.communicate(timeout=30)
    finally:
        client.kill()
        target.kill()
    assert target.returncode == 0, err
    assert "result 42.0" in out


def test_target_killed_client_reports_it_and_exits_nonzero(tmp_path):
    target, address, token = _target(
        tmp_path, listen='tf.debug.listen("127.0.0.1:0", wait=True)')
    client = _client(tmp_path, address, token, "--break", "inc")
    try:
        _read_until(client.stdout, "(pfd) ")
        target.send_signal(signal.SIGKILL)
        _, err = client.communicate(timeout=30)
    finally:
        client.kill()
        target.kill()
    assert client.returncode == 1
    assert "lost the target" in err and "killed?" in err


def test_a_client_that_cannot_keep_up_is_told_how_many_events_it_missed(server, monkeypatch):
    import json
    import pyfunc_debug.remote.outbox as outbox
    monkeypatch.setattr(outbox, "QUEUE_LIMIT", 3)
    for i in range(10):                    # the executing thread never waits for the client
        server._on_event(ev.OpStart(i, 1, 0, 1, f"op{i}", "PyFunc"))

    class Sink:
        lines: list = []

        def send_raw(self, line):
            self.lines.append(json.loads(line))
    server._flush(Sink())
    rows = Sink.lines[0]["rows"]
    assert [r[5] for r in rows[:3]] == ["op0", "op1", "op2"]
    assert rows[3][0] == "Warning" and "7 events were not sent" in rows[3][8]


def test_importing_without_the_variable_starts_nothing(tmp_path):
    code = ("import sys, threading, pyfunc_debug; "
            "print(sorted(m for m in sys.modules if m.startswith('pyfunc_debug.remote')), "
            "threading.active_count())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(tmp_path), check=True).stdout
    assert out.strip() == "[] 1"


def test_wait_holds_a_frameworks_first_callback_too():
    """``run --tf --listen --wait``: TF's callbacks are runs of their own (no Session.run),
    and with no client yet nobody listens; the first callback must still wait for one."""
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun
    from pyfunc_debug.runtime.loop import hold_first_run

    run, op = CallbackRun("tensorflow"), ExternalOp("augment", "EagerPyFunc")
    attached, got = threading.Event(), []
    hold_first_run(attached)
    worker = threading.Thread(target=lambda: got.append(run.call(op, lambda v: v + 1, (1.0,))),
                              daemon=True)
    worker.start()
    worker.join(0.5)
    try:
        assert worker.is_alive() and got == []   # held: no client has attached
    finally:
        attached.set()
    worker.join(10)
    assert got == [2.0]
    assert run.call(op, lambda v: v + 1, (2.0,)) == 3.0   # later calls do not wait
    run.end()
