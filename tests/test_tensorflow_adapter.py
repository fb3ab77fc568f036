"""pyfunc_debug.tensorflow on real TensorFlow (SPEC §10): events and names in every context,
breakpoints and pauses on TF's threads, step-into and post-mortem, a sticky abort,
gradients unchanged. Skipped without the tensorflow extra."""
from __future__ import annotations

import io
import os
import re
import sys
import threading
import time
import warnings

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

import pyfunc_debug as pfd  # noqa: E402
from pyfunc_debug import events as ev  # noqa: E402
from pyfunc_debug import tensorflow as pt  # noqa: E402
from pyfunc_debug.debug import Debugger, PdbRunner  # noqa: E402
from pyfunc_debug.script import abort_line  # noqa: E402
from programs import odd_values  # noqa: E402

HERE = os.path.abspath(__file__)


def scale(x):
    return (x * 2).astype(np.float32)


def twice(x):
    return x * 2


@pytest.fixture
def inst():
    """A fresh instrumentation (and run) per test; earlier tests' callbacks may exist."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        i = pt.instrument()
    yield i
    i.close()


@pytest.fixture
def events():
    seen = []
    with ev.subscribe(seen.append, capture="summary"):
        yield seen


def _ops(seen, cls=ev.OpEnd):
    return [e for e in seen if type(e) is cls]


def _line(text: str) -> int:
    """The line of this file holding ``text`` (a source the events must name)."""
    with open(HERE) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def _map_dataset(n=8, name="scale_np"):
    def load(i):
        return tf.numpy_function(scale, [tf.cast(i, tf.float32)], tf.float32, name=name)  # MAP
    return tf.data.Dataset.range(n).map(load, num_parallel_calls=4)


def test_eager_calls_named_with_user_line(inst, events):
    tf.py_function(twice, [tf.constant(1.0)], tf.float32, name="twice_py")  # EAGER-PY
    tf.numpy_function(scale, [tf.constant(2.0)], tf.float32, name="scale_np")  # EAGER-NP
    ends = _ops(events)
    assert [(e.op, e.op_type) for e in ends] == [("twice_py", "EagerPyFunc"), ("scale_np", "PyFunc")]
    starts = _ops(events, ev.OpStart)
    assert starts[0].source == f"{HERE}:{_line('# EAGER-PY')}"
    assert starts[1].source == f"{HERE}:{_line('# EAGER-NP')}"
    assert ends[1].outputs[0].max == 4.0 and ends[1].inputs[0].max == 2.0


def test_tf_function_names_scopes_and_one_run(inst, events):
    @tf.function
    def f(x):
        with tf.name_scope("features"):
            y = tf.numpy_function(scale, [x], tf.float32, name="scale_np")  # IN-FUNCTION
        return tf.py_function(twice, [y], tf.float32, name="scale_py")

    assert float(f(tf.constant(3.0))) == 12.0
    starts = _ops(events, ev.OpStart)
    assert [(e.op, e.op_type) for e in starts] == [("features/scale_np", "PyFunc"),
                                                   ("scale_py", "EagerPyFunc")]
    assert starts[0].source == f"{HERE}:{_line('# IN-FUNCTION')}"
    runs = [e for e in events if type(e) is ev.RunStart]
    assert len(runs) == 1 and runs[0].kind == "tensorflow"
    assert {e.run_id for e in starts} == {runs[0].run_id}


def test_parallel_map_and_v1_session(inst, events):
    assert sorted(float(v) for v in _map_dataset()) == [2.0 * i for i in range(8)]
    ends = _ops(events)
    assert len(ends) == 8 and {e.op for e in ends} == {"scale_np"}
    assert _ops(events, ev.OpStart)[0].source == f"{HERE}:{_line('# MAP')}"
    assert threading.get_ident() not in {e.thread for e in ends}   # TF's own threads
    g = tf.Graph()
    with g.as_default():
        y = tf.compat.v1.py_func(scale, [tf.constant(5.0)], tf.float32, name="v1op")
        with tf.compat.v1.Session() as sess:
            assert sess.run(y) == 10.0
    assert _ops(events)[-1].op == "v1op"


def test_framework_callbacks_hidden_unless_asked(inst, events):
    ds = tf.data.Dataset.from_generator(lambda: iter([1, 2]),
                                        output_signature=tf.TensorSpec((), tf.int32))
    assert [int(v) for v in ds] == [1, 2]
    assert _ops(events) == []
    inst.internal = True
    ds = tf.data.Dataset.from_generator(lambda: iter([1, 2]),
                                        output_signature=tf.TensorSpec((), tf.int32))
    assert [int(v) for v in ds] == [1, 2]
    assert _ops(events)


def test_gradients_through_instrumented_py_function(inst, events):
    x = tf.Variable([1.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.py_function(lambda v: v * v, [x], tf.float32, name="square")
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 6.0])

    @tf.function
    def g(v):
        with tf.GradientTape() as t:
            t.watch(v)
            out = tf.reduce_sum(tf.py_function(lambda a: a * a * a, [v], tf.float32,
                                               name="cube"))
        return t.gradient(out, v)
    np.testing.assert_allclose(g(tf.constant([1.0, 2.0])).numpy(), [3.0, 12.0])
    assert {e.op for e in _ops(events)} == {"square", "cube"}   # gradient functions hidden


def test_breakpoint_pauses_one_parallel_call_while_others_wait(inst, events):
    pauses, overlapping, active = [], [], [0]

    def frontend(pause):
        active[0] += 1
        overlapping.append(active[0])
        started = len(_ops(events, ev.OpStart))
        if not pauses:
            time.sleep(0.2)   # a chance for the other calls to run, if they could
        pauses.append((float(pause.inputs[0]), started, len(_ops(events, ev.OpStart))))
        active[0] -= 1
        return "continue"

    dbg = Debugger(on_pause=frontend)
    dbg.break_on(op="scale_*")
    with dbg:
        out = sorted(float(v) for v in _map_dataset())
    assert out == [2.0 * i for i in range(8)]
    assert len(pauses) == 8 and max(overlapping) == 1
    assert pauses[0][1] == pauses[0][2] == 0    # nobody ran while the first call was paused
    assert sorted(p[0] for p in pauses) == list(range(8))


def test_abort_is_sticky_and_reaches_the_caller(inst, events):
    pauses = []

    def frontend(pause):
        pauses.append(pause.op_name)
        return "abort"

    dbg = Debugger(on_pause=frontend)
    dbg.break_on(op="scale_np")
    with dbg, pytest.raises(tf.errors.OpError) as info:
        list(_map_dataset(32))
    assert pauses == ["scale_np"]                 # queued calls aborted without pausing
    assert _ops(events) == []
    assert "run aborted from the debugger at op 'scale_np'" in str(info.value)
    assert abort_line(info.value) == "run aborted at op 'scale_np'"
    assert inst.run.aborted == "scale_np"


def test_next_op_is_kept_across_tf_threads(inst, events):
    @tf.function
    def f(x):
        y = tf.numpy_function(scale, [x], tf.float32, name="first_np")
        return tf.py_function(twice, [y], tf.float32, name="second_py")

    seen = []

    def frontend(pause):
        seen.append((pause.op_name, pause.breakpoint is None))
        return "step" if len(seen) == 1 else "continue"

    dbg = Debugger(on_pause=frontend)
    dbg.break_on(op="first_np")
    with dbg:
        assert float(f(tf.constant(1.0))) == 4.0
    assert seen == [("first_np", False), ("second_py", True)]


def test_step_into_stops_at_the_users_first_line_with_real_arguments(inst, events):
    out = io.StringIO()
    runner = PdbRunner(stdin=io.StringIO("p x\nc\n"), stdout=out)
    dbg = Debugger(on_pause=lambda p: "step_into", pdb_runner=runner)
    dbg.break_on(op="scale_np")
    with dbg:
        assert [float(v) for v in _map_dataset(1)] == [0.0]
    text = out.getvalue()
    assert f"{os.path.basename(HERE)}" in text and "return (x * 2).astype(np.float32)" in text
    assert "np.float32(0.0)" in text or "0.0" in text


def test_error_pauses_and_post_mortem_at_the_raising_line(inst, events):
    def bad(x):
        table = {1: 2}
        return np.float32(table[int(x)])  # RAISES

    out = io.StringIO()
    runner = PdbRunner(stdin=io.StringIO("p table\nc\n"), stdout=out)
    whens = []

    def frontend(pause):
        whens.append(pause.when)
        return "post_mortem"

    dbg = Debugger(on_pause=frontend, pdb_runner=runner)
    dbg.break_on(on_error=True)

    @tf.function
    def f(x):
        return tf.numpy_function(bad, [x], tf.float32, name="lookup")

    with dbg, pytest.raises(tf.errors.OpError):
        f(tf.constant(5.0))
    assert whens == ["error"]
    assert "{1: 2}" in out.getvalue() and "table[int(x)]" in out.getvalue()
    errors = _ops(events, ev.OpError)
    assert errors[0].op == "lookup" and errors[0].error_type == "KeyError"


def test_nan_producer_pauses_after_the_op(inst, events):
    def log(x):
        with np.errstate(invalid="ignore"):
            return np.log(x - 1).astype(np.float32)

    hits = []
    dbg = Debugger(on_pause=lambda p: hits.append((p.op_name, p.when)) or "continue")
    dbg.break_on(when="nan_producer")
    with dbg:
        tf.numpy_function(log, [tf.constant([0.5, 2.0])], tf.float32, name="log_np")
    assert hits == [("log_np", "after")]


def test_instrument_after_building_says_so():
    pt.uninstrument()

    @tf.function
    def f(x):
        return tf.numpy_function(scale, [x], tf.float32, name="early")
    f.get_concrete_function(tf.TensorSpec([], tf.float32))
    with pytest.warns(RuntimeWarning, match="after .* built"):
        inst = pt.instrument()
    inst.close()


def test_a_jsonl_trace_replays_in_the_views_model(inst, tmp_path):
    import pyfunc_debug as pfd
    from pyfunc_debug.tui.model import RunModel
    path = tmp_path / "map.jsonl"
    with pfd.trace(path=str(path)):
        list(_map_dataset(4))
        inst.close()                       # the run ends (RunEnd) when instrumenting ends
    model = RunModel()
    for e in pfd.load_trace(str(path)):
        model.apply(e)
    assert model.runs == 1 and model.state == "finished" and list(model.rows) == ["scale_np"]
    assert model.rows["scale_np"].status == "done"
    assert model.rows["scale_np"].source == f"{HERE}:{_line('# MAP')}"


def _raised(build):
    try:
        build()
    except Exception as exc:  # noqa: BLE001 - the outcome is what we compare
        return type(exc), str(exc)
    return None


NOT_CALLABLE = {
    "py_function eager": lambda: tf.py_function("x", [tf.constant(1.0)], tf.float32),
    "numpy_function eager": lambda: tf.numpy_function("x", [tf.constant(1.0)], tf.float32),
    "tf.function": lambda: tf.function(
        lambda: tf.numpy_function("x", [tf.constant(1.0)], tf.float32))(),
}


def _in_graph(build):
    def inside():
        with tf.Graph().as_default():
            return build()
    return inside


@pytest.mark.parametrize("where", [*NOT_CALLABLE, "v1 graph"])
def test_a_non_callable_func_meets_tensorflows_own_check(where, events):
    """TF's own error, at the same moment (at build in a graph), as without instrument()."""
    build = NOT_CALLABLE.get(where) or _in_graph(
        lambda: tf.compat.v1.py_func("x", [tf.constant(1.0)], tf.float32))
    plain = _raised(build)
    assert plain is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pt.instrument():
            assert _raised(build) == plain
    if where != "numpy_function eager":     # eager numpy_function calls it: Python's TypeError
        assert plain[0] is ValueError and "Expected func to be callable" in plain[1]
    assert _ops(events, ev.OpStart) == []


