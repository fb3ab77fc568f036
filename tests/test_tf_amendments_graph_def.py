"""SPEC §2a: ``import_graph_def`` validates its input, and ``resolve_functions``
binds only plain functions under exactly their recorded name (TF#51 and beyond)."""
from __future__ import annotations

import copy
import json
import os
import sys
import types

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug.serialize import _resolve


def module_level_double(a):
    return a * 2


def _graph_def():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (), name="x")
        c = tf.constant(2.0, name="c")
        y = tf.multiply(x, c, name="y")
        tf.identity(y, name="out")
    return json.loads(json.dumps(g.as_graph_def()))


def _import(d, **kw):
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(d, **kw)
    return g


def _node(d, name):
    return next(n for n in d["node"] if n["name"] == name)


def test_a_valid_definition_imports_in_any_node_order():
    d = _graph_def()
    d["node"].reverse()
    g = _import(d)
    with tf.compat.v1.Session(graph=g) as sess:
        assert sess.run("import/out:0", {"import/x:0": 3.0}) == pytest.approx(6.0)


@pytest.mark.parametrize("mutate, pattern", [
    (lambda d: _node(d, "y").pop("op"), "'y'.*missing key 'op'"),
    (lambda d: _node(d, "y").update(op="NoSuchOp"), "'y'.*unknown op type"),
    (lambda d: _node(d, "y").update(input=["x:0", "ghost:0"]), "'y'.*ghost"),
    (lambda d: _node(d, "y").update(input=["x:0", "c:5"]), "'y'"),
    (lambda d: _node(d, "y").update(input="x:0"), "'y'.*list"),
    (lambda d: _node(d, "out").update(input=["y"]), "'out'.*op:index"),
    (lambda d: _node(d, "c").update(input=["out:0"]), "cycle"),
    (lambda d: _node(d, "x").update(attr={}), "'x'"),
    (lambda d: _node(d, "c")["attr"].update(dtype={"dtype": "int32"}), "'c'"),
    (lambda d: _node(d, "c")["attr"].update(value={"tensor": {"dtype": "nope"}}), "'c'"),
    (lambda d: _node(d, "y").update(source="here"), "'y'.*source"),
    (lambda d: d["node"].append(dict(_node(d, "y"))), "'y'.*two nodes"),
    (lambda d: d["node"].append(["not", "a", "dict"]), "node #4"),
    (lambda d: d.pop("node"), "node"),
])
def test_malformed_definitions_raise_value_error_naming_the_node(mutate, pattern):
    d = _graph_def()
    mutate(d)
    with pytest.raises(ValueError, match=pattern):
        _import(d)


def test_a_runtime_attr_problem_is_caught_at_import_not_in_session_run():
    d = _graph_def()
    del _node(d, "y")["attr"]  # fine for Mul (no attrs needed)
    _import(d)
    d = copy.deepcopy(_graph_def())
    _node(d, "x")["attr"].pop("shape")
    with pytest.raises(ValueError, match="'x'"):
        _import(d)


# ----------------------------------------------------- resolve_functions

def test_resolve_binds_a_plain_module_level_function():
    assert _resolve(f"{__name__}:module_level_double") is module_level_double


@pytest.mark.parametrize("qualname", [
    "posix:system", "os:system", "os:popen", "builtins:eval", "subprocess:run",
    "os:path.os.system", f"{__name__}:os.system", f"{__name__}:np.sinh",
    f"{__name__}:module_level_double.__call__", "numpy:sinh", f"{__name__}:<lambda>",
    f"{__name__}:", ":x", "no_such_module_xyz:f",
])
def test_resolve_refuses_anything_else(qualname):
    assert _resolve(qualname) is None


def test_resolve_refuses_a_function_bound_under_another_name():
    mod = types.ModuleType("pfd_test_alias_module")
    mod.alias = module_level_double  # its own qualname/module differ
    sys.modules[mod.__name__] = mod
    try:
        assert _resolve("pfd_test_alias_module:alias") is None
    finally:
        del sys.modules[mod.__name__]


def test_crafted_graph_cannot_bind_a_shell_command(tmp_path):
    marker = tmp_path / "ran"
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.py_func(module_level_double, [tf.constant(1.0)], tf.float32, name="evil")
    d = json.loads(json.dumps(g.as_graph_def()))
    evil = _node(d, "evil")
    evil["attr"]["token"] = "pyfunc_never_registered"
    evil["attr"]["func_name"] = "posix:system"
    evil["input"] = ["cmd:0"]
    evil["attr"]["Tin"] = {"tuple": [{"dtype": "string"}]}
    d["node"].insert(0, {"name": "cmd", "op": "Const", "input": [], "device": "",
                         "attr": {"dtype": {"dtype": "string"},
                                  "value": _node(json.loads(json.dumps(
                                      _string_const(f"touch {marker}"))), "s")["attr"]["value"]},
                         "source": ["<crafted>", 1, ""]})
    g2 = _import(d, resolve_functions=True)
    with tf.compat.v1.Session(graph=g2) as sess:
        with pytest.raises(tf.errors.OpError, match="not registered"):
            sess.run("import/evil:0")
    assert not os.path.exists(marker)


def _string_const(text):
    g = tf.Graph()
    with g.as_default():
        tf.constant(text, name="s")
    return g.as_graph_def()


def test_resolve_functions_docstring_warns_about_imports():
    doc = tf.import_graph_def.__doc__
    assert "imports the" in doc and "trust" in doc


def test_imported_graph_runs_with_the_rebound_function():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (), name="x")
        tf.compat.v1.py_func(module_level_double, [x], tf.float32, name="dbl")
    d = json.loads(json.dumps(g.as_graph_def()))
    _node(d, "dbl")["attr"]["token"] = "pyfunc_fresh_token_for_test"
    g2 = _import(d, resolve_functions=True)
    with tf.compat.v1.Session(graph=g2) as sess:
        assert sess.run("import/dbl:0", {"import/x:0": np.float32(4)}) == pytest.approx(8.0)
