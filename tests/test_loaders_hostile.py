"""Loaders under hostile input (issue 25): a trace file, its value files, its origins
file and a graph definition, damaged by hand and by Hypothesis.

The property everywhere: a loader gives a result or raises one ``ValueError``
(a subclass at most) naming the line, node or field; a damaged value file
loads as ``None`` with one warning naming it; a damaged origins file gives one
warning and no origins. Nothing else escapes (``tokenize.TokenError``,
``OverflowError``, ``RecursionError``, ``KeyError`` ...).
"""
from __future__ import annotations

import copy
import json
import os
import pathlib
import shutil
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pyfunc_debug as pfd
from pyfunc_debug.cli import main
from pyfunc_debug.events import OpEnd
from pyfunc_debug.trace.jsonl import origins_path, values_dir

# ----------------------------------------------------- a trace to damage


def _record(folder: pathlib.Path) -> pathlib.Path:
    """A ``capture="full"`` trace: float, string and scalar values, each in a value file."""
    path = folder / "t.jsonl"
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, [3], name="x")
        y = pfd.numpy_function(lambda a: a * np.float32(2), [x], pfd.float32, name="double")
        s = pfd.numpy_function(lambda a: np.array([b"a", b"bc"], dtype=object), [y],
                               pfd.string, name="words")
        n = pfd.numpy_function(lambda a: np.int64(a.size), [s], pfd.int64, name="count")
    with pfd.trace(path, capture="full"), pfd.compat.v1.Session(graph=g) as sess:
        sess.run(n, {x: np.arange(3, dtype=np.float32)})
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("base")
    path = _record(folder)
    values = sorted(os.listdir(values_dir(path)))
    assert len(values) >= 6
    return path, values


def _copy(base_path, into) -> pathlib.Path:
    into = pathlib.Path(into)
    shutil.copy(base_path, into / "t.jsonl")
    shutil.copytree(values_dir(base_path), values_dir(into / "t.jsonl"))
    return into / "t.jsonl"


