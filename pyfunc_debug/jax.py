"""Debugging a real JAX program: its Python callbacks as ops (SPEC §10).

``instrument()`` makes every ``jax.pure_callback``, ``jax.experimental.io_callback``
and ``jax.debug.callback`` call — eagerly or under ``jit`` — emit events and
honour the attached debuggers (breakpoints, pauses, step-into pdb at the user's
function, post-mortem), with the diagnostics of our own ops when summaries are
recorded (``non_finite``, ``shape_change``: ``external_calls``). The op is the
callback's ``__name__``, its type the JAX primitive (``pure_callback``,
``io_callback``, ``debug_callback``), its source the user's line that called
the callback API. Requires the ``jax`` extra; this module and
``pyfunc_debug.tensorflow`` are the only ones that import a framework.

How: the three APIs bind a primitive whose ``callback`` parameter JAX calls at
run time (on the caller's thread, on CPU); ``instrument()`` wraps each
primitive's ``bind`` so that parameter becomes our wrapper — aliases imported
earlier are caught too. Functions jitted before ``instrument()`` hold the
unwrapped callback in their compiled form, so it clears JAX's caches
(``jax.clear_caches()``): they are traced again on their next call (what was
compiled ahead of time, ``f.lower(x).compile()``, stays unobserved). JAX's own
callbacks are hidden unless ``internal=True``. ``jax.debug.print`` binds its own
primitive (``debug_print``) whose rules build the print callback from the equation's
parameters, through ``debugging._make_flat_callback`` looked up at call time: with
``internal=True`` that helper's result is wrapped too (op ``jax.debug.print``, type
``debug_print``). A callback that is not callable is left to JAX, as without us.
"""
from __future__ import annotations

import functools
import logging
import os
import sys
from dataclasses import dataclass

import jax
from jax._src import callback as _callback_mod
from jax._src import debugging as _debugging_mod
from jax._src import source_info_util as _source_info

from .debug.external import ExternalOp
from .errors import CancelledError
from .external_calls import CallbackRun, Closing, without_our_frames
from .source_text import PACKAGE_DIR, USER_LIKE

__all__ = ["instrument", "uninstrument", "Instrumentation"]

_JAX_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in
                  (sys.modules.get("jax"), sys.modules.get("jaxlib")) if m is not None)
_NOT_USER = _JAX_DIRS + (PACKAGE_DIR, "<frozen ", os.path.dirname(os.__file__) + os.sep)


def _is_user_file(filename: str) -> bool:
    return not filename.startswith(_NOT_USER) or filename.startswith(USER_LIKE)

_PRIMITIVES = {"pure_callback": _callback_mod.pure_callback_p,
               "io_callback": _callback_mod.io_callback_p,
               "debug_callback": _debugging_mod.debug_callback_p}

# JAX logs every failing callback with its traceback; an abort is not a failure
_LOGGERS = ("jax._src.callback", "jax._src.debugging")

_active: Instrumentation | None = None


def _not_an_abort(record: logging.LogRecord) -> bool:
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, CancelledError)


def _user_function(callback):
    """The user's function behind JAX's flattening wrapper around it."""
    inner = getattr(callback, "callback_func", None)       # pure/io: _FlatCallback
    if inner is not None:
        return inner
    for cell in getattr(callback, "__closure__", None) or ():  # debug.callback: a closure
        value = cell.cell_contents
        if callable(value) and not isinstance(value, type):
            return value
    return callback


def _unwrap(func):
    """The function under ``functools.partial`` layers (its name and code are the user's)."""
    while isinstance(func, functools.partial):
        func = func.func
    return func


