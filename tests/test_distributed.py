"""Ops placed on a Dask cluster (SPEC §8): results, placement, fusion, errors, events."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from pdb_prompts import PROMPT

distributed = pytest.importorskip("dask.distributed")

import pyfunc_debug as pfd  # noqa: E402
from pyfunc_debug.distributed.executor import RemoteTraceback  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def worker_pids(client):
    """Worker pids in ``task:K`` order (addresses sorted)."""
    pids = client.run(os.getpid)
    return [pids[a] for a in sorted(pids)]


def plus_one_and_pid(x):
    return (x + 1).astype(np.float64), np.int64(os.getpid())


def die(x):
    os._exit(3)


def failing(x):
    raise ValueError(f"bad value {x[0]}")


def _boom():
    """An op failing on worker 1: (x, y, feed, the error the same op raises locally)."""
    x = pfd.placeholder(pfd.float64, [1])
    with pfd.device("/job:worker/task:1"):
        y = pfd.numpy_function(failing, [x], pfd.float64, name="boom")
    feed = {x: np.array([7.0])}
    with pytest.raises(pfd.errors.OpError) as local:
        pfd.Session().run(y, feed)
    return x, y, feed, local


def _pipeline():
    x = pfd.placeholder(pfd.float64, [3], name="x")
    with pfd.device("/job:worker/task:0"):
        a, pid_a = pfd.numpy_function(plus_one_and_pid, [x], [pfd.float64, pfd.int64], name="a")
        b = pfd.multiply(a, 2.0, name="b")
    with pfd.device("/job:worker/task:1"):
        c, pid_c = pfd.numpy_function(plus_one_and_pid, [b], [pfd.float64, pfd.int64], name="c")
    d, pid_d = pfd.numpy_function(plus_one_and_pid, [c], [pfd.float64, pfd.int64], name="d")
    return x, [d, pid_a, pid_c, pid_d]


def test_results_equal_a_local_run_and_ops_run_where_placed(client, worker_pids):
    x, fetches = _pipeline()
    feed = {x: np.arange(3.0)}
    local = pfd.Session().run(fetches, feed)
    with pfd.Session(cluster=client) as sess:
        out = sess.run(fetches, feed)
    np.testing.assert_array_equal(out[0], local[0])
    assert [int(p) for p in out[1:]] == [worker_pids[0], worker_pids[1], os.getpid()]


def test_a_scheduler_address_works_too(client):
    x, fetches = _pipeline()
    with pfd.Session(cluster=client.scheduler.address) as sess:
        out = sess.run(fetches[0], {x: np.ones(3)})
    np.testing.assert_array_equal(out, ((np.ones(3) + 1) * 2 + 1) + 1)


def test_consecutive_ops_on_one_worker_run_as_one_task(client, worker_pids, monkeypatch):
    x = pfd.placeholder(pfd.float64, [3])
    with pfd.device("/job:worker/task:0"):
        y = x
        for _ in range(4):
            y, _pid = pfd.numpy_function(plus_one_and_pid, [y], [pfd.float64, pfd.int64])
    with pfd.device("/job:worker/task:3"):  # 3 % 2: the second worker
        z, pid_z = pfd.numpy_function(plus_one_and_pid, [y], [pfd.float64, pfd.int64])
    out = pfd.add(z, 1.0)
    submits = []
    real = client.submit
    monkeypatch.setattr(client, "submit", lambda *a, **k: submits.append(k["workers"]) or
                        real(*a, **k))
    with pfd.Session(cluster=client) as sess:
        value, pid = sess.run([out, pid_z], {x: np.zeros(3)})
    np.testing.assert_array_equal(value, np.full(3, 6.0))
    assert int(pid) == worker_pids[1]
    assert len(submits) == 2 and submits[0] != submits[1]


def test_a_worker_error_arrives_as_the_local_error(client):
    x, y, feed, local = _boom()
    with pfd.Session(cluster=client) as sess, pytest.raises(pfd.errors.OpError) as remote:
        sess.run(y, feed)
    assert type(remote.value) is type(local.value) is pfd.errors.InvalidArgumentError
    assert remote.value.message == local.value.message
    assert "node 'boom'" in remote.value.message and remote.value.op is y.op
    assert isinstance(remote.value.__cause__, RemoteTraceback)
    assert "ValueError: bad value 7.0" in remote.value.remote_traceback
    assert "in failing" in remote.value.remote_traceback


def test_worker_events_are_stamped_and_get_a_process_track_each(client, worker_pids, tmp_path):
    x, fetches = _pipeline()
    path = tmp_path / "run.json"
    with pfd.Session(cluster=client) as sess, pfd.trace(path) as tr:
        sess.run(fetches, {x: np.arange(3.0)})
    ends = {e.op: e for e in tr.events if type(e) is pfd.events.OpEnd}
    assert set(ends) >= {"a", "b", "c", "d"}
    where = {op: pfd.events.origin(e.thread) for op, e in ends.items()}
    assert where["a"].pid == where["b"].pid == worker_pids[0]
    assert where["c"].pid == worker_pids[1] and where["c"].address.startswith("tcp://")
    assert where["d"] is None
    starts = {e.op: e for e in tr.events if type(e) is pfd.events.OpStart}
    assert starts["c"].source.endswith(f"(on worker {where['c'].address} pid {worker_pids[1]})")
    assert ends["a"].outputs[0].shape == (3,)  # summaries travel with the events
    run_ids = {e.run_id for e in tr.events}
    assert len(run_ids) == 1
    chrome = json.loads(path.read_text())["traceEvents"]
    procs = {e["pid"]: e["args"] for e in chrome if e["name"] == "process_name"}
    assert sorted(a["os_pid"] for a in procs.values()) == sorted([os.getpid(), *worker_pids])
    slices = {e["name"]: e["pid"] for e in chrome if e["ph"] == "X" and e["cat"] == "op"}
    assert procs[slices["a"]]["os_pid"] == worker_pids[0]
    assert procs[slices["c"]]["os_pid"] == worker_pids[1]
    assert procs[slices["d"]]["os_pid"] == os.getpid()


def test_a_jsonl_trace_keeps_which_worker_ran_each_op(client, worker_pids, tmp_path):
    x, fetches = _pipeline()
    path = tmp_path / "run.jsonl"
    with pfd.Session(cluster=client) as sess, pfd.trace(path):
        sess.run(fetches, {x: np.arange(3.0)})
    code = ("import json, sys; from pyfunc_debug import events as ev; "
            "from pyfunc_debug.trace.jsonl import load_trace; "
            "ends = {e.op: ev.origin(e.thread) for e in load_trace(sys.argv[1]) "
            "if type(e) is ev.OpEnd}; "
            "print(json.dumps({op: o and o.pid for op, o in ends.items()}))")
    pids = json.loads(subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                                     capture_output=True, text=True).stdout)
    assert pids["a"] == pids["b"] == worker_pids[0] and pids["c"] == worker_pids[1]
    assert pids["d"] is None


def test_worker_events_carry_worker_and_pid_as_fields(client, worker_pids, tmp_path):
    """SPEC §3b: no text to parse; kept by a JSONL trace (even without its origins file)
    and picked up by the per-op rows."""
    import csv
    from pyfunc_debug.trace.export import export_trace
    from pyfunc_debug.trace.jsonl import origins_path
    x, fetches = _pipeline()
    path = tmp_path / "run.jsonl"
    with pfd.Session(cluster=client) as sess, pfd.trace(path) as tr:
        sess.run(fetches, {x: np.arange(3.0)})
    ends = {e.op: e for e in tr.events if type(e) is pfd.events.OpEnd}
    address = pfd.events.origin(ends["c"].thread).address
    assert (ends["c"].worker, ends["c"].pid) == (address, worker_pids[1])
    assert ends["a"].pid == worker_pids[0] and ends["a"].worker.startswith("tcp://")
    assert (ends["d"].worker, ends["d"].pid) == (None, None)   # ran here
    assert all(e.worker for e in tr.events
               if type(e) is pfd.events.OpStart and e.op in ("a", "b", "c"))
    os.remove(origins_path(path))   # the fields alone say where each op ran
    loaded = {e.op: e for e in pfd.load_trace(path) if type(e) is pfd.events.OpEnd}
    assert (loaded["c"].worker, loaded["c"].pid) == (address, worker_pids[1])
    assert loaded["d"].worker is None
    out, _ = export_trace(str(path), "csv", str(tmp_path / "rows.csv"))
    with open(out, newline="") as f:
        rows = {r["op"]: r for r in csv.DictReader(f)}
    assert (rows["c"]["worker"], int(rows["c"]["pid"])) == (address, worker_pids[1])
    assert rows["d"]["worker"] == "" and int(rows["d"]["pid"]) == os.getpid()


def test_a_breakpoint_on_a_placed_op_pauses_it_on_its_worker(client, worker_pids):
    from pyfunc_debug.debug import Debugger
    x, fetches = _pipeline()
    pauses = []

    def frontend(p):
        pauses.append((p.op_name, p.when, [np.array(v) for v in p.inputs]))
        return "continue"
    dbg = Debugger(on_pause=frontend)
    dbg.break_on(op="c")
    dbg.break_on(op="d")
    with dbg, pfd.Session(cluster=client) as sess, pfd.trace() as tr:
        out = sess.run(fetches, {x: np.arange(3.0)})
    local = pfd.Session().run(fetches[0], {x: np.arange(3.0)})
    np.testing.assert_array_equal(out[0], local)
    assert int(out[2]) == worker_pids[1]  # c still ran on its worker, after the pause
    assert [(op, when) for op, when, _ in pauses] == [("c", "before"), ("d", "before")]
    np.testing.assert_array_equal(pauses[0][2][0], (np.arange(3.0) + 1) * 2)
    hits = [e.op for e in tr.events if type(e) is pfd.events.BreakpointHit]
    assert hits == ["c", "d"]


def test_a_debugged_run_is_one_run_from_its_first_remote_pause_to_its_last_local_op(client):
    from pyfunc_debug.debug import Debugger
    x, fetches = _pipeline()
    seen = []
    dbg = Debugger(on_pause=lambda p: seen.append(("pause", p.op_name, p.run_id)) or "continue")
    dbg.break_on(op="a")                   # the run's first op, on a worker
    with dbg, pfd.Session(cluster=client) as sess, pfd.trace() as tr:
        sess.run(fetches, {x: np.arange(3.0)})
    starts = [e for e in tr.events if type(e) is pfd.events.RunStart]
    assert len(starts) == 1 and set(starts[0].ops) >= {"a", "b", "c", "d"}
    assert type(tr.events[0]) is pfd.events.RunStart       # before the remote pause
    assert [e for e in tr.events if type(e) is pfd.events.RunEnd][0] is tr.events[-1]
    assert seen == [("pause", "a", starts[0].run_id)]


def test_abort_at_a_remote_pause_cancels_the_run(client):
    from pyfunc_debug.debug import Debugger
    x, fetches = _pipeline()
    dbg = Debugger(on_pause=lambda p: "abort")
    dbg.break_on(op="b")
    with dbg, pfd.Session(cluster=client) as sess:
        with pytest.raises(pfd.errors.CancelledError, match="aborted from the debugger at op 'b'"):
            sess.run(fetches[0], {x: np.arange(3.0)})
        dbg.remove(dbg.breakpoints[0])
        assert sess.run(fetches[0], {x: np.zeros(3)}).shape == (3,)  # usable afterwards


class Typed(io.StringIO):
    """A terminal for pdb: ``lines`` typed one at a time (``KeyboardInterrupt`` raised
    where a line is ``None``), everything written kept."""

    def __init__(self, lines):
        super().__init__()
        self.lines = list(lines)

    def readline(self, size=-1):
        line = self.lines.pop(0) if self.lines else ""
        if line is None:
            raise KeyboardInterrupt
        return line


def _debugger(actions, typed, **breaks):
    from pyfunc_debug.debug import Debugger, PdbRunner
    pauses = []
    answers = iter(actions)

    def frontend(p):
        pauses.append(p)
        return next(answers)
    dbg = Debugger(on_pause=frontend, pdb_runner=PdbRunner(stdin=typed, stdout=typed))
    dbg.break_on(**breaks)
    return dbg, pauses


def test_s_at_a_remote_op_opens_pdb_in_the_worker_on_the_callers_terminal(client, worker_pids):
    x, fetches = _pipeline()
    typed = Typed(["p __import__('os').getpid()\n", None, "p x\n", "n\n", "c\n"])
    dbg, pauses = _debugger(["step_into"], typed, op="c")
    with dbg, pfd.Session(cluster=client) as sess:
        out = sess.run(fetches, {x: np.arange(3.0)})
    np.testing.assert_array_equal(out[0], pfd.Session().run(fetches[0], {x: np.arange(3.0)}))
    assert [(p.op_name, p.when) for p in pauses] == [("c", "before")]
    assert "step_into" in pauses[0].actions and pauses[0].producers() == ["b"]
    assert pauses[0].source.endswith(f"(on worker {sorted(client.run(os.getpid))[1]})")
    text = typed.getvalue()
    assert "plus_one_and_pid()" in text and "test_distributed.py" in text  # its file and line
    assert f"{PROMPT} {worker_pids[1]}\n" in text             # the worker placed on, not us
    assert "--KeyboardInterrupt--" in text                  # Ctrl+C at the prompt is pdb's
    assert "array([2., 4., 6.])" in text                   # its real input
    assert "--Return--" in text                             # n: its return
    assert int(out[2]) == worker_pids[1]


def test_q_in_a_remote_pdb_aborts_the_run_as_locally(client):
    from pyfunc_debug.debug.pdb_bridge import PdbQuit
    x, fetches = _pipeline()
    dbg, _ = _debugger(["step_into"], Typed(["q\n"]), op="a")
    with dbg, pfd.Session(cluster=client) as sess:
        with pytest.raises(PdbQuit, match=r"aborted from pdb \(quit\) in op 'a'") as e:
            sess.run(fetches[0], {x: np.arange(3.0)})
        assert e.value.pfd_aborted_at == "a"
        dbg.remove(dbg.breakpoints[0])
        assert sess.run(fetches[0], {x: np.zeros(3)}).shape == (3,)  # usable afterwards


def test_a_remote_error_pauses_and_post_mortem_opens_in_the_worker(client, worker_pids):
    x, y, feed, local = _boom()
    typed = Typed(["p __import__('os').getpid()\n", "p x\n", "q\n"])
    dbg, pauses = _debugger(["post_mortem"], typed, on_error=True)
    with dbg, pfd.Session(cluster=client) as sess:
        with pytest.raises(pfd.errors.InvalidArgumentError) as remote:
            sess.run(y, feed)
    assert remote.value.message == local.value.message  # q ends post-mortem; the error stays
    (pause,) = pauses
    assert (pause.op_name, pause.when, pause.error_type) == ("boom", "error",
                                                             "InvalidArgumentError")
    assert "post_mortem" in pause.actions and pause.error.message == local.value.message
    np.testing.assert_array_equal(pause.inputs[0], [7.0])
    text = typed.getvalue()
    assert "failing()" in text and 'raise ValueError(f"bad value' in text  # the raising line
    assert f"{PROMPT} {worker_pids[1]}\n" in text and "array([7.])" in text


def test_continue_at_a_remote_error_pause_raises_the_error(client):
    x = pfd.placeholder(pfd.float64, [1])
    with pfd.device("/job:worker/task:0"):
        a, _pid = pfd.numpy_function(plus_one_and_pid, [x], [pfd.float64, pfd.int64], name="a")
        y = pfd.numpy_function(failing, [a], pfd.float64, name="boom")
    dbg, pauses = _debugger(["continue"], Typed([]), on_error=True)
    with dbg, pfd.Session(cluster=client) as sess:
        with pytest.raises(pfd.errors.InvalidArgumentError, match="bad value 8.0"):
            sess.run(y, {x: np.array([7.0])})
    assert [(p.op_name, p.when) for p in pauses] == [("boom", "error")]
    np.testing.assert_array_equal(pauses[0].inputs[0], [8.0])


def _ask_unanswered(channel):
    from pyfunc_debug.distributed.pauses import Asker, Attend
    return Asker(Attend(channel, "token", (0,), False), "127.0.0.1").ask("before", 0, [])


def test_a_worker_waiting_for_a_caller_that_left_is_freed(client, worker_pids):
    # the caller answered (say, pdb's s) and then left (Ctrl+C): its task is cancelled
    address = sorted(client.run(os.getpid))[0]  # task:0, whose pid is worker_pids[0]
    channel = f"pfd-pause-test-{os.getpid()}"
    asked = distributed.Queue(channel + "-req", client=client)
    stuck = client.submit(_ask_unanswered, channel, workers=[address], pure=False)
    asked.get(timeout=30)  # the task waits for its answer now
    stuck.cancel()
    nxt = client.submit(os.getpid, workers=[address], pure=False)
    assert nxt.result(timeout=30) == worker_pids[0]  # one thread: the waiting one was freed
    asked.close()


def test_importing_and_a_plain_run_load_no_dask():
    code = ("import sys, pyfunc_debug as pfd\n"
            "with pfd.Graph().as_default() as g:\n    y = pfd.constant(1.0) + 1\n"
            "pfd.Session(graph=g).run(y)\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_worker_killed_mid_run_gives_a_clear_error_and_the_session_goes_on(client):
    # last in the module: the cluster's nanny replaces the killed worker
    x = pfd.placeholder(pfd.float64, [1])
    with pfd.device("/job:worker/task:0"):
        dead = pfd.numpy_function(die, [x], pfd.float64, name="dies")
    with pfd.device("/job:worker/task:1"):
        fine, _pid = pfd.numpy_function(plus_one_and_pid, [x], [pfd.float64, pfd.int64])
    seen = []
    with pfd.Session(cluster=client) as sess, pfd.events.subscribe(seen.append):
        with pytest.raises(pfd.errors.UnavailableError, match=r"Dask worker tcp://\S+ could "
                           r"not run ops \[dies\]"):
            sess.run(dead, {x: np.ones(1)})
        np.testing.assert_array_equal(sess.run(fine, {x: np.ones(1)}), [2.0])
    # the task's events died with the worker: the op's failure is still an event (the UI's
    # row, the trace), not only the exception
    failed = [e for e in seen if type(e) is pfd.events.OpError]
    assert [(e.op, e.error_type) for e in failed] == [("dies", "UnavailableError")]
    assert "could not run ops [dies]" in failed[0].message


def test_a_worker_dying_in_a_pdb_session_ends_it_with_a_clear_error(client):
    # after the other killing test: the nanny has replaced that worker (or is doing so)
    x, fetches = _pipeline()
    dbg, _ = _debugger(["step_into"], Typed(["!import os; os._exit(3)\n"]), op="c")
    with dbg, pfd.Session(cluster=client) as sess:
        with pytest.raises(pfd.errors.UnavailableError,
                           match=r"Dask worker \S+ could not run ops \[(a, b, )?c\]"):
            sess.run(fetches[0], {x: np.arange(3.0)})
