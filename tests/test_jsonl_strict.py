"""JSONL traces are strict JSON, decoded by field type, validated row by row, streamed in bounded memory."""
from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.trace.jsonl import JsonlWriter, TraceFormatError
from pyfunc_debug.trace import recorder
from pyfunc_debug.trace.summary import ValueSummary

from perfetto_rules import strict_loads


def _nan_inf_graph():
    x = tf.compat.v1.placeholder(tf.float32, shape=[None], name="x")
    nan = tf.numpy_function(lambda v: np.full_like(v, np.nan), [x], tf.float32, name="all_nan")
    def div0(v):
        with np.errstate(divide="ignore", invalid="ignore"):
            return v / np.float32(0)
    inf = tf.numpy_function(div0, [x], tf.float32, name="div0")
    word = tf.numpy_function(lambda v: np.array(b"nan", dtype=object), [x], tf.string, name="word")
    return x, [nan, inf, word]


def _write_rows(path, *rows):
    """A trace written by the real writer, then extra raw lines appended."""
    JsonlWriter(path, "summary").close()
    with open(path, "a", encoding="utf-8") as f:
        for row in rows:
            f.write((row if isinstance(row, str) else json.dumps(row)) + "\n")


def _op_end(seq=2, **summary):
    s = dict(shape=[3], dtype="float32", size=3, min=1.0, max=2.0, mean=1.5, nan=0, inf=0,
             preview="[1, 2, 2]", approx=False) | summary
    return ["OpEnd", seq, 1, 100, 7, "op", "PyFunc", None, 5, [], [list(s.values())]]


def test_every_line_is_strict_json_and_nonfinite_reads_back(tmp_path):
    path = tmp_path / "nan.jsonl"
    g = tf.Graph()
    with g.as_default():
        x, outs = _nan_inf_graph()
    with tf.trace(path) as tr, tf.Session(graph=g) as sess:
        sess.run(outs, {x: [1.0, -1.0, 0.0]})
    lines = path.read_text().splitlines()
    for line in lines:
        strict_loads(line)  # raises on NaN / Infinity tokens
    assert any('"nan"' in line for line in lines)
    loaded = tf.load_trace(path)
    ends = {e.op: e for e in loaded if type(e) is ev.OpEnd}
    s = ends["all_nan"].outputs[0]
    assert isinstance(s.min, float) and math.isnan(s.min) and math.isnan(s.mean) and s.nan == 3
    assert ends["div0"].outputs[0].inf == 2 and ends["div0"].outputs[0].nan == 1
    assert ends["word"].outputs[0].preview == "b'nan'"
    mine = {e.op: e for e in tr.events if type(e) is ev.OpEnd}
    assert mine["div0"].outputs[0]._replace(value=None, min=0, max=0, mean=0) == \
        ends["div0"].outputs[0]._replace(min=0, max=0, mean=0)


def test_writer_spells_inf_and_keeps_string_fields_strings(tmp_path):
    path = tmp_path / "w.jsonl"
    w = JsonlWriter(path, "summary")
    s = ValueSummary((2,), "float64", 2, -math.inf, math.inf, math.nan, 1, 2, "nan", False)
    w.write(ev.OpEnd(5, 1, 10, 1, "nan", "PyFunc", "inf", 3, (s,), (s,)))
    w.close()
    line = path.read_text().splitlines()[1]
    strict_loads(line)
    assert '"-inf","inf","nan"' in line
    e = tf.load_trace(path)[0]
    got = e.outputs[0]
    assert (got.min, got.max) == (-math.inf, math.inf) and math.isnan(got.mean)
    assert got.preview == "nan" and e.op == "nan" and e.parent == "inf"  # strings stay strings


def test_every_way_a_nonfinite_float_enters_a_summary_is_spelled_out(tmp_path):
    """The fast writer encodes summaries in C (msgspec, as orjson, writes a NaN as null): a
    summary holding a NaN/Inf min, max or mean, however made, must reach the file as a
    string."""
    from pyfunc_debug.trace.codec import summary_from_row
    from pyfunc_debug.trace.summary import summarize
    with np.errstate(over="ignore"):
        overflow = summarize(np.array([1e308, 1e308]))   # finite values, mean overflows
    made = {"all_nan": summarize(np.array([np.nan, np.nan])),
            "overflow": overflow,
            "by_hand": ValueSummary((), "float64", 1, 1.0, 1.0, math.nan),
            "replaced": summarize(np.float64(2.0))._replace(max=-math.inf),
            "decoded": summary_from_row([[], "float64", 1, "inf", "inf", "inf", 0, 1, "", False])}
    assert overflow.nan == overflow.inf == 0 and overflow.mean == math.inf
    path = tmp_path / "w.jsonl"
    w = JsonlWriter(path, "summary")
    for i, (name, s) in enumerate(made.items()):
        w.write(ev.OpEnd(i, 1, 10 + i, 1, name, "PyFunc", "p", 1, (), (s,)))
    w.close()
    lines = path.read_text().splitlines()[1:]
    assert len(lines) == len(made)
    for line in lines:
        row = strict_loads(line)
        stats = row[10][0][3:6]   # the output summary's min, max, mean
        assert None not in stats and set(map(type, stats)) <= {str, float}, line
    loaded = {e.op: e.outputs[0] for e in tf.load_trace(path)}
    for name, s in made.items():
        got = loaded[name]
        assert [repr(v) for v in got[3:6]] == [repr(v) for v in s[3:6]], name


