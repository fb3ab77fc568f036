"""``pfd.compat.v1``: TensorFlow 1.x names (graphs, placeholders, sessions, py_func)."""
from __future__ import annotations

from ..graph.graph import (Graph, disable_eager_execution, enable_eager_execution,
                           get_default_graph, reset_default_graph, name_scope,
                           control_dependencies, device, executing_eagerly)
from ..ops.array_ops import placeholder
from ..ops.script_ops import numpy_function, py_func, py_function
from ..runtime.session import InteractiveSession, Session, get_default_session
from ..ops.convert import constant, convert_to_tensor
from ..ops.variables import Variable, global_variables_initializer, variables_initializer

__all__ = ["Graph", "placeholder", "py_func", "numpy_function", "py_function", "Session",
           "InteractiveSession", "get_default_session", "gradients", "get_default_graph",
           "reset_default_graph", "disable_eager_execution", "enable_eager_execution",
           "name_scope", "control_dependencies", "device", "executing_eagerly", "constant",
           "convert_to_tensor", "global_variables_initializer", "variables_initializer",
           "Variable"]


def __getattr__(name: str):
    if name == "gradients":   # autodiff loads on first use, not with `import pyfunc_debug`
        from ..autodiff import gradients
        globals()["gradients"] = gradients
        return gradients
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
