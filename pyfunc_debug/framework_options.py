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

__all__ = ["FRAMEWORK_OPTIONS", "instrumented", "FrameworkMissing", "run_on_worker"]

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
