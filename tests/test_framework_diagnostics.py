"""Diagnostics for real TensorFlow programs (SPEC §4a, §10a; issue 23): a ``tf.data``
pipeline whose ``py_function`` makes NaN on one sample gets the ``non_finite`` warning
for that call, naming its sample, in the trace (``trace --tf`` then ``load_trace``), in
``view``, at the console (``run --tf --console``) and in the UI; a callback whose output
shape drifts gets ``shape_change``; one writing into its input ``input_modified``, and a
pause after it shows the input as given and as left. Skipped without TensorFlow."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

import pyfunc_debug as pfd  # noqa: E402
from pyfunc_debug import events as ev  # noqa: E402
from pyfunc_debug.debug import Debugger  # noqa: E402

from test_tensorflow_adapter import events, inst  # noqa: E402,F401  (fixtures)

# one bad sample in 300, in a parallel map (TF's threads, calls out of order)
NAN_SCRIPT = """
    import numpy as np
    import tensorflow as tf

    def augment(i):
        x = np.full(16, float(i), np.float32)
        if int(i) == 137:
            x[3] = np.nan
        return x

    ds = tf.data.Dataset.range(300).map(
        lambda i: tf.py_function(augment, [i], tf.float32, name="augment"),  # MAP
        num_parallel_calls=tf.data.AUTOTUNE)
    print("loss =", sum(float(tf.reduce_sum(x)) for x in ds))
"""
CALL = "in 0 = 137 (int64)"   # how the warning names the call: its sample index


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "nan_map.py"
    path.write_text(textwrap.dedent(NAN_SCRIPT))
    return path


def _map_line(path) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if "# MAP" in line)


def _cli(args, tmp_path, stdin=""):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", HOME=str(tmp_path), COLUMNS="120")
    return subprocess.run([sys.executable, "-m", "pyfunc_debug", *args], input=stdin,
                          capture_output=True, text=True, env=env, cwd=str(tmp_path),
                          timeout=300)


def _warnings(seen, kind=None) -> list:
    return [e for e in seen if type(e) is ev.Warning and (kind is None or e.kind == kind)]


def _augment_map():
    def augment(i):
        x = np.full(16, float(i), np.float32)
        if int(i) == 137:
            x[3] = np.nan
        return x
    return tf.data.Dataset.range(300).map(
        lambda i: tf.py_function(augment, [i], tf.float32, name="augment"),
        num_parallel_calls=tf.data.AUTOTUNE)


# -- the NaN pipeline: trace, view, console, UI -----------------------------------------------

def test_trace_tf_records_non_finite_at_the_call_that_made_nan_and_view_shows_it(
        script, tmp_path):
    out = tmp_path / "run.jsonl"
    result = _cli(["trace", "--tf", "-o", str(out), str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "loss = nan" in result.stdout
    trace = pfd.load_trace(str(out))
    found = _warnings(trace)
    assert [(w.kind, w.op, w.op_type) for w in found] == [("non_finite", "augment",
                                                           "EagerPyFunc")]
    w = found[0]
    assert CALL in w.message and "made 1 NaN in output 0 from finite inputs" in w.message
    assert w.source == f"{script}:{_map_line(script)}" and w.hint
    # it follows that very call's end, on that call's thread
    ends = [e for e in trace if type(e) is ev.OpEnd and e.op == "augment"]
    assert len(ends) == 300
    bad = next(e for e in ends if e.outputs[0].nan)
    assert bad.inputs[0].preview == "137" and bad.thread == w.thread and bad.seq < w.seq
    assert w.run_id == bad.run_id
    _view_shows(str(out), trace, w.message)


def _view_shows(path, trace, message) -> None:
    """``pyfunc-debug view``'s app on the trace: the op selected, the warning on top."""
    import asyncio
    from textual.widgets import Static
    from pyfunc_debug.tui.replay import ReplayApp
    from pyfunc_debug.tui.widgets.op_list import OpList

    async def check():
        app = ReplayApp(path, trace=trace, show_timings=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.2)
            assert app.query_one(OpList).selected == "augment"
            header = str(app.query_one("#insp-header", Static).render())
            assert message in header.replace("\n", " ") or CALL in header, header
            assert [w.kind for w in app.model.rows["augment"].warnings] == ["non_finite"]
    asyncio.run(check())


def test_console_prints_and_pauses_at_the_call_that_made_nan(script, tmp_path):
    result = _cli(["run", "--tf", "--console", "--break-on", "warning", str(script)], tmp_path,
                  stdin="c\n")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "paused after op 'augment' (EagerPyFunc)" in out, out
    assert f"made 1 NaN in output 0 from finite inputs, in its call with {CALL}" in out
    assert "min=137 max=137" in out                          # the pause shows that call
    assert out.count("(pfd)") == 1 and "loss = nan" in out   # no other call paused
    # the diagnostic printer (what a run without --break-on also prints)
    assert "pyfunc-debug: warning: op 'augment' (EagerPyFunc) made 1 NaN" in result.stderr
    assert CALL in result.stderr and "fix: " in result.stderr


@pytest.mark.asyncio
async def test_the_ui_marks_the_call_that_made_nan_with_zero_keys(inst):
    from test_tui_pilot import _app, _finished, _running, _status, _text
    from pyfunc_debug.tui.widgets.op_list import OpList

    def target():
        return sum(float(tf.reduce_sum(x)) for x in _augment_map())

    app, _ = _app(target)       # no flags, no breakpoints: as `pyfunc-debug run --tf`
    async with _running(app) as pilot:
        await _finished(pilot)
        row = app.model.rows["augment"]
        assert row.calls == 300
        assert [w.kind for w in row.warnings] == ["non_finite"]
        assert CALL in row.warnings[0].message
        assert app.query_one(OpList).selected == "augment"
        header = _text(app, "#insp-header")
        assert "made 1 NaN in output 0 from finite inputs" in header and CALL in header
        assert "⚠ 1 warning" in _status(app)