ODD_VALUES = {**odd_values(),   # plus what TF holds beyond JAX's 32-bit default
              "complex128": np.array([1e308 + 1e308j, -1e308 - 1e308j]),
              "uint64 extremes": np.array([0, 2**64 - 1], np.uint64),
              "strings": np.array([b"a", b"bc"])}


@pytest.mark.parametrize("name", list(ODD_VALUES))
def test_no_warning_of_ours_reaches_the_program(name, events):
    """Recorded, paused and continued with warnings as errors, eagerly and in a
    tf.function: the callbacks return their values and the program sees no warning."""
    value = ODD_VALUES[name]
    dtype = tf.as_dtype(value.dtype)
    dbg = Debugger(on_pause=lambda pause: "continue")
    dbg.break_on(op="*")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # earlier tests' built callbacks
        inst = pt.instrument()
    try:
        in_function = tf.function(lambda v: tf.numpy_function(identity, [v], dtype))
        with dbg, warnings.catch_warnings():
            warnings.simplefilter("error")
            eager = tf.numpy_function(identity, [tf.constant(value)], dtype)
            traced = in_function(tf.constant(value))
    finally:
        inst.close()
    np.testing.assert_array_equal(eager.numpy(), value)
    np.testing.assert_array_equal(traced.numpy(), value)
    assert [e.op_type for e in _ops(events)] == ["PyFunc", "PyFunc"]


