"""pyfunc-debug: TensorFlow's graph model around its Python-function ops, in numpy.

``import pyfunc_debug as tf`` runs TensorFlow's documented examples for
``compat.v1.py_func``, ``numpy_function`` and ``py_function`` unchanged.
Public names only; see SPEC §2 and README.md.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import errors
from .dtypes import (DType, as_dtype, bool, complex64, complex128, float16, float32,  # noqa: A004
                     float64, int8, int16, int32, int64, string, uint8, uint16, uint32, uint64)
from .graph.graph import (Graph, control_dependencies, device, executing_eagerly,
                          get_default_graph, name_scope, reset_default_graph)
from .graph.operation import Operation
from .graph.shape import TensorShape
from .graph.tensor import Tensor, TensorSpec
from .eager.tensor import EagerTensor
from .eager.tape import GradientTape
from .ops import overloads as _overloads  # noqa: F401  (installs the operators)
from .ops.convert import constant, convert_to_tensor
from .ops.array_ops import (group, identity, no_op, ones, ones_like, placeholder, reshape,
                            shape, transpose, where, zeros, zeros_like)
from .ops.math_ops import (abs, add, cast, divide, equal, exp, greater, greater_equal,  # noqa: A004
                           less, less_equal, matmul, maximum, minimum, multiply, negative,
                           not_equal, pow, reduce_max, reduce_mean, reduce_sum, sinh, sqrt,
                           square, subtract, tanh, truediv)
from .ops.script_ops import numpy_function, py_func, py_function
from .ops.variables import Variable
from .runtime.session import Session
from .runtime.function import function
from . import compat, contrib, events, math, nn
from .ops import debug_ops as _debug_ops  # noqa: F401  (registers the Breakpoint op type)
from .eager import tape as _tape
from .graph import graph as _graph_mod
from .runtime import hooks as _hooks

if TYPE_CHECKING:   # what __getattr__ below loads, for type checkers and the API docs
    from . import debug
    from .autodiff import gradients
    from .serialize import import_graph_def
    from .trace.diff import diff_traces
    from .trace.jsonl import load_trace
    from .trace.recorder import trace

# Loaded on first use (PEP 562), so `import pyfunc_debug` stays cheap: name -> (module, attr)
_LAZY = {"gradients": (".autodiff", "gradients"),
         "import_graph_def": (".serialize", "import_graph_def"),
         "trace": (".trace.recorder", "trace"),
         "load_trace": (".trace.jsonl", "load_trace"),
         "diff_traces": (".trace.diff", "diff_traces"),
         "debug": (".debug", None)}
# `pyfunc_debug.trace` is also a subpackage: loading any of it binds the name to the module,
# which must not hide the function (PEP 562 only asks for names that are missing)
globals().pop("trace", None)
globals().pop("debug", None)


def __getattr__(name: str):
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module 'pyfunc_debug' has no attribute {name!r}")
    import importlib
    module = importlib.import_module(found[0], __name__)
    value = module if found[1] is None else getattr(module, found[1])
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# The seams lower layers call, filled by modules loaded on first use (each installs its own
# function when imported, replacing these)
def _cluster(target):
    """Session(cluster=...) loads ``distributed`` only when a session asks for it."""
    from .distributed import cluster_executor
    return cluster_executor(target)


def _graph_def_writer(graph):
    from .serialize import graph_to_dict
    return graph_to_dict(graph)


def _backprop(*args, **kwargs):
    from .autodiff import backprop
    return backprop(*args, **kwargs)


if _hooks.cluster is None:
    _hooks.cluster = _cluster
if _graph_mod.graph_def_writer is None:
    _graph_mod.graph_def_writer = _graph_def_writer
if _tape._backprop is None:
    _tape.install_backprop(_backprop)

__version__ = "0.1.0"

__all__ = [
    "errors", "DType", "as_dtype", "bool", "float16", "float32", "float64", "int8", "int16",
    "int32", "int64", "string", "uint8", "uint16", "uint32", "uint64",
    "Graph", "Operation", "Tensor", "TensorShape", "TensorSpec", "EagerTensor",
    "control_dependencies", "device", "executing_eagerly", "get_default_graph", "name_scope",
    "reset_default_graph", "GradientTape", "constant", "convert_to_tensor", "group", "identity",
    "no_op", "ones", "ones_like", "placeholder", "reshape", "shape", "transpose", "where",
    "zeros", "zeros_like", "abs", "add", "cast", "divide", "equal", "exp", "greater",
    "greater_equal", "less", "less_equal", "matmul", "maximum", "minimum", "multiply",
    "negative", "not_equal", "pow", "reduce_max", "reduce_mean", "reduce_sum", "sinh", "sqrt",
    "square", "subtract", "tanh", "truediv", "numpy_function", "py_func", "py_function",
    "gradients", "Session", "function", "import_graph_def", "compat", "contrib", "math", "nn",
    "events", "trace", "load_trace", "diff_traces", "debug", "Variable", "complex64",
    "complex128",
]

# PYFUNC_DEBUG_LISTEN=HOST:PORT python script.py: serve the debugger (SPEC §7). The check
# is one lookup; sockets and threads exist only when the variable is set.
if __import__("os").environ.get("PYFUNC_DEBUG_LISTEN"):
    from .remote.listen import start_from_environment as _listen_from_env
    _listen_from_env()