# -- shape_change and input_modified ----------------------------------------------------------

def test_shape_change_when_one_call_returns_another_shape(inst, events):
    def crop(i):
        return np.zeros(2 if int(i) == 5 else 3, np.float32)     # sample 5: one short
    ds = tf.data.Dataset.range(40).map(
        lambda i: tf.numpy_function(crop, [i], tf.float32, name="crop"), num_parallel_calls=4)
    assert sum(1 for _ in ds) == 40
    found = _warnings(events, "shape_change")
    assert len(found) == 1, [w.message for w in found]
    w = found[0]
    assert (w.op, w.op_type) == ("crop", "PyFunc")
    assert "returned shape (2,) in its call with in 0 = 5 (int64)" in w.message
    assert "earlier calls on inputs of the same shapes returned (3,)" in w.message
    assert _warnings(events) == found     # no other kind, no second warning on the way back
    for i in range(4):                    # eager calls from one line are calls of one op
        tf.numpy_function(crop, [tf.constant(i + 3, tf.int64)], tf.float32, name="crop_now")
    found = _warnings(events, "shape_change")[1:]
    assert [(w.op, w.message.split(" in its call")[0]) for w in found] == [
        ("crop_now", "op 'crop_now' (PyFunc) returned shape (2,)")]


def test_shape_change_for_the_same_values_in_another_rank_not_for_a_new_input(inst, events):
    @tf.function(reduce_retracing=False)
    def g(x):
        return tf.numpy_function(lambda v: v * 2, [x], tf.float32, name="double")

    for n in (3, 5, 3):    # traced again per shape: a new input shape, a new output shape
        g(tf.ones(n))

    @tf.function
    def f(x):
        return tf.numpy_function(np.ravel, [x], tf.float32, name="flatten")

    f(tf.ones((4, 1)))
    found = _warnings(events)
    assert [(w.kind, w.op) for w in found] == [("shape_change", "flatten")]
    assert "returned shape (4,) for input shape (4, 1)" in found[0].message


def clip(x):
    x[x > 1] = 1          # in place: TF handed over its tensor's memory
    return x.sum()


def test_input_modified_and_a_pause_after_shows_the_input_as_given_and_as_left(inst, events):
    @tf.function
    def f(x):
        return tf.numpy_function(clip, [x * 1], tf.float32, name="clip")

    pauses = []

    def on_pause(p):
        pauses.append((p.op_name, p.when, [np.array(v) for v in p.inputs],
                       p.inputs_after and [np.array(v) for v in p.inputs_after],
                       [w.kind for w in p.warnings]))
        return "continue"

    dbg = Debugger(on_pause=on_pause)
    dbg.break_on(on_warning=True)
    with dbg:
        assert float(f(tf.constant([0.5, 3.0, 7.0]))) == 2.5
    found = _warnings(events, "input_modified")
    assert len(found) == 1
    w = found[0]
    assert (w.op, w.op_type) == ("clip", "PyFunc")
    assert "wrote into its input 0 in place, in its call with in 0 = [0.5, 3, 7]" in w.message
    assert w.inputs[0].max == 1.0                           # as left
    end = next(e for e in events if type(e) is ev.OpEnd and e.op == "clip")
    assert end.inputs[0].max == 7.0                         # as given
    assert len(pauses) == 1
    name, when, given, left, kinds = pauses[0]
    assert (name, when, kinds) == ("clip", "after", ["input_modified"])
    np.testing.assert_array_equal(given[0], [0.5, 3.0, 7.0])
    np.testing.assert_array_equal(left[0], [0.5, 1.0, 1.0])


def test_each_kind_is_reported_for_at_most_ten_calls_of_an_op(inst, events):
    def broken(i):
        return np.full(2, np.inf, np.float32)
    ds = tf.data.Dataset.range(30).map(
        lambda i: tf.numpy_function(broken, [i], tf.float32, name="broken"))
    assert sum(1 for _ in ds) == 30
    found = _warnings(events, "non_finite")
    assert len(found) == 10 and "later ones are not reported" in found[-1].message
    assert sorted(w.message.split("in 0 = ")[1].split(" ")[0] for w in found) == \
        sorted(str(i) for i in range(10))


@pytest.mark.parametrize("os_name", [None, b"tf_Compute"])
def test_a_frameworks_own_thread_is_named_for_it(os_name):
    """A framework's threads are not Python's (``threading`` calls them ``Dummy-N``): a
    trace's track names the framework, and the thread's own name where it was given one."""
    import _thread
    import ctypes
    import re
    import sys
    import threading

    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun

    if os_name is not None and not sys.platform.startswith("linux"):
        pytest.skip("thread names from the operating system: Linux")
    run, op = CallbackRun("tensorflow"), ExternalOp("f", "PyFunc")
    done = threading.Event()

    def framework_thread():
        try:
            if os_name is not None:   # as TensorFlow names its compute threads
                ctypes.CDLL(None).prctl(15, ctypes.c_char_p(os_name), 0, 0, 0)   # PR_SET_NAME
            ev.thread_names.pop(threading.get_ident(), None)   # an ended thread's ident, reused
            run.call(op, lambda v: v + 1, (np.ones(3, np.float32),))
        finally:
            done.set()

    with pfd.trace() as tr:
        _thread.start_new_thread(framework_thread, ())
        assert done.wait(10)
        run.end()
    names = set(tr.thread_names.values())
    if os_name is None:
        assert any(re.fullmatch(r"tensorflow thread \d+", n) for n in names), names
    else:
        assert "tensorflow tf_Compute" in names, names