def _load(path):
    """``load_trace(path)`` and the messages of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = pfd.load_trace(path)
    return trace, [str(w.message) for w in caught]


def _values(trace) -> dict:
    """key -> value of every summary that names a value file (``None``: not loaded)."""
    out = {}
    for e in trace:
        if type(e) is OpEnd:
            for i, s in enumerate(e.inputs):
                out[f"{e.seq}-in{i}"] = s.value
            for i, s in enumerate(e.outputs):
                out[f"{e.seq}-out{i}"] = s.value
    return out


# ----------------------------------------------------- value files, by hand

HEADER_DAMAGE = {
    "unbalanced header": lambda b: b.replace(b"{'descr'", b"{'descr'(", 1),
    "not a dict": lambda b: b.replace(b"{'descr'", b"['descr'", 1),
    "nested brackets": lambda b: b[:10] + b"(" * 60 + b[70:],
    "shape beyond int64": lambda b: b.replace(b"'shape': (", b"'shape': (99999999999999999999999, ", 1),
    "negative shape": lambda b: b.replace(b"'shape': (", b"'shape': (-3, ", 1),
    "object dtype": lambda b: b.replace(b"'descr': '", b"'descr': '|O', 'x': '", 1),
    "unicode dtype": lambda b: b.replace(b"'descr': '", b"'descr': '<U1', 'x': '", 1),
    "bad version": lambda b: b[:6] + b"\x07\x00" + b[8:],
    "header length": lambda b: b[:8] + b"\xff\xff" + b[10:],
    "torn": lambda b: b[:len(b) // 2],
    "empty": lambda b: b"",
    "not numpy": lambda b: b"PK\x03\x04" + b[4:],
    # the parser warns of it (found by the fuzzer below): one warning, ours, not two
    "an escape in the header": lambda b: b.replace(b"'descr': '", b"'descr': '\\", 1),
}


@pytest.mark.parametrize("damage", sorted(HEADER_DAMAGE))
def test_a_damaged_value_file_loads_as_none_with_one_warning(base, tmp_path, damage):
    path = _copy(base[0], tmp_path)
    name = base[1][0]
    target = pathlib.Path(values_dir(path)) / name
    target.write_bytes(HEADER_DAMAGE[damage](target.read_bytes()))
    trace, said = _load(path)
    values = _values(trace)
    key = name[:-len(".npy")]
    assert values[key] is None
    assert [m for m in said if name in m] == said and len(said) == 1, said
    assert all(v is not None for k, v in values.items() if k != key)


def test_a_damaged_value_does_not_make_diff_differ(base, tmp_path, capsys):
    path = _copy(base[0], tmp_path)
    target = pathlib.Path(values_dir(path)) / base[1][0]
    target.write_bytes(HEADER_DAMAGE["unbalanced header"](target.read_bytes()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["diff", str(path), str(path)]) == 0
    assert "no difference" in capsys.readouterr().out


def test_a_directory_or_link_in_place_of_a_value_file(base, tmp_path):
    path = _copy(base[0], tmp_path)
    folder = pathlib.Path(values_dir(path))
    (folder / base[1][0]).unlink()
    (folder / base[1][0]).mkdir()
    (folder / base[1][1]).unlink()
    (folder / base[1][1]).symlink_to(folder / base[1][2])
    trace, said = _load(path)
    values = _values(trace)
    assert values[base[1][0][:-4]] is None and values[base[1][1][:-4]] is None
    assert len(said) == 2


# ----------------------------------------------------- value files, fuzzed

def _mutations(original: bytes):
    """Byte-level damage: truncation, overwriting, insertion, header-alphabet noise."""
    n = len(original)
    pos = st.integers(0, n)
    noise = st.binary(min_size=1, max_size=12) | st.text(
        "{}()[]',: 0123456789<>|fiuSUOVb-eTrueFalsdhp", min_size=1, max_size=12).map(str.encode)
    return st.one_of(
        pos.map(lambda i: original[:i]),
        st.tuples(pos, noise).map(lambda t: original[:t[0]] + t[1] + original[t[0] + len(t[1]):]),
        st.tuples(pos, noise).map(lambda t: original[:t[0]] + t[1] + original[t[0]:]),
        st.tuples(st.integers(0, 127), noise).map(
            lambda t: original[:t[0]] + t[1] + original[t[0] + 1:]),
    )


@given(data=st.data())
def test_mutated_value_files_load_or_read_as_none(base, data):
    path0, names = base
    name = data.draw(st.sampled_from(names))
    original = (pathlib.Path(values_dir(path0)) / name).read_bytes()
    damaged = data.draw(_mutations(original))
    with tempfile.TemporaryDirectory() as d:
        path = _copy(path0, d)
        (pathlib.Path(values_dir(path)) / name).write_bytes(damaged)
        trace, said = _load(path)
    value = _values(trace)[name[:-4]]
    if value is None:
        assert len(said) == 1 and name in said[0], said
    else:
        assert not said
        assert isinstance(value, (np.ndarray, np.generic, bytes)), type(value)


# ----------------------------------------------------- trace files, fuzzed

def _line_mutations(lines: list):
    i = st.integers(0, len(lines) - 1)
    junk = st.one_of(st.binary(max_size=40), st.sampled_from([
        b"[", b"]", b"{}", b"null", b'["OpEnd"]', b'["RunEnd",1,1,1,1,1,true]', b"[" * 5000,
        b'["OpStart",1,1,1,1,"a","b",null,"",[],"w",1]', b'["OpStart",1,1,1,1,"a","b",null,"",[],1,"w"]',
        b"1e999999", b"9" * 5000, b'"\\ud800"', b"\xff\xfe",
    ]))
    return st.one_of(
        st.tuples(i, junk).map(lambda t: lines[:t[0]] + [t[1]] + lines[t[0] + 1:]),
        st.tuples(i, junk).map(lambda t: lines[:t[0]] + [t[1]] + lines[t[0]:]),
        i.map(lambda k: lines[:k] + lines[k + 1:]),
        i.map(lambda k: lines[:k] + [lines[k]] * 2 + lines[k + 1:]),
        st.tuples(i, st.integers(0, 200), st.binary(min_size=1, max_size=3)).map(
            lambda t: lines[:t[0]] + [lines[t[0]][:t[1]] + t[2] + lines[t[0]][t[1] + 1:]]
            + lines[t[0] + 1:]),
    )


@given(data=st.data())
def test_mutated_trace_files_load_or_raise_one_value_error(base, data):
    path0, _ = base
    lines = pathlib.Path(path0).read_bytes().split(b"\n")
    damaged = b"\n".join(data.draw(_line_mutations(lines)))
    with tempfile.TemporaryDirectory() as d:
        path = _copy(path0, d)
        pathlib.Path(path).write_bytes(damaged)
        try:
            _load(path)
        except ValueError as e:
            assert f"{path}:" in str(e), str(e)[:300]


# ----------------------------------------------------- origins files

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12)
ORIGINS = st.one_of(
    JSON.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(["-1", "-2", "1", "x", "-1_0", "-" + "9" * 5000]),
                    st.one_of(JSON, st.tuples(st.text(max_size=5), st.integers(),
                                              st.text(max_size=5)).map(list)),
                    max_size=3).map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=60), st.just(b"[" * 100_000), st.just(b'{"-1": ["a", 1, "\\ud800"]}'),
)


@given(content=ORIGINS)
def test_any_origins_file_loads_or_gives_one_warning(base, content):
    path0, _ = base
    with tempfile.TemporaryDirectory() as d:
        path = _copy(path0, d)
        pathlib.Path(origins_path(path)).write_bytes(content)
        trace, said = _load(path)
    assert len(trace) > 0
    assert len(said) <= 1 and all("origins" in m for m in said), said


# ----------------------------------------------------- graph definitions, by hand

def _graph_def() -> dict:
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, [None], name="x")
        c = pfd.constant([1.0, 2.0], name="c")
        i = pfd.constant(np.int32(3), name="i")
        w = pfd.constant([b"a", b"b"], name="w")
        y = pfd.multiply(x, c, name="y")
        with pfd.control_dependencies([i.op, w.op]):
            pfd.numpy_function(lambda v: v, [y], [pfd.float32], name="f")
    return json.loads(json.dumps(g.as_graph_def()))


def _node(d, name):
    return next(n for n in d["node"] if n["name"] == name)


def _deep(depth: int, leaf=1):
    v = leaf
    for _ in range(depth):
        v = {"tuple": [v]}
    return v


@pytest.mark.parametrize("mutate, names", [
    (lambda d: _node(d, "i")["attr"]["value"]["tensor"].update(values=[1099511627776]),
     ["'i'", "1099511627776", "int32"]),
    (lambda d: _node(d, "i")["attr"]["value"]["tensor"].update(values=[1.5]), ["'i'", "1.5"]),
    (lambda d: _node(d, "c")["attr"]["value"]["tensor"].update(values=[1e300, 1]),
     None),   # inf in float32, as TF's constant gives
    (lambda d: _node(d, "c")["attr"]["value"]["tensor"].update(values=["a", "b"]), ["'c'"]),
    (lambda d: _node(d, "c")["attr"]["value"]["tensor"].update(shape=[-2]), ["'c'", "shape"]),
    (lambda d: _node(d, "c")["attr"]["value"]["tensor"].update(shape=[3]), ["'c'", "3"]),
    (lambda d: _node(d, "c")["attr"]["value"]["tensor"].update(shape=[2 ** 40] * 2),
     ["'c'", "shape"]),
    (lambda d: _node(d, "w")["attr"]["value"]["tensor"].update(b64=["!!"]), ["'w'"]),
    (lambda d: _node(d, "x")["attr"].update(shape={"shape": [float("inf")]}), ["'x'", "shape"]),
    (lambda d: _node(d, "y")["attr"].update(deep=_deep(1000)), ["'y'", "'deep'", "nested"]),
    (lambda d: _node(d, "f")["attr"].update(token=["unhashable"]), ["'f'"]),
    (lambda d: _node(d, "f")["attr"].update(Tout={"tuple": [{"dtype": "nope"}]}), ["'f'"]),
    (lambda d: _node(d, "f").update(source=["f", 10 ** 30, ""]), None),
])
def test_hostile_graph_definitions_raise_value_error_naming_the_node(mutate, names):
    d = _graph_def()
    mutate(d)
    with pfd.Graph().as_default():
        if names is None:
            pfd.import_graph_def(d)
            return
        with pytest.raises(ValueError) as info:
            pfd.import_graph_def(d)
    assert all(n in str(info.value) for n in names), str(info.value)[:300]


# ----------------------------------------------------- graph definitions, fuzzed

def _paths(value, at=()):
    """Places in a JSON structure, as (key, ...) tuples (the first 12 levels)."""
    yield at
    if len(at) >= 12:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, at + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, at + (i,))


REPLACEMENTS = st.one_of(
    JSON, st.integers(-2 ** 80, 2 ** 80), st.sampled_from([
        "x:0", "^x", "y:7", "c", "", "Const", "NoSuchOp", {"op": "x"}, {"op": "ghost"},
        {"dtype": "int8"}, {"shape": None}, {"shape": [-1, 2]}, {"tuple": []},
        {"tensor": {"dtype": "uint8", "shape": [1], "values": [-1]}},
        {"tensor": {"dtype": "bool", "shape": [], "values": [5]}},
        {"tensor": {"dtype": "string", "shape": [1], "b64": [7]}},
        float("nan"), float("inf"), [None], ["x:0", "x:0"],
    ]).map(copy.deepcopy), st.sampled_from([40, 5000]).map(_deep))


@given(data=st.data())
def test_mutated_graph_definitions_import_or_raise_value_error(data):
    d = _graph_def()
    for _ in range(data.draw(st.integers(1, 3))):
        places = list(_paths(d))[1:]
        if not places:   # the whole definition is a scalar now
            break
        where = data.draw(st.sampled_from(places))
        parent = d
        for k in where[:-1]:
            parent = parent[k]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[where[-1]]
        else:
            parent[where[-1]] = data.draw(REPLACEMENTS)
    with pfd.Graph().as_default():
        try:
            pfd.import_graph_def(d)
        except ValueError as e:
            msg = str(e)
            assert "node" in msg or "import_graph_def expects" in msg, msg[:300]