def test_bare_nan_from_older_writers_still_loads(tmp_path):
    path = tmp_path / "old.jsonl"
    _write_rows(path, '["OpEnd",2,1,100,7,"op","PyFunc",null,5,[],'
                      '[[[3],"float32",3,NaN,NaN,NaN,3,0,"[nan]",false]]]')
    assert math.isnan(tf.load_trace(path)[0].outputs[0].min)


@pytest.mark.parametrize("row, what", [
    (["OpStart", "one", 1, 100, 7, "op", "PyFunc", None, "", []], "'seq' is str"),
    (["OpStart", 1, 1, 100, 7, "op", "PyFunc", None, "", [["a"]]], "'producers'"),
    (["OpStart", True, 1, 100, 7, "op", "PyFunc", None, "", []], "'seq' is bool"),
    (["RunEnd", 2, 1, 100, 7, 5, "yes", None, "", "", None], "'ok' is str"),
    (_op_end(min="banana"), "'min'"),
    (_op_end(preview=3), "wrong types"),
    (_op_end(shape=[[3]]), "shape"),
    (_op_end()[:-1] + [[_op_end()[-1][0] + ["../../etc/passwd"]]], "bad value key"),
    (["Nope", 1], "unknown event row"),
    ({"a": 1}, "unknown event row"),
    (["OpStart", 1, 1], "fields, expected"),
    # integers no float holds: they loaded, then broke a summary, a sum or an export
    (_op_end(max=10 ** 400), "'max' is an integer too large"),
    (_op_end()[:8] + [10 ** 400] + _op_end()[9:], "'duration_ns' is an integer too large"),
    (["OpStart", 1, 1, -(10 ** 400), 7, "op", "PyFunc", None, "", []], "'t_ns' is an integer too"),
])
def test_wrong_field_types_name_the_line(tmp_path, row, what):
    path = tmp_path / "bad.jsonl"
    _write_rows(path, _op_end(seq=1), row, _op_end(seq=3))
    with pytest.raises(TraceFormatError, match=rf"bad.jsonl:3: .*{what}") as info:
        tf.load_trace(path)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("depth", [50, 100_000])
def test_absurd_nesting_is_one_clear_error(tmp_path, depth):
    path = tmp_path / "deep.jsonl"
    deep = "[" * depth + "]" * depth
    _write_rows(path, f'["OpStart",1,1,100,7,"op","PyFunc",null,"",{deep}]', _op_end(seq=3))
    with pytest.raises(TraceFormatError, match=r"deep.jsonl:2: "):
        tf.load_trace(path)


@pytest.mark.parametrize("version", [4, 0, "1", None, 1.0])
def test_unknown_format_version(tmp_path, version):
    path = tmp_path / "v.jsonl"
    _write_rows(path, _op_end())
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["version"] = version
    path.write_text(json.dumps(header) + "\n" + lines[1] + "\n")
    with pytest.raises(TraceFormatError, match=r"v.jsonl:1: unknown trace format version"):
        tf.load_trace(path)


def test_a_version_1_trace_still_loads(tmp_path):
    """Version 2 only added pending summaries; a file of the first version reads as it did."""
    path = tmp_path / "v1.jsonl"
    _write_rows(path, _op_end())
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["version"] = 1
    path.write_text(json.dumps(header) + "\n" + lines[1] + "\n")
    (end,) = tf.load_trace(path)
    assert end.op == json.loads(lines[1])[5]


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_trace_with_ten_field_summaries_loads(tmp_path, version):
    """Up to version 2 a summary row without a captured value had 10 fields; version 3
    writes an eleventh, null (msgspec writes a summary whole). Both read the same."""
    path = tmp_path / "v2.jsonl"
    _write_rows(path, _op_end(), _op_end(seq=3))
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["version"] = version
    eleven = json.loads(lines[2])
    eleven[10][0].append(None)
    path.write_text(json.dumps(header) + "\n" + lines[1] + "\n" + json.dumps(eleven) + "\n")
    ten, with_null = tf.load_trace(path)
    assert len(json.loads(lines[1])[10][0]) == 10
    assert ten.outputs == with_null.outputs and ten.outputs[0].value is None


