"""Structural checks of a graph definition before ``import_graph_def`` builds it.

Every problem is a ``ValueError`` naming the node: missing or mistyped keys,
duplicate names, unknown op types, inputs naming no node, attributes nested
deeper than ``MAX_ATTR_DEPTH``, and cycles. The nodes come back in an order
where each follows what it refers to. Every step is linear in the size of the
definition and none recurses, so no input can exhaust time or the stack.
"""
from __future__ import annotations

from typing import NamedTuple

from .ops.registry import REGISTRY

__all__ = ["check_graph_def", "Node", "MAX_ATTR_DEPTH"]

MAX_ATTR_DEPTH = 32  # as_graph_def writes at most a few levels (a tuple of tensors)


def _fail(node_name, problem) -> ValueError:
    return ValueError(f"import_graph_def: node {str(node_name)[:200]!r}: {problem}")


class Node(NamedTuple):
    """One checked node: its keys, with their defaults filled in."""

    name: str
    op: str
    input: list           # or an empty tuple
    attr: dict
    device: str
    source: list


_STR = {str}
_EMPTY: tuple = ()     # no inputs
_NO_ATTR: dict = {}    # shared, never written: attributes are decoded into a new dict
_NO_SOURCE = ["<unknown>", 0, ""]


def _check_node(i, node) -> Node:
    if not isinstance(node, dict):
        raise ValueError(f"import_graph_def: node #{i} is a {type(node).__name__}, not a dict.")
    get = node.get
    name = get("name")
    if type(name) is not str or not name:
        raise ValueError(f"import_graph_def: node #{i} has no name (a non-empty string).")
    op = get("op")
    if type(op) is not str:
        raise _fail(name, "missing key 'op' (the op type, a string).")
    if op not in REGISTRY:
        raise _fail(name, f"unknown op type {op[:100]!r}.")
    inputs = get("input", _EMPTY)
    # set(map(type, ...)) runs in C: far cheaper than all() over a generator
    if inputs is not _EMPTY and (not isinstance(inputs, list) or inputs and (
            set(map(type, inputs)) != _STR or "" in inputs)):
        raise _fail(name, "'input' must be a list of tensor names ('op:i' or '^op').")
    attr = get("attr", _NO_ATTR)
    if attr is not _NO_ATTR and (not isinstance(attr, dict) or attr and
                                 set(map(type, attr)) != _STR):
        raise _fail(name, "'attr' must be a dict keyed by attribute name.")
    device = get("device", "")
    if type(device) is not str:
        raise _fail(name, "'device' must be a string.")
    source = get("source", _NO_SOURCE)
    if not (type(source) is list and len(source) == 3 and type(source[0]) is str and
            type(source[1]) is int and type(source[2]) is str):
        raise _fail(name, "'source' must be [file, line, function].")
    return Node(name, op, inputs, attr, device, source)


def _attr_refs(name: str, attr: dict) -> list:
    """Names of ops the attributes refer to (``{"op": name}``, possibly nested), walked
    with an explicit stack; nesting beyond ``MAX_ATTR_DEPTH`` is refused."""
    out: list = []
    stack = [(key, value, 1) for key, value in attr.items()]
    while stack:
        key, value, depth = stack.pop()
        if isinstance(value, dict):
            if set(value) == {"op"} and isinstance(value["op"], str):
                out.append(value["op"])
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth >= MAX_ATTR_DEPTH:
            raise _fail(name, f"attribute {key[:100]!r} is nested more than "
                        f"{MAX_ATTR_DEPTH} levels deep.")
        stack.extend((key, v, depth + 1) for v in children)
    return out


def _deps(node: Node, names) -> list:
    deps = []
    for ref in node.input:
        if ref[0] == "^":
            target = ref[1:]
        else:
            target, colon, index = ref.rpartition(":")
            if not colon or not index.isdigit():
                raise _fail(node.name, f"input {ref[:200]!r} is not of the form 'op:index'.")
        if target not in names:
            raise _fail(node.name, f"input {ref[:200]!r} names no node of this graph "
                        "definition.")
        deps.append(target)
    if node.attr:
        for target in _attr_refs(node.name, node.attr):
            if target not in names:
                raise _fail(node.name, f"an attribute refers to op {target[:200]!r}, which "
                            "is not in this graph definition.")
            deps.append(target)
    return deps


def check_graph_def(graph_def) -> list:
    """The checked nodes of ``graph_def`` (``Node``s), each after the nodes it depends on."""
    if not isinstance(graph_def, dict) or not isinstance(graph_def.get("node"), list):
        raise ValueError("import_graph_def expects the dict made by Graph.as_graph_def() "
                         "(with a 'node' list).")
    nodes = [_check_node(i, n) for i, n in enumerate(graph_def["node"])]
    by_name: dict = {}
    for n in nodes:
        if n.name in by_name:
            raise _fail(n.name, "the name is used by two nodes.")
        by_name[n.name] = n
    deps = {n.name: _deps(n, by_name) for n in nodes}
    return [by_name[name] for name in _topological(nodes, deps)]


def _topological(nodes, deps) -> list:
    """Node names, each after its dependencies: depth first from each node in file order,
    without recursion; a node whose dependencies are all placed is placed at once (a
    definition already in order, as ``as_graph_def`` writes it, needs no search)."""
    order, done, visiting = [], set(), set()
    place, mark = order.append, done.add
    for root in nodes:
        name = root.name
        if name in done:
            continue
        if done.issuperset(deps[name]):
            place(name)
            mark(name)
            continue
        stack = [(name, iter(deps[name]))]
        visiting.add(name)
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                visiting.discard(name)
                place(name)
                mark(name)
            elif nxt in visiting:
                raise _fail(nxt, f"it is part of a cycle of inputs ({_cycle(stack, nxt)}).")
            elif nxt not in done:
                visiting.add(nxt)
                stack.append((nxt, iter(deps[nxt])))
    return order


def _cycle(stack, back_to: str) -> str:
    """The cycle ending at ``back_to`` as ``a -> b -> a``, its middle elided when long."""
    names = [n for n, _ in stack]
    names = names[len(names) - 1 - names[::-1].index(back_to):] + [back_to]
    if len(names) > 12:
        names = names[:5] + [f"... {len(names) - 10} more ..."] + names[-5:]
    return " -> ".join(n[:100] for n in names)
