"""``--tf`` / ``--jax`` for ``pyfunc-debug run`` and ``trace``: instrument before the script.

The framework adapters are imported only when asked for, so the command line
stays free of TensorFlow and JAX otherwise.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
import threading
import traceback

from .tf_startup import import_quietly

__all__ = ["FRAMEWORK_OPTIONS", "instrumented", "FrameworkMissing", "run_on_worker",
           "nothing_recorded", "jax_used", "watched"]

# option -> (adapter module, the pip extra that installs its framework)
FRAMEWORK_OPTIONS = {"--tf": ("pyfunc_debug.tensorflow", "tensorflow"),
                     "--jax": ("pyfunc_debug.jax", "jax")}


class FrameworkMissing(Exception):
    """An option asked for a framework that is not installed."""


def instrumented(opts: dict, ui: bool = False) -> contextlib.ExitStack:
    """A context manager instrumenting the frameworks ``opts`` names (``{"--tf": True}``).

    The adapters are imported here, so a missing framework raises
    ``FrameworkMissing`` before anything starts. ``ui``: the UI will own the terminal.
    TensorFlow's C++ log then stays at warnings' level 2 unless the user set one: its
    runtime lines (a failing callback's traceback, which the UI shows itself) would be
    written over the screen. Elsewhere it logs as without us.
    """
    if ui and opts.get("--tf"):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    adapters = []
    for option, (module, extra) in FRAMEWORK_OPTIONS.items():
        if not opts.get(option):
            continue
        # TF's C++ start-up chatter would bury our output
        load = import_quietly if option == "--tf" else importlib.import_module
        try:
            adapters.append(load(module))
        except ImportError as e:
            raise FrameworkMissing(f"{option} needs {extra} ({e}); install it with: "
                                   f"pip install 'pyfunc-debug[{extra}]'") from None
    stack = contextlib.ExitStack()
    for adapter in adapters:
        stack.enter_context(adapter.instrument())
    return stack


def run_on_worker(run, program):
    """``run(program)`` on a worker thread, as the UI does; Ctrl+C ends it at once.

    Signals land on the main thread, and a framework's blocking call there (a
    ``Session.run``, a dataset's next element) would hold them while a pause or
    pdb waits on one of its threads: here the main thread only waits, so Ctrl+C
    gets through — it prints one line and exits with status 130.
    """
    box = []
    worker = threading.Thread(target=lambda: box.append(run(program)), daemon=True,
                              name="pyfunc-debug script")
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        sys.stdout.flush()
        print("\npyfunc-debug: interrupted (Ctrl+C)", file=sys.stderr, flush=True)
        os._exit(130)   # the framework's threads cannot be stopped politely
    outcome = box[0]
    _release(outcome.error)
    return outcome


def _release(error) -> None:
    """Free what the program's last exception holds (a dataset iterator in a frame) now,
    while Python is whole: torn down at interpreter exit instead, TensorFlow's threads
    finishing queued callbacks can hang the process."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__
    gc.collect()


def jax_used() -> bool:
    """Whether the script computed with JAX, not only imported it: TensorFlow 2.21 imports
    JAX when it is installed, and a computation starts one of its backends."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is None:
        return False
    started = getattr(bridge, "backends_are_initialized", None)
    return True if started is None else bool(started())


def watched() -> dict:
    """``{"--tf": True, ...}`` for each framework whose callbacks are instrumented now."""
    return {option: getattr(sys.modules.get(module), "_active", None) is not None
            for option, (module, _) in FRAMEWORK_OPTIONS.items()}


def nothing_recorded(opts: dict | None = None) -> str:
    """Why a program recorded no run: what is recorded, and what was not. ``opts``: the
    ``--tf``/``--jax`` given (default: the frameworks instrumented now, ``watched``).
    What the program used of a framework comes first: a TensorFlow program also runs
    TensorFlow's ``tf.function``, which is not ours."""
    if opts is None:
        opts = watched()
    hints = []
    if opts.get("--tf"):
        hints.append("TensorFlow called no py_function/numpy_function callback")
    elif "tensorflow" in sys.modules:
        hints.append("the script imported TensorFlow: add --tf to record its "
                     "py_function/numpy_function callbacks")
    if opts.get("--jax"):
        hints.append("JAX called no pure_callback/io_callback/debug.callback")
    elif jax_used():
        hints.append("the script imported JAX: add --jax to record its pure_callback/"
                     "io_callback/debug.callback calls")
    if hints:
        return "; ".join(hints) + ("; and it ran no Session.run or tf.function call of "
                                   "pyfunc_debug's own")
    return ("the script ran no Session.run and no tf.function call (eager ops, and "
            "py_function/numpy_function/py_func called eagerly outside a tf.function, are "
            "not recorded: call them from a tf.function or a Session.run to trace them)")
