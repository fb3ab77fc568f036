"""Structural checks of a graph definition before ``import_graph_def`` builds it.

Every problem is a ``ValueError`` naming the node: missing or mistyped keys,
duplicate names, unknown op types, inputs naming no node, and cycles. The
nodes come back in an order where each follows what it refers to.
"""
from __future__ import annotations

from .ops.registry import REGISTRY

__all__ = ["check_graph_def"]

_SOURCE_TYPES = (str, int, str)


def _fail(node_name, problem) -> ValueError:
    return ValueError(f"import_graph_def: node {node_name!r}: {problem}")


def _check_node(i, node) -> dict:
    if not isinstance(node, dict):
        raise ValueError(f"import_graph_def: node #{i} is a {type(node).__name__}, not a dict.")
    name = node.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"import_graph_def: node #{i} has no name (a non-empty string).")
    op = node.get("op")
    if not isinstance(op, str):
        raise _fail(name, "missing key 'op' (the op type, a string).")
    if op not in REGISTRY:
        raise _fail(name, f"unknown op type {op!r}.")
    inputs = node.get("input", [])
    if not isinstance(inputs, list) or not all(isinstance(r, str) and r for r in inputs):
        raise _fail(name, "'input' must be a list of tensor names ('op:i' or '^op').")
    attr = node.get("attr", {})
    if not isinstance(attr, dict) or not all(isinstance(k, str) for k in attr):
        raise _fail(name, "'attr' must be a dict keyed by attribute name.")
    device = node.get("device", "")
    if not isinstance(device, str):
        raise _fail(name, "'device' must be a string.")
    source = node.get("source", ["<unknown>", 0, ""])
    if not (isinstance(source, list) and len(source) == 3 and
            all(isinstance(v, t) and not isinstance(v, bool)
                for v, t in zip(source, _SOURCE_TYPES))):
        raise _fail(name, "'source' must be [file, line, function].")
    return {"name": name, "op": op, "input": inputs, "attr": attr, "device": device,
            "source": source}


def _attr_refs(value, out: list) -> None:
    """Names of ops an attribute refers to (``{"op": name}``, possibly nested)."""
    if isinstance(value, dict):
        if set(value) == {"op"} and isinstance(value["op"], str):
            out.append(value["op"])
        for v in value.values():
            _attr_refs(v, out)
    elif isinstance(value, list):
        for v in value:
            _attr_refs(v, out)


def _deps(node, names: set) -> list:
    deps = []
    for ref in node["input"]:
        target = ref[1:] if ref.startswith("^") else ref.rpartition(":")[0]
        if not ref.startswith("^"):
            index = ref.rpartition(":")[2]
            if not ref.rpartition(":")[1] or not index.isdigit():
                raise _fail(node["name"], f"input {ref!r} is not of the form 'op:index'.")
        if target not in names:
            raise _fail(node["name"], f"input {ref!r} names no node of this graph definition.")
        deps.append(target)
    refs: list = []
    _attr_refs(node["attr"], refs)
    for target in refs:
        if target not in names:
            raise _fail(node["name"], f"an attribute refers to op {target!r}, which is not in "
                        "this graph definition.")
        deps.append(target)
    return deps


def check_graph_def(graph_def) -> list:
    """The checked nodes of ``graph_def``, each after the nodes it depends on."""
    if not isinstance(graph_def, dict) or not isinstance(graph_def.get("node"), list):
        raise ValueError("import_graph_def expects the dict made by Graph.as_graph_def() "
                         "(with a 'node' list).")
    nodes = [_check_node(i, n) for i, n in enumerate(graph_def["node"])]
    by_name: dict = {}
    for n in nodes:
        if n["name"] in by_name:
            raise _fail(n["name"], "the name is used by two nodes.")
        by_name[n["name"]] = n
    deps = {n["name"]: _deps(n, set(by_name)) for n in nodes}
    return _topological(nodes, deps)


def _topological(nodes, deps) -> list:
    order, state = [], {}  # state: 1 visiting, 2 done
    for root in nodes:
        if state.get(root["name"]) == 2:
            continue
        stack = [(root["name"], iter(deps[root["name"]]))]
        state[root["name"]] = 1
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[name] = 2
                order.append(name)
            elif state.get(nxt) == 1:
                raise _fail(nxt, "it is part of a cycle of inputs "
                            f"({' -> '.join(n for n, _ in stack)} -> {nxt}).")
            elif state.get(nxt) is None:
                state[nxt] = 1
                stack.append((nxt, iter(deps[nxt])))
    by_name = {n["name"]: n for n in nodes}
    return [by_name[name] for name in order]
