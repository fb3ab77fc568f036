"""The newcomer examples give their real results (small sizes; each also runs as a script
in tests/test_examples.py)."""
from __future__ import annotations

import json
import pathlib
import runpy

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="example")


def test_nan_hunt_finds_the_producer_far_upstream():
    mod = _load("nan_hunt")
    out = mod["main"](size=60)
    assert np.isnan(out["loss"])
    assert out["n_ops"] >= 50
    # exactly one op made the NaN: the named numpy_function, not the ops passing it on
    assert [f["op"] for f in out["found"]] == ["features/log_intensity"]
    assert out["producer"] == "features/log_intensity"
    found = out["found"][0]
    assert found["type"] == "PyFunc"
    assert found["index"] == 40                      # the dropout reading, 2/3 of the way in
    assert found["input"] < 0                        # log of a negative value
    assert "nan_hunt.py" in found["source"]


def test_train_mlp_learns_through_the_py_function_loss():
    losses = _load("train_mlp")["main"](steps=200, every=100)
    assert len(losses) == 201
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0] / 10
    assert losses[-1] < min(losses[:50])


def test_text_pipeline_reports_exactly_the_malformed_record():
    out = _load("text_pipeline")["main"]()
    names = [r["name"] for r in out["records"]]
    assert len(names) == 7 and b"Ada Lovelace" in names and b"Edsger Dijkstra" not in names
    ada = out["records"][names.index(b"Ada Lovelace")]
    assert ada["age"] == 36 and ada["age"].dtype == np.int32
    assert ada["score"] == np.float32(9.5)
    assert list(ada["tokens"]) == [b"ada", b"lovelace"] and ada["n_tokens"] == 2
    assert ada["per_decade"] == np.float32(9.5) / np.float32(3.6)
    assert len(out["errors"]) == 1
    err = out["errors"][0]
    assert err["index"] == 3
    assert err["op"] == "parse/parse_record"
    assert err["record"] == b"Edsger Dijkstra,seventy-two,8.7"
    assert "seventy-two" in err["message"]
    assert out["vocabulary"]["alan"] == 2 and "edsger" not in out["vocabulary"]


def test_mutation_bug_is_caught_by_guard_mutation():
    out = _load("mutation_bug")["main"]()
    # the consequence: the caller's fed array changed and the same run gave two answers
    assert out["results"] == [12.0, 24.0]
    assert out["data"].tolist() == [4.0, 8.0, 12.0]
    assert len(out["warnings"]) == 2
    for w in out["warnings"]:
        assert w.op == "double" and w.category == "mutation"
        assert "'double'" in w.message and "input 0" in w.message
    assert out["fixed_results"] == [12.0, 12.0]
    assert out["fixed_data"].tolist() == [1.0, 2.0, 3.0]
    assert out["fixed_warnings"] == []


def test_parallel_branches_same_result_faster_and_traced_per_thread(tmp_path):
    path = tmp_path / "parallel.json"
    out = _load("parallel_branches")["main"](delay=0.03, trace_path=str(path), repeats=2)
    assert out["same"]
    assert out["sequential"] == out["parallel"] == out["traced"]
    assert out["parallel_s"] < out["sequential_s"] * 0.75   # 4 x 30 ms overlap to ~30 ms
    assert len(set(out["branch_threads"].values())) > 1
    doc = json.loads(path.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    branch_slices = [e for e in events if e["ph"] == "X" and e["name"].startswith("branch_")]
    assert len(branch_slices) == 4
    assert len({e["tid"] for e in branch_slices}) > 1
    named = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {e["tid"] for e in branch_slices} <= named
