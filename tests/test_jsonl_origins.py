"""A ``.jsonl`` trace keeps which worker process each remote thread was
(``<path>.origins.json``): loaded elsewhere, a Chrome trace made from it has a
process track per worker."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.trace.jsonl import load_trace, origins_path


def _worker_events(thread):
    t = time.perf_counter_ns()
    return [ev.OpStart(ev.next_seq(), 7, t, thread, "feat", "PyFunc", None, "x.py:3", ()),
            ev.OpEnd(ev.next_seq(), 7, t + 10, thread, "feat", "PyFunc", None, 10)]


def test_a_loaded_trace_names_the_worker_of_each_remote_thread(tmp_path):
    path = tmp_path / "run.jsonl"
    a = ev.remote_thread("tcp://127.0.0.1:4001", 4242, 11, "Dask-Worker-A")
    b = ev.remote_thread("tcp://127.0.0.1:4002", 4343, 11, "Dask-Worker-B")
    with pfd.trace(path):
        for e in _worker_events(a) + _worker_events(b):
            ev.emit(e)
    assert json.loads(open(origins_path(path)).read())[str(a)][1] == 4242
    code = f"""
import json
from pyfunc_debug import events as ev
from pyfunc_debug.trace.jsonl import load_trace
from pyfunc_debug.trace.chrome import to_chrome
events = load_trace({str(path)!r})
print(json.dumps(sorted({{ev.origin(e.thread).pid for e in events}})))
procs = {{m["args"].get("os_pid") for m in to_chrome(events)["traceEvents"] if m.get("name") == "process_name"}}
print(json.dumps([p for p in procs if p is not None]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert json.loads(out[0]) == [4242, 4343]
    assert {4242, 4343} <= set(json.loads(out[1]))   # a process track per worker


def test_a_damaged_origins_file_is_named_and_the_trace_still_loads(tmp_path):
    path = tmp_path / "run.jsonl"
    a = ev.remote_thread("tcp://127.0.0.1:4003", 4444, 12, "Dask-Worker-C")
    with pfd.trace(path):
        for e in _worker_events(a):
            ev.emit(e)
    with open(origins_path(path), "w") as f:
        f.write('{"-1": ["tcp://x", "not a pid", "w"]}')
    with pytest.warns(RuntimeWarning, match=r"run\.jsonl\.origins\.json: worker origins not"):
        events = load_trace(path)
    assert [type(e).__name__ for e in events] == ["OpStart", "OpEnd"]


def test_a_trace_with_no_remote_threads_writes_no_origins_file(tmp_path):
    path = tmp_path / "local.jsonl"
    g = pfd.Graph()
    with g.as_default():
        y = pfd.numpy_function(lambda: 1.0, [], pfd.float64)
    ev.remote_thread("tcp://127.0.0.1:4009", 4999, 13, "elsewhere")  # seen, not in this trace
    with pfd.trace(path), pfd.Session(graph=g) as sess:
        sess.run(y)
    assert not (tmp_path / "local.jsonl.origins.json").exists()