def identity(x):
    return x


@pytest.mark.parametrize("recorded", [False, True])
def test_a_failing_callbacks_traceback_shows_no_frame_of_ours(inst, recorded, tmp_path):
    """TensorFlow prints the callback's traceback in its error: between TF's frames and the
    user's none of ours, as without us (on 3.10 our entry point's, whose bare re-raise
    adds its frame back there)."""
    def bad(x):
        raise KeyError("missing")   # the user's frame

    @tf.function
    def f(x):
        return tf.numpy_function(bad, [x], tf.float32, name="lookup")

    with (pfd_trace(tmp_path / "t.jsonl") if recorded else _nothing()), \
            pytest.raises(tf.errors.OpError) as caught:
        f(tf.constant(5.0))
    text = str(caught.value).split("Traceback (most recent call last):", 1)[1]
    assert 'raise KeyError("missing")' in text and "KeyError: 'missing'" in text
    assert "external_calls.py" not in text and "debug/external.py" not in text
    assert text.count("pyfunc_debug") == (sys.version_info < (3, 11))


def pfd_trace(path):
    import pyfunc_debug as pfd
    return pfd.trace(path)


def _nothing():
    import contextlib
    return contextlib.nullcontext()


@pytest.mark.parametrize("capture", ["summary", "deferred"])
def test_a_py_function_result_is_recorded_as_the_op_emits_it(inst, tmp_path, capture):
    """TF converts what a py_function returns to its Tout (a Python int, an int64 array to
    int32): the trace said int64 where TF's own element_spec said int32. A float for an
    int Tout cannot be converted: TF fails the op, and so does the record."""
    got = []
    rec = pfd.trace(tmp_path / "t.jsonl") if capture == "deferred" else \
        ev.subscribe(got.append, capture="summary")
    with rec:
        ds = tf.data.Dataset.range(2).map(lambda i: (
            tf.py_function(lambda v: 3, [i], tf.int32, name="words"),
            tf.py_function(lambda v: np.array([1, 2], np.int64), [i], tf.int32, name="arr")))
        for _ in ds:
            pass
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.py_function(lambda v: 2.5, [tf.constant(1)], tf.int32, name="half")
    events = pfd.load_trace(tmp_path / "t.jsonl") if capture == "deferred" else got
    outs = {e.op: e.outputs[0] for e in events if type(e).__name__ == "OpEnd"}
    assert (outs["words"].dtype, outs["words"].min) == ("int32", 3.0)
    assert (outs["arr"].dtype, outs["arr"].shape) == ("int32", (2,))
    assert "half" not in outs
    [error] = [e for e in events if type(e).__name__ == "OpError"]
    assert error.op == "half" and "2.5" in error.message


