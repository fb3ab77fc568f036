"""pyfunc-debug: TensorFlow's graph model around its Python-function ops, in numpy.

``import pyfunc_debug as tf`` runs TensorFlow's documented examples for
``compat.v1.py_func``, ``numpy_function`` and ``py_function`` unchanged.
Public names only; see SPEC §2 and README.md.
"""
from __future__ import annotations

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
from .autodiff import gradients
from .runtime.session import Session
from .runtime.function import function
from .serialize import import_graph_def
from . import compat, contrib, debug, events, math, nn
from . import distributed as _distributed  # noqa: F401  (registers Session(cluster=...))
from .trace.recorder import trace
from .trace.jsonl import load_trace
from .trace.diff import diff_traces

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
