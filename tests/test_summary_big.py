"""Summaries of big arrays: an exact NaN/Inf flag from one pass, an honest ``approx``;
in-place writes into big inputs noticed on the sample."""
from __future__ import annotations

import numpy as np
import pytest

import pyfunc_debug as pfd
from pyfunc_debug import events as ev
from pyfunc_debug.debug import Debugger
from pyfunc_debug.trace.summary import EXACT_LIMIT, summarize

SHAPE = (1000, 1000)  # float32, 4 MB: the one-pass path


def _big(seed=0):
    return np.random.default_rng(seed).standard_normal(SHAPE).astype(np.float32)


@pytest.mark.parametrize("where", [0, 1, 12_345, 999_999, 4096 * 244 + 1])
@pytest.mark.parametrize("bad, nan, inf", [(np.nan, 1, 0), (np.inf, 0, 1), (-np.inf, 0, 1)])
def test_one_non_finite_element_anywhere_is_counted_exactly(where, bad, nan, inf):
    a = _big()
    a.reshape(-1)[where] = bad
    s = summarize(a)
    assert (s.nan, s.inf) == (nan, inf)
    finite = a[np.isfinite(a)]
    assert (s.min, s.max) == (float(finite.min()), float(finite.max()))  # exact, not sampled
    assert s.approx is False


@pytest.mark.filterwarnings("error::RuntimeWarning")  # inf - inf inside the pass: not the user's
def test_nan_and_inf_together_and_a_negative_nan():
    a = _big()
    flat = a.reshape(-1)
    flat[[3, 70_001, 500_000]] = [np.inf, -np.inf, np.nan]
    flat[900_000] = -np.float32(np.nan)  # sign bit set: still a NaN
    s = summarize(a)
    assert (s.nan, s.inf) == (2, 2)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # an overflow inside the pass, too
def test_huge_finite_values_are_not_mistaken_for_inf():
    a = np.full(SHAPE, 3e20, np.float32)  # the one pass's sums stay finite: sampled min/max
    a[5, 5] = -1e30
    s = summarize(a)
    assert (s.nan, s.inf) == (0, 0) and s.approx is True
    assert float(np.float32(-1e30)) <= s.min <= s.max == float(np.float32(3e20))
    a = np.full(SHAPE, 3e38, np.float32)  # its sums overflow: the exact path decides
    a[5, 5] = -3e38
    s = summarize(a)
    assert (s.nan, s.inf) == (0, 0)
    assert (s.min, s.max) == (float(np.float32(-3e38)), float(np.float32(3e38)))  # exact


def test_a_finite_big_summary_is_flagged_approx_and_stays_within_the_data():
    a = _big(1)
    s = summarize(a)
    assert s.approx is True and (s.nan, s.inf) == (0, 0)
    assert a.min() <= s.min <= s.max <= a.max()
    assert abs(s.mean - float(a.mean(dtype=np.float64))) < 0.05
    assert s.preview.startswith(f"[{a.reshape(-1)[0]:.4g}, ")


def test_small_arrays_stay_exact():
    a = _big(2)[:100, :100]
    assert a.size <= EXACT_LIMIT
    s = summarize(a)
    assert s.approx is False and (s.min, s.max) == (float(a.min()), float(a.max()))


def _chain_making_one_nan(n=6, bad_op=3):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = x
        for i in range(n):
            def body(v, i=i):
                out = v + np.float32(1)
                if i == bad_op:
                    out.reshape(-1)[777_777] = np.nan
                return out
            y = pfd.numpy_function(body, [y], pfd.float32, name=f"op{i}")
    return g, x, y


def test_nan_producer_stops_at_the_op_that_made_one_nan_in_a_big_array():
    g, x, y = _chain_making_one_nan()
    seen = []
    dbg = Debugger(on_pause=lambda p: seen.append((p.op_name, p.when)) or "continue")
    dbg.break_on(when="nan_producer")
    with dbg, pfd.Session(graph=g) as sess:
        out = sess.run(y, {x: np.zeros(SHAPE, np.float32)})
    assert np.isnan(out).sum() == 1
    assert seen == [("op3", "after")]