def test_a_version_3_writer_gives_every_summary_an_eleventh_field(tmp_path):
    path = tmp_path / "v3.jsonl"
    with tf.trace(path):
        tf.constant(1.0)   # an eager op: one summary
        g = tf.Graph()
        with g.as_default():
            y = tf.compat.v1.py_func(lambda a: a * 2, [tf.constant(np.float32(3))], tf.float32)
        with tf.Session(graph=g) as sess:
            sess.run(y)
    header, *rows = map(json.loads, path.read_text().splitlines())
    assert header["version"] == 3
    sums = [s for r in rows if r[0] == "OpEnd" for s in r[9] + r[10]]
    assert sums and all(len(s) == 11 and s[10] is None for s in sums)


def test_header_rows_must_match(tmp_path):
    path = tmp_path / "h.jsonl"
    _write_rows(path)
    header = json.loads(path.read_text())
    header["rows"]["OpEnd"] = header["rows"]["OpEnd"][::-1]
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(TraceFormatError, match=r"h.jsonl:1: .*row fields"):
        tf.load_trace(path)


def test_a_trace_from_before_worker_fields_loads(tmp_path):
    """Headers written before events had ``worker``/``pid`` (SPEC §3b) still load; rows
    with or without the two fields decode, and a local event has none."""
    path = tmp_path / "old.jsonl"
    _write_rows(path, _op_end(seq=2), _op_end(seq=3) + ["tcp://127.0.0.1:9", 1234],
                ["OpStart", 4, 1, 100, 7, "op", "PyFunc", None, "", [], None, None])
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    for name in ev.EVENT_TYPES:
        header["rows"][name] = [f for f in header["rows"][name] if f not in ("worker", "pid")]
    path.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    local, remote, start = tf.load_trace(path)
    assert (local.worker, local.pid) == (None, None) and len(local) == len(ev.OpEnd._fields) - 2
    assert (remote.worker, remote.pid) == ("tcp://127.0.0.1:9", 1234)
    assert start.worker is None and start == ev.OpStart(4, 1, 100, 7, "op", "PyFunc")


@pytest.mark.parametrize("capture", ["full", "summary"])   # summary: kept as lines
def test_streaming_keeps_a_bounded_window(tmp_path, monkeypatch, capture):
    monkeypatch.setattr(recorder, "RECENT_EVENTS", 500)
    window = recorder.RECENT_EVENTS
    path = tmp_path / "long.jsonl"
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = x
        for i in range(50):
            y = tf.numpy_function(lambda v: v + np.float32(1), [y], tf.float32)
    runs = window // 100 + 5  # 102 events a run: more than the window holds
    with tf.trace(path, capture=capture) as tr, tf.Session(graph=g) as sess:
        for _ in range(runs):
            sess.run(y, {x: 0.0})
    total = runs * 102
    if capture == "summary":   # what it keeps until read: about the window's lines
        assert sum(n for _, n in tr._writer._lines) < 2 * window
    assert len(tr.events) == window < total == tr.event_count
    assert tr.op_count == runs * 50 and tr.run_count == runs
    assert all(s.value is None for e in tr.events if type(e) is ev.OpEnd for s in e.outputs)
    loaded = tf.load_trace(path)
    assert len(loaded) == total
    assert [e.seq for e in loaded[-window:]] == [e.seq for e in tr.events]
    if capture == "full":
        assert loaded[-2].outputs[0].value == np.float32(50)  # values are in the files
    else:
        assert list(tr.events) == loaded[-window:]


def test_a_streamed_summary_trace_keeps_no_event_alive_until_its_window_is_read(tmp_path):
    """The window keeps written lines, not events, until ``tr.events`` is read: events kept
    alive would go through the collector's older generations and bring its full passes
    over the program's whole heap sooner. Read, the window is the file's last events."""
    import gc
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        y = x
        for _ in range(20):
            y = tf.numpy_function(lambda v: v * np.float32(2), [y], tf.float32)

    def op_ends() -> int:
        gc.collect()
        return sum(type(o) is ev.OpEnd for o in gc.get_objects())

    path = tmp_path / "t.jsonl"
    before = op_ends()
    with tf.trace(path) as tr, tf.Session(graph=g) as sess:
        for i in range(30):
            sess.run(y, {x: np.float32(i)})
        during = op_ends()
    after = op_ends()
    assert during == before and after == before
    window = list(tr.events)
    assert op_ends() == before + 30 * 20
    assert window == list(tf.load_trace(path)) and len(window) == 30 * 42
    assert window[-2].outputs[0].max == 29.0 * 2 ** 20


def test_the_default_window_is_documented():
    assert recorder.RECENT_EVENTS == 10_000
    page = pathlib.Path(__file__).resolve().parent.parent / "docs" / "tasks" / "traces.md"
    assert "most recent 10,000 events" in page.read_text()
