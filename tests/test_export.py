"""Traces for analysis (SPEC §3b): one row per op call, as CSV, Parquet or a DataFrame."""
from __future__ import annotations

import csv
import math
import os
import sys
import time

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.trace import export, recorder
from pyfunc_debug.trace.export import (COLUMNS, FORMATS, VALUE_FIELDS, ExportError, export_trace,
                                       op_rows)

pd = pytest.importorskip("pandas")


def _graph():
    """double/inc/dot (a py_function running eager ops), two-in two-out, NaN and a failure."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[None], name="x")
        a = tf.numpy_function(lambda v: v * np.float32(2), [x], tf.float32, name="double")
        b = tf.numpy_function(lambda v: v + np.float32(1), [x], tf.float32, name="inc")
        dot = tf.py_function(lambda p, q: tf.reduce_sum(p * q), [a, b], tf.float32, name="dot")
        pair = tf.numpy_function(lambda p, q: (p - q, (p * 0).astype(np.int32)), [a, b],
                                 [tf.float32, tf.int32], name="pair")
        nan = tf.numpy_function(lambda v: np.where(v > 1, np.float32("nan"), v), [x],
                                tf.float32, name="nanop")
        inf = tf.numpy_function(lambda v: np.full_like(v, np.inf), [x], tf.float32, name="infop")
        bad = tf.numpy_function(lambda v: v[10], [x], tf.float32, name="bad")
    return g, x, (dot, pair, nan, inf), bad


def _record(path, capture="summary", runs=2):
    g, x, fetches, bad = _graph()
    with tf.trace(path, capture=capture) as tr:
        with tf.Session(graph=g) as sess:
            for _ in range(runs):
                sess.run(fetches, {x: [1.0, 2.0, 3.0]})
            with pytest.raises(tf.errors.UnknownError):
                sess.run(bad, {x: [1.0]})
    return tr


@pytest.fixture
def trace_file(tmp_path):
    path = tmp_path / "run.jsonl"
    _record(path)
    return str(path)


def _by_op(rows, op):
    return [r for r in rows if r["op"] == op]


# -- rows -----------------------------------------------------------------------------


def test_one_row_per_op_call_with_its_start_duration_and_status(trace_file):
    events = tf.load_trace(trace_file)
    rows = list(op_rows(events, events.header["pid"]))
    ends = [e for e in events if isinstance(e, ev.OpEnd)]
    errors = [e for e in events if isinstance(e, ev.OpError)]
    assert len(rows) == len(ends) + len(errors) and errors
    starts = {(e.run_id, e.thread, e.op): e for e in events if isinstance(e, ev.OpStart)}
    for e, row in zip(ends, [r for r in rows if r["status"] == "ok"]):
        assert (row["run"], row["op"], row["op_type"], row["thread"]) == \
            (e.run_id, e.op, e.op_type, e.thread)
        start = starts[(e.run_id, e.thread, e.op)]
        assert row["start_ns"] == start.t_ns and row["duration_ns"] == e.duration_ns
        assert row["pid"] == os.getpid() and row["worker"] is None
        assert row["source"] == (start.source or None)   # eager ops have none
    [err] = [r for r in rows if r["status"] == "error"]
    assert err["op"] == "bad" and err["error_type"] == "UnknownError"
    assert "IndexError" in err["message"] and err["duration_ns"] == errors[0].duration_ns
    assert err["source"].startswith(__file__)
    assert "in0_shape" not in err   # an error carries no summaries
    # the eager ops a py_function ran are rows too, with it as their parent
    children = [r for r in rows if r["parent"] == "dot"]
    assert {r["op_type"] for r in children} == {"Mul", "Sum"} and len(children) == 4


def test_multi_input_multi_output_values_in_index_order(trace_file):
    rows = list(op_rows(tf.load_trace(trace_file)))
    pair = _by_op(rows, "pair")[0]
    assert (pair["in0_shape"], pair["in0_dtype"], pair["in0_min"], pair["in0_max"],
            pair["in0_mean"]) == ("(3,)", "float32", 2.0, 6.0, 4.0)
    assert (pair["in1_min"], pair["in1_max"]) == (2.0, 4.0)
    assert (pair["out0_min"], pair["out0_max"], pair["out0_mean"]) == (0.0, 2.0, 1.0)
    assert pair["out1_dtype"] == "int32" and pair["out1_shape"] == "(3,)"
    assert type(pair["out1_nan"]) is int and pair["out1_nan"] == 0
    columns = export.columns_for(tf.load_trace(trace_file))
    assert columns[:len(COLUMNS)] == list(COLUMNS)
    values = [f"{p}{i}_{f}" for p, n in (("in", 2), ("out", 2)) for i in range(n)
              for f in VALUE_FIELDS]
    assert columns[len(COLUMNS):] == values
    assert set().union(*rows) <= set(columns)


def test_nan_and_inf_stay_numbers(trace_file):
    rows = list(op_rows(tf.load_trace(trace_file)))
    nan = _by_op(rows, "nanop")[0]
    assert (nan["out0_nan"], nan["out0_inf"], nan["out0_min"], nan["out0_max"]) == (2, 0, 1.0, 1.0)
    inf = _by_op(rows, "infop")[0]
    assert inf["out0_inf"] == 3 and type(inf["out0_inf"]) is int
    assert isinstance(inf["out0_mean"], float) and math.isnan(inf["out0_mean"])


def test_capture_none_gives_the_named_columns_only(tmp_path):
    path = tmp_path / "bare.jsonl"
    _record(path, capture="none")
    events = tf.load_trace(path)
    assert export.columns_for(events) == list(COLUMNS)
    df = events.to_pandas()
    assert list(df.columns) == list(COLUMNS)
    assert (df["duration_ns"] > 0).all() and df["duration_ns"].dtype == np.int64
    assert set(df["status"]) == {"ok", "error"}


def test_folded_and_deduplicated_ops_appear_with_their_status(tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        c = tf.constant(np.float32(3.0), name="c")
        once = tf.numpy_function(lambda v: v + 1, [c], tf.float32, name="once", stateful=False)
        d1 = tf.numpy_function(np.negative, [x], tf.float32, name="d1", stateful=False)
        d2 = tf.numpy_function(np.negative, [x], tf.float32, name="d2", stateful=False)
    path = tmp_path / "skip.jsonl"
    with tf.trace(path):
        with tf.Session(graph=g) as sess:
            for _ in range(2):
                sess.run([once, d1, d2], {x: 1.0})
    rows = list(op_rows(tf.load_trace(path)))
    assert [r["status"] for r in _by_op(rows, "once")] == ["ok", "folded"]
    d2_rows = _by_op(rows, "d2")
    assert [r["status"] for r in d2_rows] == ["deduplicated"] * 2   # one per run
    assert d2_rows[1]["run"] == d2_rows[0]["run"] + 1
    assert all(r["op_type"] == "PyFuncStateless" and r["duration_ns"] == 0
               for r in rows if r["status"] != "ok")
    assert "'d1'" in _by_op(rows, "d2")[0]["message"]


def test_interrupted_and_unfinished_ops(tmp_path):
    def stop(v):
        raise KeyboardInterrupt
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        ok = tf.numpy_function(lambda v: v + 1, [x], tf.float32, name="ok")
        stopped = tf.numpy_function(stop, [x], tf.float32, name="stopped")
    path = tmp_path / "cut.jsonl"
    with tf.trace(path):
        with tf.Session(graph=g) as sess:
            sess.run(ok, {x: 1.0})
            with pytest.raises(KeyboardInterrupt):
                sess.run(stopped, {x: 1.0})
    rows = list(op_rows(tf.load_trace(path)))
    assert [r["status"] for r in _by_op(rows, "stopped")] == ["interrupted"]
    # a trace cut right after an OpStart (the process died): that op is unfinished
    lines = path.read_text().splitlines(keepends=True)
    last_start = max(i for i, line in enumerate(lines) if line.startswith('["OpStart"'))
    path.write_text("".join(lines[:last_start + 1]))
    rows = list(op_rows(tf.load_trace(path)))
    assert rows[-1]["op"] == "stopped" and rows[-1]["status"] == "unfinished"
    assert rows[-1]["duration_ns"] is None and rows[-1]["start_ns"] > 0
    assert set(export.STATUSES) >= {r["status"] for r in rows}


def test_worker_and_pid_of_ops_that_ran_on_a_dask_worker(tmp_path):
    path = tmp_path / "dist.jsonl"
    remote = ev.remote_thread("tcp://127.0.0.1:4101", 5151, 21, "Dask-Worker-X")
    t = time.perf_counter_ns()
    with tf.trace(path):
        for thread, op in ((remote, "there"), (1, "here")):
            ev.emit(ev.OpStart(ev.next_seq(), 7, t, thread, op, "PyFunc", None, "x.py:3", ()))
            ev.emit(ev.OpEnd(ev.next_seq(), 7, t + 10, thread, op, "PyFunc", None, 10))
    df = tf.load_trace(path).to_pandas().set_index("op")
    assert df.loc["there", "worker"] == "tcp://127.0.0.1:4101"
    assert df.loc["there", "pid"] == 5151 and df.loc["here", "pid"] == os.getpid()
    assert pd.isna(df.loc["here", "worker"])


def test_op_rows_streams(trace_file):
    events = tf.load_trace(trace_file)
    taken = []

    def feed():
        for e in events:
            taken.append(e)
            yield e
    rows = op_rows(feed())
    first = next(rows)
    assert first["status"] == "ok" and len(taken) < 10   # not the whole trace first


# -- CSV, Parquet, pandas --------------------------------------------------------------


def test_csv_beside_the_trace_with_a_header_and_a_pandas_round_trip(trace_file):
    out, n = export_trace(trace_file)
    assert out == trace_file[:-len(".jsonl")] + ".csv"
    with open(out, newline="") as f:
        header = next(csv.reader(f))
    frame = tf.load_trace(trace_file).to_pandas()
    assert header == list(frame.columns) and n == len(frame)
    back = pd.read_csv(out)
    assert list(back.columns) == header and len(back) == n
    for column in ("run", "thread", "pid", "start_ns", "duration_ns"):
        assert back[column].tolist() == frame[column].tolist(), column
    for column in ("out0_min", "out0_max", "out0_mean", "out0_nan", "out0_inf"):
        np.testing.assert_array_equal(back[column].to_numpy(float),
                                      frame[column].to_numpy(float, na_value=np.nan))
    assert back["status"].tolist() == frame["status"].tolist()
    assert back.loc[back["op"] == "bad", "message"].iloc[0] == \
        frame.loc[frame["op"] == "bad", "message"].iloc[0]   # a multi-line message, quoted
    assert back.loc[back["op"] == "pair", "in0_shape"].iloc[0] == "(3,)"


def test_csv_to_stdout(trace_file, capsys):
    out, n = export_trace(trace_file, "csv", "-")
    text = capsys.readouterr().out
    assert out == "-" and text.startswith(",".join(COLUMNS) + ",in0_shape")
    assert len(list(csv.reader(text.splitlines(keepends=True)))) == n + 1


def test_parquet_reads_back_with_pyarrow(trace_file, tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(export, "BATCH_ROWS", 4)   # several record batches: written as it goes
    out, n = export_trace(trace_file, "parquet", str(tmp_path / "ops.parquet"))
    table = pq.read_table(out)
    frame = tf.load_trace(trace_file).to_pandas()
    assert table.column_names == list(frame.columns) and table.num_rows == n == len(frame)
    types = {f.name: str(f.type) for f in table.schema}
    assert types["start_ns"] == types["out0_nan"] == "int64"
    assert types["out0_min"] == "double" and types["op"] == types["in0_shape"] == "string"
    assert pq.ParquetFile(out).metadata.num_row_groups > 1
    back = table.to_pandas()
    assert back["duration_ns"].tolist() == frame["duration_ns"].tolist()
    nan = back[back["op"] == "infop"].iloc[0]
    assert nan["out0_inf"] == 3 and math.isnan(nan["out0_mean"])


def test_top_10_slowest_ops_in_one_line(tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        ops = [tf.numpy_function(lambda v, s=i: (time.sleep(s / 2000), v)[1], [x], tf.float32,
                                 name=f"nap{i}") for i in range(14)]
    path = tmp_path / "naps.jsonl"
    with tf.trace(path):
        with tf.Session(graph=g) as sess:
            sess.run(ops, {x: 1.0})
    top = tf.load_trace(path).to_pandas().nlargest(10, "duration_ns")[["op", "duration_ns"]]
    ends = sorted((e for e in tf.load_trace(path) if isinstance(e, ev.OpEnd)),
                  key=lambda e: -e.duration_ns)[:10]
    assert list(top.itertuples(index=False, name=None)) == [(e.op, e.duration_ns) for e in ends]
    # which nap comes first is the scheduler's call on a busy machine; that each op's
    # duration covers its own sleep is ours (nap13 slept 6.5 ms)
    naps = {e.op: e.duration_ns for e in ends}
    assert all(d >= int(op[3:]) / 2000 * 1e9 for op, d in naps.items())
    assert top["duration_ns"].iloc[0] >= 13 / 2000 * 1e9


def test_trace_to_pandas_in_memory_and_streamed(tmp_path, monkeypatch):
    with tf.trace() as tr:
        _graph_run_once()
    df = tr.to_pandas()
    assert set(df["op"]) >= {"double", "inc", "dot"} and (df["pid"] == os.getpid()).all()
    # a streamed trace keeps a window of events; to_pandas reads every op from its file
    monkeypatch.setattr(recorder, "RECENT_EVENTS", 3)
    path = tmp_path / "long.jsonl"
    with tf.trace(path) as tr:
        _graph_run_once()
        during = tr.to_pandas()   # also while the block runs
    assert len(tr.events) == 3
    after = tr.to_pandas()
    assert len(after) == len(during) == len(df) == tr.op_count


def _graph_run_once():
    g, x, (dot, *_), _ = _graph()
    with tf.Session(graph=g) as sess:
        sess.run(dot, {x: [1.0, 2.0]})


def test_to_pandas_without_pandas_says_so(trace_file, monkeypatch):
    events = tf.load_trace(trace_file)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="to_pandas needs pandas: pip install pandas"):
        events.to_pandas()


# -- errors -------------------------------------------------------------------------------


def _one_line(excinfo, path):
    text = str(excinfo.value)
    assert "\n" not in text and str(path) in text, text
    return text


def test_a_missing_or_damaged_trace_is_named(tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(ExportError) as e:
        export_trace(str(missing))
    assert "no such trace file" in _one_line(e, missing)
    damaged = tmp_path / "damaged.jsonl"
    _record(damaged, runs=1)
    lines = damaged.read_text().splitlines(keepends=True)
    lines[3] = "{not json\n"
    damaged.write_text("".join(lines))
    with pytest.raises(ExportError) as e:
        export_trace(str(damaged), "csv")
    assert "damaged.jsonl:4: malformed trace line" in _one_line(e, damaged)
    assert not (tmp_path / "damaged.csv").exists()
    chrome = tmp_path / "run.json"
    chrome.write_text('{"traceEvents": []}\n')
    with pytest.raises(ExportError) as e:
        export_trace(str(chrome))
    _one_line(e, chrome)


def test_an_unwritable_output_is_named(trace_file, tmp_path):
    for out in (tmp_path / "no" / "such" / "dir.csv", tmp_path):
        with pytest.raises(ExportError) as e:
            export_trace(trace_file, "csv", str(out))
        assert "cannot write" in _one_line(e, out)
    with pytest.raises(ExportError) as e:
        export_trace(trace_file, "csv", trace_file)
    _one_line(e, trace_file)
    assert [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]   # no temporary file left


def test_parquet_without_pyarrow_and_unknown_formats(trace_file, monkeypatch):
    with pytest.raises(ExportError) as e:
        export_trace(trace_file, "xlsx")
    _one_line(e, trace_file)
    with pytest.raises(ExportError) as e:
        export_trace(trace_file, "parquet", "-")
    _one_line(e, trace_file)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ExportError) as e:
        export_trace(trace_file, "parquet")
    assert "parquet needs pyarrow: pip install 'pyfunc-debug[parquet]'" in _one_line(e, trace_file)
    assert FORMATS == ("csv", "parquet")


def test_a_number_parquet_cannot_hold_is_named(tmp_path):
    pytest.importorskip("pyarrow")
    from pyfunc_debug.trace.jsonl import JsonlWriter
    path = tmp_path / "huge.jsonl"
    writer = JsonlWriter(path, "summary")
    writer.write(ev.OpEnd(1, 2 ** 70, 10, 1, "op", "PyFunc", None, 5))   # a run id beyond int64
    writer.close()
    assert export_trace(str(path))[1] == 1   # CSV holds any integer
    with pytest.raises(ExportError) as e:
        export_trace(str(path), "parquet")
    _one_line(e, path)
    assert not list(tmp_path.glob("*.parquet*")) and not list(tmp_path.glob(".*tmp"))


def test_export_trace_documents_every_column():
    doc = export_trace.__doc__
    for name in COLUMNS + tuple(f"in{{i}}_{f}" for f in VALUE_FIELDS) + export.STATUSES:
        assert f"``{name}``" in doc, name
