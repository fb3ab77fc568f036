"""What an ``on_error`` breakpoint keeps of a Python op's call, cheaply, for a truthful pause.

A py_func/numpy_function gets the run's own arrays and may write into them.
So that an error pause shows the inputs as the function was given them,
arrays up to ``SMALL`` bytes are copied before the call; a bigger one is not
(a copy per call costs as much as the op) but sampled (a strided sample, as
``runtime.modified`` does): when the call fails and the sample differs, the
pause is told the function wrote into it (a write that misses the sample goes
unseen; ``Debugger(guard_mutation=True)`` checks every element).

No frame is kept while the op runs (a profile hook per call cost more than the
op): a function that raised has its frame in the traceback; for one that
returned a wrong value (a dtype error), post-mortem calls it again on the
inputs it was given and opens at the frame of that call, when it returns the
same value (``frame_again``; the pause says so).
"""
from __future__ import annotations

import sys

import numpy as np

from .pdb_bridge import NOTHING, keeping_frame

__all__ = ["SMALL", "code_of", "given_inputs", "written", "keeping", "frame_again"]

SMALL = 1 << 16   # bytes: inputs up to this size are copied before a kept call
_SAMPLE = 4096    # elements of a big input's sample
_ndarray = np.ndarray


def code_of(op):
    """The code object of the Python function an op wraps (None for a C function)."""
    func = getattr(op.attrs.get("callback"), "func", None)
    code = getattr(func, "__code__", None)
    return code if code is not None else getattr(getattr(func, "__call__", None), "__code__", None)


def _sample(a) -> bytes:
    flat = a.reshape(-1)   # a view: only C-contiguous arrays are sampled
    return flat[::max(1, flat.size // _SAMPLE)].tobytes()


def given_inputs(values):
    """(the inputs as given: small arrays copied, the rest as they are; {index: sample} of
    each big array, or None)."""
    given, marks = values, None
    for j, a in enumerate(values):
        if a.__class__ is _ndarray:
            if given is values:
                given = list(values)
            if a.nbytes <= SMALL or not a.flags.c_contiguous:
                given[j] = a.copy()
            else:
                if marks is None:
                    marks = {}
                marks[j] = _sample(a)
    return given, marks


def written(values, marks) -> list:
    """The indices of the big inputs whose sample changed since ``given_inputs``."""
    return [j for j, m in marks.items() if _sample(values[j]) != m] if marks else []


def keeping(kernel, op, needs_ctx: bool, copies: bool, one: bool = False):
    """``kernel`` of a Python op that, when it fails, leaves on the error ``_pfd_inputs``
    (as given: see the module doc when ``copies``), ``_pfd_inputs_after`` and
    ``_pfd_written`` (big inputs it wrote into). ``one``: it takes one argument."""
    if one and not needs_ctx:
        def kept1(a):   # the common case: a scalar costs a class check
            given = marks = None
            if copies and a.__class__ is _ndarray:
                given, marks = given_inputs((a,))
            try:
                return kernel(a)
            except Exception as e:
                e._pfd_inputs = [a] if given is None else list(given)
                e._pfd_inputs_after = [a]
                e._pfd_written = written((a,), marks)
                raise
        return kept1

    def kept(*args):
        values = args[1:] if needs_ctx else args
        given, marks = given_inputs(values) if copies else (values, None)
        try:
            return kernel(*args)
        except Exception as e:
            e._pfd_inputs, e._pfd_inputs_after = list(given), list(values)
            e._pfd_written = written(values, marks)
            raise
    return kept


class _Context:
    """What a py_function kernel needs of a run, for the call made again."""

    def __init__(self, run_id):
        self.run_id, self.kind, self.name = run_id, "replay", ""
        self.tapes, self.resources, self.summaries = {}, {}, None


def frame_again(op, given, returned, run_id):
    """(the frame of ``op``'s function called again on ``given`` (copies), at its return,
    or None; what to tell the user). The frame counts only when the call returns what
    the failed one did (``returned``): the same value, the same dtype."""
    code, box, got = code_of(op), [], []

    def call(func, args):
        hook = keeping_frame(code, box)
        if hook is not None:
            sys.setprofile(hook)
        try:
            r = func(*args)
        finally:
            if hook is not None and sys.getprofile() is hook:
                sys.setprofile(None)   # the function was never entered
        got.append(r)
        return r
    kernel = op.op_def.extra["step_into"](op, call)
    args = [v.copy() if isinstance(v, np.ndarray) else v for v in given]
    try:
        kernel(_Context(run_id), *args) if op.op_def.needs_ctx else kernel(*args)
    except Exception:   # noqa: BLE001 - the same failure, expected
        pass
    name = getattr(code, "co_name", "its function")
    if not box or not got:
        return None, f"calling {name}() again did not reach its return: no frame to show"
    if returned is not NOTHING and not _same(got[0], returned):
        return None, (f"calling {name}() again on the same inputs returned something else "
                      "(it is not deterministic, or it wrote into its inputs): no frame to show")
    return box[0], (f"its frame comes from calling {name}() again on the inputs it was given "
                    "(it returned the same value; its side effects happened again)")


def _same(a, b) -> bool:
    try:
        if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
            return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
        x, y = np.asarray(a), np.asarray(b)
        return x.dtype == y.dtype and x.shape == y.shape and \
            bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    except Exception:   # noqa: BLE001 - values numpy cannot compare: not the same
        return False
