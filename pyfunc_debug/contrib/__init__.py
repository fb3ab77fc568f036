"""``pfd.contrib.eager.py_func``: the TF 1.x alias of ``py_function``."""
from types import SimpleNamespace

from ..ops.script_ops import py_function

eager = SimpleNamespace(py_func=py_function)

__all__ = ["eager"]
