"""``--tf`` / ``--jax`` for ``pyfunc-debug run`` and ``trace``: instrument before the script.

The framework adapters are imported only when asked for, so the command line
stays free of TensorFlow and JAX otherwise.
"""
from __future__ import annotations

import contextlib
import importlib
import os

__all__ = ["FRAMEWORK_OPTIONS", "instrumented", "FrameworkMissing"]

# option -> (adapter module, the pip extra that installs its framework)
FRAMEWORK_OPTIONS = {"--tf": ("pyfunc_debug.tensorflow", "tensorflow"),
                     "--jax": ("pyfunc_debug.jax", "jax")}


class FrameworkMissing(Exception):
    """An option asked for a framework that is not installed."""


def instrumented(opts: dict) -> contextlib.ExitStack:
    """A context manager instrumenting the frameworks ``opts`` names (``{"--tf": True}``).

    The adapters are imported here, so a missing framework raises
    ``FrameworkMissing`` before anything starts.
    """
    adapters = []
    for option, (module, extra) in FRAMEWORK_OPTIONS.items():
        if not opts.get(option):
            continue
        if option == "--tf":  # TF's C++ start-up chatter would bury our output
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        try:
            adapters.append(importlib.import_module(module))
        except ImportError as e:
            raise FrameworkMissing(f"{option} needs {extra} ({e}); install it with: "
                                   f"pip install 'pyfunc-debug[{extra}]'") from None
    stack = contextlib.ExitStack()
    for adapter in adapters:
        stack.enter_context(adapter.instrument())
    return stack