def words(x):
    return "not a number"   # for Tout float32: TF's conversion fails once it returned


@pytest.mark.parametrize("where", ["tf.function", "eager"])
def test_a_py_function_result_tf_cannot_convert_is_the_ops_error(where, tmp_path):
    """TF converts a py_function's result to its Tout after the function returned, and
    fails the op when it cannot: the record fails too (it said the op ended well), and
    the program gets TF's very error, as without instrument()."""
    def op(x):
        return tf.py_function(words, [x], tf.float32, name="words")
    run = (lambda: tf.function(op)(tf.constant(1.0))) if where == "tf.function" else \
        (lambda: op(tf.constant(1.0)))
    plain = _raised(run)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # earlier tests' built callbacks
        inst = pt.instrument()
    try:
        with ev.subscribe(seen.append, capture="summary"):
            ours = _raised(run)
    finally:
        inst.close()
    numbered = re.compile(r"\d+")
    assert ours[0] is plain[0]
    assert numbered.sub("N", ours[1]) == numbered.sub("N", plain[1])
    [error] = [e for e in seen if type(e).__name__ == "OpError"]
    assert error.error_type == "TypeError" and "Cannot convert 'not a number'" in error.message
    assert not [e for e in seen if type(e).__name__ == "OpEnd"]


def widen(x):
    return x.astype(np.float64)   # for Tout float32: TF refuses it once widen returned


