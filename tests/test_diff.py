"""``pfd.diff_traces`` and ``pyfunc-debug diff``: the first op where two runs part (SPEC §9)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug.cli import main

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import pyfunc_debug as tf
    bump = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    x = tf.compat.v1.placeholder(tf.float32, name="x")
    a = tf.numpy_function(lambda v: v * np.float32(2), [x], tf.float32, name="double")
    b = tf.numpy_function(lambda v: v + np.float32(1 + bump), [a], tf.float32, name="inc")
    c = tf.numpy_function(lambda v: np.sqrt(v), [b], tf.float32, name="root")
    side = tf.numpy_function(lambda v: -v, [x], tf.float32, name="side")
    d = tf.py_function(lambda p, q: tf.reduce_sum(p * p) + tf.reduce_sum(q), [c, side],
                       tf.float32, name="total")
    with tf.Session() as sess:
        for _ in range(2):
            sess.run(d, {x: np.arange(4, dtype=np.float32)})
""")


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """Traces of the script with ``inc`` bumped by nothing, 0.5 and 1e-7 (by a subprocess each)."""
    d = tmp_path_factory.mktemp("diff")
    script = d / "script.py"
    script.write_text(SCRIPT)
    out = {}
    for name, bump, capture in (("a", "0", "summary"), ("same", "0", "summary"),
                                ("b", "0.5", "summary"), ("tiny", "1e-7", "summary"),
                                ("bare", "0", "none"), ("bare_b", "0.5", "none")):
        out[name] = d / f"{name}.jsonl"
        subprocess.run([sys.executable, "-m", "pyfunc_debug", "trace", "-o", str(out[name]),
                        "--capture", capture, str(script), bump], check=True,
                       capture_output=True)
    return out


def test_the_divergence_is_found_at_the_op_not_downstream(traces):
    d = tf.diff_traces(traces["a"], traces["b"])
    assert d is not None
    assert (d.run, d.op) == (0, "inc")
    assert d.agreed == ("double",)  # upstream of inc; 'side' is not
    assert (d.a.min, d.b.min) == (1.0, 1.5) and d.a.shape == d.b.shape == (4,)
    assert "mean" in d.reason or "min" in d.reason
    text = str(d)
    assert "'inc'" in text and "upstream ops that agreed (1): double" in text
    assert "1.5" in text and "7.5" in text  # B's min and max, beside A's


def test_identical_runs_do_not_differ(traces):
    assert tf.diff_traces(traces["a"], traces["same"]) is None
    assert tf.diff_traces(traces["a"], traces["a"]) is None


def test_tolerances_are_respected(traces):
    assert tf.diff_traces(traces["a"], traces["tiny"]) is None  # 1e-7 is within rtol=1e-5
    strict = tf.diff_traces(traces["a"], traces["tiny"], rtol=0, atol=0)
    assert strict is not None and strict.op == "inc"
    assert tf.diff_traces(traces["a"], traces["b"], rtol=0.5) is None


def test_cli_exit_status(traces, capsys):
    assert main(["diff", str(traces["a"]), str(traces["same"])]) == 0
    out = capsys.readouterr().out
    assert "no difference" in out
    assert "compared by summaries" in out and "--capture full" in out   # what was compared
    assert main(["diff", str(traces["a"]), str(traces["b"])]) == 1
    out = capsys.readouterr().out
    assert "first difference at run 1, op 'inc'" in out and "double" in out
    assert main(["diff", str(traces["a"]), str(traces["tiny"]), "--rtol", "0",
                 "--atol", "0"]) == 1
    assert main(["diff", str(traces["a"]), str(traces["tiny"])]) == 0


