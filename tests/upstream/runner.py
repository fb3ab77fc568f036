"""Run one upstream test file's test classes in this process and print each test's outcome
as JSON: plain, or with pyfunc-debug watching (tests/test_upstream_callbacks.py runs one
subprocess per file and mode, so absltest's flags and the frameworks' global state never
reach our suite).

    python tests/upstream/runner.py MODE[:v1|:internal] FILE CLASS... [--skip TEST_ID...]

MODE: ``plain``; ``trace`` (the framework's ``instrument()`` plus ``pfd.trace(capture=
"summary")`` over the whole run); ``debugger`` (that, and a Debugger pausing before every
callback and continuing at once). ``:v1`` runs TensorFlow with v2 behaviour off, as TF's
CI runs its ``run_v1_only`` tests (skipped otherwise); ``:internal`` instruments with
``internal=True`` (the frameworks' own callbacks too: ``jax.debug.print``). Warnings
attributed to pyfunc_debug's own files are counted: our code must not warn into the
user's program.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import unittest
import warnings
from contextlib import ExitStack

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

MODES = ("plain", "trace", "debugger")


class Outcomes(unittest.TestResult):
    """Each test's outcome: ok, fail, error, skip, xfail, xpass (a failing subtest fails it)."""

    def __init__(self):
        super().__init__()
        self.by_test: dict[str, str] = {}
        self.detail: dict[str, str] = {}
        self.seconds: dict[str, float] = {}

    def startTest(self, test):
        super().startTest(test)
        self._started = time.perf_counter()

    def stopTest(self, test):
        self.seconds[test.id()] = round(time.perf_counter() - self._started, 3)
        super().stopTest(test)

    def _set(self, test, outcome, err=None):
        key = test.id()
        if self.by_test.get(key) in ("fail", "error"):
            return
        self.by_test[key] = outcome
        if err is not None:   # the error's own words first: TF's can be long
            self.detail[key] = (str(err[1])[:600] + "\n...\n"
                                + self._exc_info_to_string(err, test)[-1500:])

    def addSuccess(self, test):
        self.by_test.setdefault(test.id(), "ok")

    def addFailure(self, test, err):
        self._set(test, "fail", err)

    def addError(self, test, err):
        self._set(test, "error", err)

    def addSkip(self, test, reason):
        self._set(test, "skip")

    def addExpectedFailure(self, test, err):
        self._set(test, "xfail")

    def addUnexpectedSuccess(self, test):
        self._set(test, "xpass")

    def addSubTest(self, test, subtest, err):
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._set(test, "fail" if failed else "error", err)


def _load(path: str):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _framework(module) -> str:
    return "jax" if "jax" in sys.modules and "tensorflow" not in sys.modules else "tensorflow"


def _watch(stack: ExitStack, mode: str, framework: str, counts: dict,
           internal: bool = False) -> None:
    """Install pyfunc-debug as a user's program would have it: instrument, trace, debugger."""
    import pyfunc_debug as pfd
    from pyfunc_debug import events as ev
    if framework == "jax":
        from pyfunc_debug import jax as adapter
    else:
        from pyfunc_debug import tensorflow as adapter
    stack.enter_context(adapter.instrument(internal=internal))
    tr = stack.enter_context(pfd.trace(capture="summary"))
    stack.callback(lambda: counts.update(
        op_starts=sum(type(e) is ev.OpStart for e in tr.events)))
    if mode == "debugger":
        def cont(pause):
            counts["pauses"] = counts.get("pauses", 0) + 1
            return "continue"
        dbg = pfd.debug.Debugger(on_pause=cont)
        dbg.break_on(op="*")
        stack.enter_context(dbg)


def _count_our_warnings(counts: dict) -> None:
    ours = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ours = os.path.join(ours, "pyfunc_debug") + os.sep
    shown = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if str(filename).startswith(ours):
            counts.setdefault("our_warnings", []).append(
                f"{category.__name__}: {message} ({filename}:{lineno})")
        return shown(message, category, filename, lineno, file, line)
    warnings.showwarning = showwarning


def _as_upstream_ci(framework: str) -> None:
    """JAX's CI turns warnings into errors (its pyproject's pytest ``filterwarnings``, and
    Bazel's check): a warning our code causes then fails a callback, as it would there."""
    if framework == "jax":
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", "Transparent hugepages")


def main(argv: list[str]) -> int:
    mode, path, *rest = argv
    mode, _, variant = mode.partition(":")
    if mode not in MODES:
        raise SystemExit(f"runner.py: mode {mode!r} is not one of {', '.join(MODES)}")
    skip = set(rest[rest.index("--skip") + 1:]) if "--skip" in rest else set()
    classes = rest[:rest.index("--skip")] if "--skip" in rest else rest
    if variant == "v1":
        from tensorflow.python.compat import v2_compat
        v2_compat.disable_v2_behavior()
    module = _load(path)
    from absl import flags
    flags.FLAGS(sys.argv[:1], known_only=True)   # absltest.main would parse them
    framework = _framework(module)
    if framework == "jax":
        from jax._src import test_util as jtu
        loader = jtu.JaxTestLoader()
    else:
        loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(getattr(module, c)) for c in classes)
    if skip:
        suite = unittest.TestSuite(t for t in _flat(suite) if t.id() not in skip)
    counts: dict = {}
    result = Outcomes()
    with ExitStack() as stack:
        _count_our_warnings(counts)
        _as_upstream_ci(framework)
        if mode != "plain":
            _watch(stack, mode, framework, counts, internal=variant == "internal")
        suite.run(result)
    json.dump({"outcomes": result.by_test, "detail": result.detail,
               "seconds": result.seconds, **counts}, sys.stdout)
    sys.stdout.flush()
    os._exit(0)   # the frameworks' threads and atexit hooks have no say in the outcome


def _flat(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _flat(t)
        else:
            yield t


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
