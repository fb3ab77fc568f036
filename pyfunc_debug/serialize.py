"""``as_graph_def`` / ``import_graph_def``: graphs as JSON-able dicts.

Python function bodies are not serialized (the seeds' documented limit): a
script op keeps its token and ``module:qualname``. On import it re-binds to a
function still registered in this process under that token, or — only with
``resolve_functions=True`` — to the module-level function of that name. Nothing
is ever unpickled or evaluated.
"""
from __future__ import annotations

import base64
import importlib
import math
import sys
import types

import numpy as np

from .dtypes import DType, as_dtype
from .graph import graph as _graph_mod
from .graph.big_build import BIG, defer_full_collections
from .graph.graph import get_default_graph
from .graph.operation import Operation
from .graph.shape import TensorShape
from .graph.source import SourceLocation
from .graph_def_check import check_graph_def
from .ops.registry import check_attrs, check_types, lookup
from .ops.script_ops import Callback, callback_registry

__all__ = ["graph_to_dict", "import_graph_def", "GRAPH_DEF_VERSION"]

GRAPH_DEF_VERSION = 1
_SKIP_ATTRS = {"callback", "static_shape"}


def _encode_value(v):
    if isinstance(v, DType):
        return {"dtype": v.name}
    if isinstance(v, TensorShape):
        return {"shape": None if v.dims is None else list(v.dims)}
    if isinstance(v, Operation):
        return {"op": v.name}
    if isinstance(v, (np.ndarray, np.generic, bytes)):
        arr = np.asarray(v, dtype=object if isinstance(v, bytes) else None)
        if arr.dtype.kind == "O":
            values = [base64.b64encode(b).decode("ascii") for b in arr.reshape(-1)]
            return {"tensor": {"dtype": "string", "shape": list(arr.shape), "b64": values}}
        return {"tensor": {"dtype": as_dtype(arr.dtype).name, "shape": list(arr.shape),
                           "values": arr.reshape(-1).tolist()}}
    if isinstance(v, tuple):
        return {"tuple": [_encode_value(x) for x in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"cannot serialize attr value {v!r}")


def _decode_value(v, ops_by_name):
    """An attribute's value from its JSON form (nesting bounded by ``check_graph_def``)."""
    if not isinstance(v, dict):
        return v
    if "dtype" in v and len(v) == 1:
        return as_dtype(v["dtype"])
    if "shape" in v and len(v) == 1:
        return TensorShape(_dims(v["shape"]))
    if "op" in v:
        return ops_by_name[v["op"]]
    if "tuple" in v and isinstance(v["tuple"], list):
        return tuple(_decode_value(x, ops_by_name) for x in v["tuple"])
    if "tensor" in v and isinstance(v["tensor"], dict):
        return _decode_tensor(v["tensor"])
    raise ValueError(f"unknown attr encoding {str(v)[:100]}")


_MAX_DIM = 1 << 62


def _dims(dims):
    """A shape's dims: ``None`` (unknown rank) or a list of sizes, ``None``/-1 unknown."""
    if dims is None:
        return None
    if not isinstance(dims, list) or not all(
            d is None or type(d) is int and -1 <= d < _MAX_DIM for d in dims):
        raise ValueError(f"a shape is null or a list of sizes (integers >= -1), "
                         f"not {str(dims)[:100]}")
    return dims


def _decode_tensor(t: dict):
    dtype = t.get("dtype")
    if not isinstance(dtype, str):
        raise ValueError(f"a tensor's 'dtype' must be a string, not {str(dtype)[:40]}")
    dtype = as_dtype(dtype)
    shape = _dims(t.get("shape"))
    if shape is None or None in shape or -1 in shape:
        raise ValueError(f"a tensor's 'shape' must be fully known, not {shape}")
    if math.prod(shape) > _MAX_DIM:
        raise ValueError(f"a tensor's shape {shape} is too large")
    if dtype.is_string:
        b64 = t.get("b64")
        if not isinstance(b64, list) or not all(isinstance(s, str) for s in b64):
            raise ValueError("a string tensor's 'b64' must be a list of base64 strings")
        flat = np.empty(len(b64), dtype=object)
        flat[:] = [base64.b64decode(s, validate=True) for s in b64]
    else:
        values = t.get("values")
        if not isinstance(values, list) or not all(type(x) in _SCALARS for x in values):
            raise ValueError("a tensor's 'values' must be a flat list of numbers")
        flat = _fitting(values, dtype)
    if flat.size != math.prod(shape):
        raise ValueError(f"a tensor of shape {shape} holds {math.prod(shape)} values, "
                         f"not {flat.size}")
    arr = flat.reshape(shape)
    return arr[()] if arr.ndim == 0 else arr


_SCALARS = (bool, int, float, complex)


def _fitting(values: list, dtype):
    """``values`` as an array of ``dtype``; ``ValueError`` naming one that does not fit
    (``np.asarray`` would raise ``OverflowError``, or silently wrap or round)."""
    want = dtype.np_dtype
    try:
        with np.errstate(over="ignore"):   # a float beyond the dtype's range: inf, as in TF
            flat = np.asarray(values, dtype=want)
    except (OverflowError, TypeError, ValueError):
        flat = None
    if flat is not None and (want.kind not in "iub" or _exact(values, flat)):
        return flat
    for x in values:   # name the first value that does not fit
        try:
            one = np.asarray([x], dtype=want)
        except (OverflowError, TypeError, ValueError):
            one = None
        if one is None or want.kind in "iub" and one[0] != x:
            raise ValueError(f"value {str(x)[:40]} does not fit the tensor's dtype "
                             f"{dtype.name}")
    raise ValueError(f"the values do not fit the tensor's dtype {dtype.name}")


def _exact(values: list, flat) -> bool:
    """Whether integer/bool ``flat`` holds ``values`` unchanged (no float truncated to an
    int, no number taken as ``True``)."""
    return flat.tolist() == values if flat.dtype.kind != "b" else \
        all(type(x) is bool for x in values)


def graph_to_dict(graph) -> dict:
    nodes = []
    for op in graph.get_operations():
        nodes.append({
            "name": op.name, "op": op.type, "device": op.device,
            "input": [t.name for t in op.inputs] + [f"^{c.name}" for c in op.control_inputs],
            "attr": {k: _encode_value(v) for k, v in op.attrs.items() if k not in _SKIP_ATTRS},
            "source": op.source.to_json(),
        })
    return {"versions": {"producer": GRAPH_DEF_VERSION}, "node": nodes}


def _resolve(qualname: str):
    """The plain function ``module:qualname`` names, or ``None``.

    Only a Python function (not a builtin, class or other callable) whose own
    ``__module__`` and ``__qualname__`` equal the recorded ones; the path is
    looked up in the module's and its classes' own namespaces (no ``getattr``
    chains through other objects or modules); standard-library modules are
    never used, so a crafted file cannot bind ``os:system`` or ``builtins:eval``.
    """
    module_name, _, attr_path = qualname.partition(":")
    parts = attr_path.split(".")
    if not all(p.isidentifier() for p in parts) or \
            not all(p.isidentifier() for p in module_name.split(".")):
        return None  # <locals>, <lambda>, empty names
    if module_name.split(".")[0] in _REFUSED_MODULES:
        return None
    try:
        obj = importlib.import_module(module_name)
    except Exception:  # noqa: BLE001 - an import that fails leaves the op unbound
        return None
    for i, part in enumerate(parts):
        obj = vars(obj).get(part) if hasattr(obj, "__dict__") else None
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if i < len(parts) - 1 and not (isinstance(obj, type) and obj.__module__ == module_name):
            return None  # only classes of that module lie on the path
    if not isinstance(obj, types.FunctionType):
        return None
    if obj.__module__ != module_name or obj.__qualname__ != attr_path:
        return None
    return obj


_REFUSED_MODULES = frozenset(sys.stdlib_module_names) | {"builtins", "__builtin__"}


def _callback_for(attrs, resolve_functions):
    cb = callback_registry.get(attrs["token"])
    if cb is not None:
        return cb
    if resolve_functions:
        func = _resolve(str(attrs.get("func_name", "")))
        if func is not None:
            cb = Callback(func, attrs["token"], attrs["func_name"])
            callback_registry.setdefault(attrs["token"], cb)
            return cb
    return None


def import_graph_def(graph_def, input_map=None, return_elements=None, name="import",
                     resolve_functions=False):
    """Rebuild ``graph_def`` into the default graph, names prefixed ``name/``.

    The definition is checked first: a node with missing or mistyped keys, an
    unknown op type, an input naming no node (or no such output), or a cycle
    raises ``ValueError`` naming the node. Nodes may come in any order.

    ``resolve_functions=True`` re-binds wrapped functions not registered in
    this process by their recorded ``module:qualname``: it **imports the
    modules the file names** (running their top-level code), then binds only a
    plain function defined there under exactly that name (never a builtin or a
    standard-library function). Use it only on graph definitions you trust.
    """
    nodes = check_graph_def(graph_def)
    graph = get_default_graph()
    if len(nodes) >= BIG:  # what create_op does from its BIG-th op on, from the first
        defer_full_collections()
    prefix = f"{name}/" if name else ""
    input_map = {k if ":" in k else f"{k}:0": v for k, v in (input_map or {}).items()}
    ops_by_name, tensors = {}, {}
    for node in nodes:
        try:
            op = _import_node(node, graph, prefix, input_map, ops_by_name, tensors,
                              resolve_functions)
        except Exception as e:  # noqa: BLE001 - whatever the file holds: one ValueError
            raise ValueError(f"import_graph_def: node {node.name[:200]!r} ({node.op}): "
                             f"{type(e).__name__}: {str(e)[:500]}") from e
        ops_by_name[node.name] = op
        for i, t in enumerate(op.outputs):
            tensors[f"{node.name}:{i}"] = t
    if return_elements is None:
        return None
    out = []
    for r in return_elements:
        found = tensors.get(r) if ":" in str(r) else ops_by_name.get(r)
        if found is None:
            raise ValueError(f"import_graph_def: return element {r!r} is not in the graph.")
        out.append(found)
    return out


def _import_node(node, graph, prefix, input_map, ops_by_name, tensors, resolve_functions):
    op_def = lookup(node.op)
    inputs, controls = [], []
    for ref in node.input:
        if ref[0] == "^":
            controls.append(ops_by_name[ref[1:]])
        else:
            inputs.append(input_map[ref] if ref in input_map else tensors[ref])
    attrs = {k: _decode_value(v, ops_by_name) for k, v in node.attr.items()}
    if "token" in attrs and not attrs.get("is_grad"):
        cb = _callback_for(attrs, resolve_functions)
        attrs["callback"] = cb
        if cb is not None:
            graph._keep_alive(cb)
    check_attrs(op_def, attrs)
    check_types(op_def, inputs, eager=False)
    specs = _out_specs(op_def, attrs, inputs)
    source = SourceLocation(*node.source)
    if controls:
        with graph.control_dependencies(controls):
            op = graph.create_op(op_def, inputs, attrs, prefix + node.name, specs, source)
    else:  # most nodes: the context manager would cost as much as making the op
        op = graph.create_op(op_def, inputs, attrs, prefix + node.name, specs, source)
    op.device = node.device  # the node's own, whatever device block is around the import
    # build the kernel now: a definition it cannot run with fails here, naming the node
    op_def.bind(op) if op_def.bind is not None else op_def.kernel(op.attrs)
    if op_def.cse_key is not None:
        op_def.cse_key(op)
    if attrs.get("is_grad"):
        fwd = attrs["forward"]
        fwd._grad_consumers = fwd._grad_consumers + (op,)
    return op


def _out_specs(op_def, attrs, inputs):
    if op_def.name == "Placeholder":
        return [(attrs["dtype"], attrs["shape"])]
    specs = op_def.infer(attrs, inputs)
    if op_def.name == "Const":
        value = np.asarray(attrs["value"])
        want = attrs["dtype"].np_dtype
        if value.dtype != want and not (attrs["dtype"].is_string and value.dtype.kind in "OSU"):
            raise TypeError(f"Const value of dtype {value.dtype} does not match its dtype "
                            f"attr {attrs['dtype'].name}")
    return specs


_graph_mod.graph_def_writer = graph_to_dict