def test_cli_as_a_command(traces):
    r = subprocess.run([sys.executable, "-m", "pyfunc_debug", "diff", str(traces["a"]),
                        str(traces["b"])], capture_output=True, text=True)
    assert r.returncode == 1 and "'inc'" in r.stdout


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing.jsonl", "missing.jsonl: No such file"),
    (lambda d: (d / "bad.jsonl").write_text("{not json\n") and d / "bad.jsonl",
     "bad.jsonl:1: malformed header"),
    (lambda d: (d / "chrome.json").write_text("{}") and d / "chrome.json",
     "chrome.json is a Chrome trace"),
])
def test_bad_input_exits_2_naming_the_file(traces, tmp_path, capsys, make, message):
    bad = make(tmp_path)
    assert main(["diff", str(traces["a"]), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pyfunc-debug diff: ") and message in err


@pytest.mark.parametrize("a, b", [("bare", "bare_b"), ("bare", "a"), ("a", "bare")])
def test_a_trace_without_summaries_is_refused_not_called_equal(traces, capsys, a, b):
    """--capture none keeps no values: two such traces of runs whose values differ were
    reported as "no difference" (exit 0), and one beside a summary trace as "0 vs 1
    outputs"."""
    assert main(["diff", str(traces[a]), str(traces[b])]) == 2
    err = capsys.readouterr().err
    bare = traces[a] if a == "bare" else traces[b]
    assert f"{bare} was recorded with --capture none: it holds no values to compare" in err
    from pyfunc_debug.trace.diff import BadTrace
    with pytest.raises(BadTrace, match="--capture none"):
        tf.diff_traces(traces[a], traces[b])


def test_bad_tolerance_exits_2(traces, capsys):
    assert main(["diff", str(traces["a"]), str(traces["b"]), "--rtol", "-1"]) == 2
    assert "rtol must be" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:  # argparse's own usage error
        main(["diff", str(traces["a"]), str(traces["b"]), "--atol", "x"])
    assert info.value.code == 2


def _record(fn, capture="summary"):
    with tf.trace(capture=capture) as tr:
        fn()
    return tr.events


def _run(values, name="perm", threads=None, extra=False, fail=False):
    def go():
        g = tf.Graph()
        with g.as_default():
            x = tf.compat.v1.placeholder(tf.float32, name="x")

            def f(v):
                if fail:
                    raise ValueError("broken")
                return np.asarray(values, np.float32) + v
            y = tf.numpy_function(f, [x], tf.float32, name=name)
            z = tf.numpy_function(lambda v: v * np.float32(2), [y], tf.float32, name="after")
        with tf.Session(graph=g, inter_op_threads=threads) as sess:
            try:
                sess.run(z, {x: 0.0})
            except tf.errors.OpError:
                pass
            if extra:
                sess.run(z, {x: 0.0})
    return go


def test_values_are_compared_when_both_were_captured():
    a = _record(_run([1, 2, 3]), "full")
    b = _record(_run([3, 2, 1]), "full")  # same min/max/mean: only the values tell
    d = tf.diff_traces(a, b)
    assert d is not None and d.op == "perm" and "captured values differ" in d.reason
    assert tf.diff_traces(_record(_run([1, 2, 3])), _record(_run([3, 2, 1]))) is None


def test_nan_counts_failures_and_extra_runs():
    d = tf.diff_traces(_record(_run([1, 2, 3])), _record(_run([1, np.nan, 3])))
    assert d.op == "perm" and "NaN count" in d.reason
    d = tf.diff_traces(_record(_run([1, 2, 3])), _record(_run([1, 2, 3], fail=True)))
    assert d.op == "perm" and "failed in B only" in d.reason and d.b is None
    d = tf.diff_traces(_record(_run([1, 2, 3])), _record(_run([1, 2, 3], extra=True)))
    assert d.run == 1 and d.op is None and d.reason == "A has 1 run, B has 2"
    d = tf.diff_traces(_record(_run([1, 2, 3])), _record(_run([1, 2, 3], name="other")))
    assert d.op == "perm" and "not in B" in d.reason


def test_an_eager_op_inside_a_py_function_is_blamed_itself():
    def run(k):
        def go():
            g = tf.Graph()
            with g.as_default():
                x = tf.compat.v1.placeholder(tf.float32, name="x")
                y = tf.py_function(lambda v: tf.multiply(tf.add(v, 1.0), k), [x], tf.float32,
                                   name="body")
            with tf.Session(graph=g) as sess:
                sess.run(y, {x: 1.0})
        return go
    d = tf.diff_traces(_record(run(2.0)), _record(run(3.0)))
    assert d.parent == "body" and d.op != "body" and d.op.startswith("Mul")
    assert any(n.startswith("Add") for n in d.agreed)


def test_matching_ignores_thread_interleaving():
    a = _record(_run([1, 2, 3], threads=2))
    b = _record(_run([1, 2, 3]))
    assert tf.diff_traces(a, b) is None


def _callbacks(inputs, func=lambda v: v * np.float32(2)):
    """A framework's callback run (as ``--tf``/``--jax`` record it): one call per input, in
    the order given (a parallel ``tf.data`` map calls them in an order no run repeats)."""
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun
    run, op = CallbackRun("tensorflow"), ExternalOp("augment", "EagerPyFunc")
    with tf.trace() as tr:
        for x in inputs:
            run.call(op, func, (np.full((2, 2), x, np.float32),))
        run.end()
    return tr.events


def test_callbacks_are_matched_by_their_inputs_not_their_order():
    assert tf.diff_traces(_callbacks([1, 2, 3, 2]), _callbacks([2, 3, 2, 1])) is None


def test_a_callback_that_gives_another_output_on_the_same_inputs_is_found():
    changed = _callbacks([3, 1, 2], lambda v: v * np.float32(2) + (v[0, 0] == 2))
    d = tf.diff_traces(_callbacks([1, 2, 3]), changed)
    assert d.op == "augment" and d.output == 0 and d.a.max == 4.0 and d.b.max == 5.0
    assert "in its calls on the same inputs (in 0 float32[2,2] min=2 max=2 mean=2)" in d.reason
    assert "first difference at run 1, op 'augment' (EagerPyFunc), output 0" in d.report()


def test_a_callback_given_other_inputs_says_no_call_had_them():
    d = tf.diff_traces(_callbacks([1, 2, 3]), _callbacks([1, 2, 4]))
    assert d.reason == ("1 call in A was on inputs B never gave it (1 the other way): the "
                        "data differ, or the runs stopped at different points; the first, "
                        "in A: in 0 float32[2,2] min=3 max=3 mean=3")
    assert "(no call on those inputs)" in d.report() and "(did not run)" not in d.report()
    d = tf.diff_traces(_callbacks([1, 2, 3]), _callbacks([3, 2, 1, 1]))
    assert d.reason.startswith("1 call in B was on inputs A never gave it: the data differ")
    assert d.reason.endswith("the first, in B: in 0 float32[2,2] min=1 max=1 mean=1")


def test_calls_on_the_same_inputs_that_differ_come_before_calls_only_one_run_made():
    """A failing parallel map stops after more or fewer calls in each run: a real
    difference on shared inputs is the one to report."""
    changed = _callbacks([1, 2, 3, 5], lambda v: v * np.float32(2) + (v[0, 0] == 3))
    d = tf.diff_traces(_callbacks([4, 1, 2, 3]), changed)
    assert d.output == 0 and "in its calls on the same inputs (in 0 float32[2,2] min=3" in d.reason


def test_callbacks_read_back_from_a_file_match_those_in_memory(tmp_path):
    from pyfunc_debug.debug.external import ExternalOp
    from pyfunc_debug.external_calls import CallbackRun
    run, op = CallbackRun("tensorflow"), ExternalOp("augment", "EagerPyFunc")
    with tf.trace(tmp_path / "a.jsonl"):
        for x in (1, 2, 3):
            run.call(op, lambda v: v * np.float32(2), (np.full((2, 2), x, np.float32),))
        run.end()
    assert tf.diff_traces(str(tmp_path / "a.jsonl"), _callbacks([3, 1, 2])) is None


def test_rows_are_marked_by_the_tolerances_not_by_their_text(traces):
    """With --rtol 10 --atol 10 a min of 1 against 1.5 is no difference: it was starred."""
    d = tf.diff_traces(traces["a"], traces["b"], rtol=0.2, atol=0)
    assert d is not None and d.op == "inc"   # min 1 vs 1.5: beyond rtol 0.2
    rows = {line[2:10].strip(): line[0] for line in d.report().splitlines()[4:12]}
    # max 7 vs 7.5 and mean 4 vs 4.5 are within rtol 0.2: not marked
    assert (rows["min"], rows["max"], rows["mean"], rows["shape"]) == ("*", " ", " ", " "), \
        d.report()