def _widened(where):
    def np_op(x):
        return tf.numpy_function(widen, [x], tf.float32, name="widen")
    if where == "tf.function":
        return tf.function(np_op)(tf.constant([1.0, 2.0]))
    return list(tf.data.Dataset.from_tensor_slices([[1.0, 2.0]]).map(np_op))


@pytest.mark.parametrize("capture", ["summary", "fault"])
@pytest.mark.parametrize("where", ["tf.function", "tf.data"])
def test_a_result_of_the_wrong_dtype_is_the_ops_error_and_tfs_own_for_the_program(
        where, capture, tmp_path):
    """TF fails a graph numpy_function that returned float64 for Tout float32 after the
    function returned: that is the op's error (TF's text, its inputs kept for replay),
    and the program gets TF's very error, as without instrument()."""
    plain = _raised(lambda: _widened(where))
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # earlier tests' built callbacks
        inst = pt.instrument()
    try:
        with (pfd.trace(tmp_path / "t.jsonl", capture="fault") if capture == "fault" else
              ev.subscribe(seen.append, capture="summary")):
            ours = _raised(lambda: _widened(where))
    finally:
        inst.close()
    numbered = re.compile(r"\d+")   # TF's counters (tokens, function ids) go on between runs
    assert ours[0] is plain[0] is tf.errors.InvalidArgumentError
    assert numbered.sub("N", ours[1]) == numbered.sub("N", plain[1])
    events = pfd.load_trace(tmp_path / "t.jsonl") if capture == "fault" else seen
    [error] = [e for e in events if type(e).__name__ == "OpError"]
    assert (error.op, error.error_type) == ("widen", "InvalidArgumentError")
    text = error.message.split("InvalidArgumentError: ", 1)[1]
    assert re.fullmatch(r"0-th value returned by pyfunc_\d+ is double, but expects float", text)
    assert text in ours[1]   # the very text TF gives the program
    assert not [e for e in events if type(e).__name__ == "OpEnd"]
    if capture == "fault":
        from pyfunc_debug.trace.faults import load_faults
        functions, calls = load_faults(tmp_path / "t.jsonl")
        assert functions["widen"]["Tout"] == ["float32"]
        assert [c["error_type"] for c in calls] == ["InvalidArgumentError"]
        np.testing.assert_array_equal(calls[0].inputs[0], [1.0, 2.0])


def test_under_the_trace_command_tfs_defined_at_names_the_programs_frames_only(tmp_path):
    """TF's error quotes where the failing op was made ("defined at"): under
    ``pyfunc-debug trace --tf`` it listed the command's frames and runpy's before the
    program's. It reads as the program run by python alone."""
    from programs import quoted_alone_and_traced
    plain, ours = quoted_alone_and_traced(
        tmp_path,
        "import tensorflow as tf\n"
        "def f(x):\n"
        "    raise ValueError('boom')\n"
        "@tf.function\n"
        "def g(x):\n"
        "    return tf.py_function(f, [x], tf.float32)\n"
        "g(tf.constant(1.0))\n",
        "--tf", "defined at (most recent call last):", "ValueError",
        env={"TF_CPP_MIN_LOG_LEVEL": "3"})
    assert 'prog.py", line 7, in <module>' in plain
    assert ours == plain