def test_traced_summaries_of_a_big_chain_count_the_nan_where_it_is():
    g, x, y = _chain_making_one_nan()
    with pfd.trace(capture="summary") as tr, pfd.Session(graph=g) as sess:
        sess.run(y, {x: np.zeros(SHAPE, np.float32)})
    ends = {e.op: e for e in tr.events if type(e) is ev.OpEnd}
    assert [ends[f"op{i}"].outputs[0].nan for i in range(6)] == [0, 0, 0, 1, 1, 1]


def _writer_graph(write):
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.numpy_function(lambda v: v * np.float32(2), [x], pfd.float32, name="double")
        z = pfd.numpy_function(write, [y], pfd.float32, name="writer")
    return g, x, z


def _modified_warnings(write, value):
    g, x, z = _writer_graph(write)
    with pfd.trace(capture="summary") as tr, pfd.Session(graph=g) as sess:
        sess.run(z, {x: value})
    return [e for e in tr.events if type(e) is ev.Warning and e.kind == "input_modified"]


def _write_row(v):
    v[500, :] = 7.0  # a contiguous run longer than the sample's stride
    return v.sum(dtype=np.float32)


def test_a_write_into_a_big_input_is_reported():
    (w,) = _modified_warnings(_write_row, _big(3))
    assert w.op == "writer" and "wrote into its input 0" in w.message


def test_reading_a_big_input_holding_nans_is_not_a_write():
    value = _big(4)
    value[::7] = np.nan  # NaN != NaN: the sample comparison must still see "unchanged"
    assert _modified_warnings(lambda v: v.sum(dtype=np.float32), value) == []


def test_only_the_writer_is_blamed_when_ops_share_a_big_input():
    """The op right after a producer starts its write check from the sample the producer's
    summary gathered; an op after that gathers its own: the reader after a writer is not
    blamed for the writer's change, nor is a reader straight after the producer."""
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        a = pfd.numpy_function(lambda v: v * np.float32(2), [x], pfd.float32, name="make")
        peek = pfd.numpy_function(lambda v: v.sum(dtype=np.float32), [a], pfd.float32,
                                  name="peek")
        w = pfd.numpy_function(lambda v, _: _write_row(v), [a, peek], pfd.float32,
                               name="writer")
        r = pfd.numpy_function(lambda v, _: v.sum(dtype=np.float32), [a, w], pfd.float32,
                               name="reader")
    with pfd.trace(capture="summary") as tr, pfd.Session(graph=g) as sess:
        sess.run(r, {x: _big(5)})
    order = [e.op for e in tr.events if type(e) is ev.OpStart]
    assert order.index("make") < order.index("peek") < order.index("writer") < order.index("reader")
    blamed = [e.op for e in tr.events if type(e) is ev.Warning and e.kind == "input_modified"]
    assert blamed == ["writer"]


def test_a_chain_gathers_each_big_array_once_for_its_write_check(monkeypatch):
    """The op right after a producer starts its write check from the sample the
    producer's summary gathered (the README says so): in a chain of 3, the check
    gathers before the first op only (its input was fed), and once after each op."""
    from pyfunc_debug.runtime import modified
    gathers = []
    real = modified._sample
    monkeypatch.setattr(modified, "_sample", lambda a: gathers.append(1) or real(a))
    g = pfd.Graph()
    with g.as_default():
        y = x = pfd.compat.v1.placeholder(pfd.float32)
        for i in range(3):
            y = pfd.numpy_function(lambda v: v + np.float32(1), [y], pfd.float32, name=f"inc{i}")
    with pfd.trace(capture="summary") as tr, pfd.Session(graph=g) as sess:
        out = sess.run(y, {x: _big(6)})
    assert out.shape == SHAPE and tr.op_count == 3
    assert len(gathers) == 1 + 3
