"""Stepping into pdb gives back the tracer installed before it (a coverage tool keeps
counting): ``sys.settrace`` and ``threading.settrace`` (SPEC §5a)."""
from __future__ import annotations

import io
import sys
import threading

import numpy as np

import pyfunc_debug as pfd
from pyfunc_debug.debug import Debugger, PdbRunner


def _tracer(frame, event, arg):
    return _tracer


def _with_tracer(body):
    saved, saved_threads = sys.gettrace(), threading.gettrace()
    sys.settrace(_tracer)
    threading.settrace(_tracer)
    try:
        body()
        return sys.gettrace(), threading.gettrace()
    finally:
        sys.settrace(saved)
        threading.settrace(saved_threads)


def test_step_into_gives_back_the_tracers_installed_before(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    runner = PdbRunner(stdin=io.StringIO("n\nc\n"), stdout=io.StringIO())
    got = []
    after = _with_tracer(lambda: got.append(runner.step_into(lambda x: x + 1, (41,))))
    assert got == [42]
    assert after == (_tracer, _tracer)


def test_breakpoint_in_a_wrapped_function_gives_back_the_tracer(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PYTHONBREAKPOINT", raising=False)
    out = io.StringIO()

    def f(x):
        breakpoint()
        return x * 2

    x = pfd.compat.v1.placeholder(pfd.float32)
    y = pfd.numpy_function(f, [x], pfd.float32)
    dbg = Debugger(on_pause=lambda p: "continue",
                   pdb_runner=PdbRunner(stdin=io.StringIO("c\n"), stdout=out))
    results = []

    def run():
        with dbg, pfd.Session() as sess:
            results.append(sess.run(y, {x: np.float32(2)}))
    after = _with_tracer(run)
    assert results == [np.float32(4)]
    assert "f()\n-> return x * 2" in out.getvalue()   # pdb really stopped in f, on every Python
    assert after[0] is _tracer