def _stack_source(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if _is_user_file(name):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def _equation_source() -> str:
    """The user's line of the equation JAX is evaluating or lowering now (a print's
    callback is made there, away from the user's stack when lowered under ``jit``)."""
    try:
        tb = _source_info.current().traceback
        codes, lastis = tb.raw_frames() if tb is not None else ((), ())
        for code, lasti in zip(codes, lastis):
            if _is_user_file(code.co_filename):
                frame = _source_info.raw_frame_to_frame(code, lasti)
                return f"{frame.file_name}:{frame.start_line}"
    except Exception:  # a JAX without these helpers: the stack is the next best
        pass
    return _stack_source(3)


_ops: dict = {}


def _op(name: str, kind: str, source: str, code) -> ExternalOp:
    """One op per callback and call site: a callback bound at every eager call is one op,
    whose calls diagnostics compare (an output shape unlike the earlier calls')."""
    key = (name, kind, source, code)
    op = _ops.get(key)
    if op is None:
        if len(_ops) > 4096:
            _ops.clear()
        op = _ops[key] = ExternalOp(name, kind, source, target=code)
    return op


@dataclass(frozen=True, eq=False)
class _Instrumented:
    """The ``callback`` parameter JAX calls: ours, around JAX's flat callback."""

    inner: object
    op: ExternalOp
    run: CallbackRun

    def __call__(self, *flat_args):
        try:
            return self.run.call(self.op, self.inner, flat_args)
        except BaseException as e:   # JAX logs its traceback: as without us
            without_our_frames(e)
            raise   # a bare raise adds no frame (this one) back (Python 3.11+)

    # JAX compares primitive parameters (jaxpr equality, caching): compare as the inner one
    def __eq__(self, other):
        return isinstance(other, _Instrumented) and other.inner == self.inner

    def __hash__(self):
        return hash(self.inner)


class Instrumentation(Closing):
    """The installed wrappers; ``close()`` (or leaving ``with``) restores JAX's ``bind``s
    and ends the callbacks' run. ``run`` is the ``CallbackRun`` the calls belong to."""

    def __init__(self, internal: bool = False):
        self.internal = internal
        self.run = CallbackRun("jax")
        self._saved: dict = {}
        self._saved_print = None

    def _install(self) -> None:
        for kind, prim in _PRIMITIVES.items():
            self._saved[kind] = prim.__dict__.get("bind")
            prim.bind = self._binder(kind, prim.bind)
        make = getattr(_debugging_mod, "_make_flat_callback", None)
        if make is not None and hasattr(_debugging_mod, "debug_print_p"):
            self._saved_print = make
            _debugging_mod._make_flat_callback = self._print_maker(make)
        for name in _LOGGERS:
            logging.getLogger(name).addFilter(_not_an_abort)
        jax.clear_caches()

    def _binder(self, kind: str, bind):
        me = self

        def instrumented_bind(*args, **params):
            cb = params.get("callback")
            if cb is not None and not isinstance(cb, _Instrumented):
                user = _unwrap(_user_function(cb))
                code = getattr(user, "__code__", None)
                shown = me.internal or code is None or not code.co_filename.startswith(_JAX_DIRS)
                if shown and callable(user):   # not callable: JAX's own error, as without us
                    name = getattr(user, "__name__", type(user).__name__)
                    op = _op(name, kind, _stack_source(), code)
                    params["callback"] = _Instrumented(cb, op, me.run)
            return bind(*args, **params)
        return instrumented_bind

    def _print_maker(self, make):
        """``jax.debug.print``'s rules (eager, lowering, shard_map) make its callback here."""
        me = self

        def make_flat_callback(in_tree, callback, static_args):
            flat = make(in_tree, callback, static_args)
            if not me.internal or me._saved_print is None:
                return flat
            code = getattr(_unwrap(callback), "__code__", None)
            op = _op("jax.debug.print", "debug_print", _equation_source(), code)
            return _Instrumented(flat, op, me.run)
        return make_flat_callback

    def close(self) -> None:
        """Restore JAX's ``bind``s, clear its caches (no wrapper stays compiled in), end the run."""
        global _active
        for kind, saved in self._saved.items():
            prim = _PRIMITIVES[kind]
            if saved is None:
                prim.__dict__.pop("bind", None)
            else:
                prim.bind = saved
        if self._saved_print is not None:
            _debugging_mod._make_flat_callback = self._saved_print
            self._saved_print = None
        if self._saved:
            self._saved = {}
            for name in _LOGGERS:
                logging.getLogger(name).removeFilter(_not_an_abort)
            jax.clear_caches()
        if _active is self:
            _active = None
        self.run.end()


def instrument(internal: bool = False) -> Instrumentation:
    """Wrap every Python callback JAX binds from now on (see the module docstring).

    Clears JAX's caches, so functions jitted earlier are traced again and wrapped.
    ``internal=True`` also shows JAX's own callbacks (``jax.debug.print``'s).
    Calling it again returns the active ``Instrumentation``.
    """
    global _active
    if _active is not None:
        if internal and not _active.internal:
            _active.internal = True
            jax.clear_caches()   # prints compiled while hidden are lowered again, wrapped
        return _active
    _active = Instrumentation(internal)
    _active._install()
    return _active


def uninstrument() -> None:
    """Undo ``instrument()`` (no-op when not instrumented)."""
    if _active is not None:
        _active.close()
