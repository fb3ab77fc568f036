"""Exceptions raised by wrapped functions, as the TF errors their ops fail with (TF#33, TF#34).

The message holds the function's traceback; a nested run's error is quoted once.
"""
from __future__ import annotations

import traceback

from ..errors import InvalidArgumentError, OpError, error_for_exception

__all__ = ["map_exception", "missing_callback"]


def map_exception(exc: BaseException) -> OpError:
    """The TF error for an exception raised by a wrapped function; message holds the traceback.

    An ``OpError`` from a nested ``Session.run`` already carries its own
    message and traceback text: it is quoted once, followed only by the frames
    it crossed, so nesting grows messages linearly, never geometrically.

    Call it in the ``except`` clause of the frame that called the function and
    raise its result there: the error's own traceback then continues below that
    frame into the user's frames, so post-mortem debuggers (``pytest --pdb``,
    ``pdb.post_mortem(err.__traceback__)``) open at the user's ``raise``.
    """
    if isinstance(exc, OpError):
        frames = traceback.format_list(_crossed(exc))
        core = (f"{type(exc).__name__}: {exc.message}\nTraceback (most recent call last):\n\n"
                + "".join(chunk + "\n" for chunk in frames))
    else:
        core = f"{type(exc).__name__}: {exc}\n" + "".join(
            chunk + "\n" for chunk in _format_exception(exc))
    err = error_for_exception(exc)(None, None, core)
    tb = exc.__traceback__
    err.original_traceback = tb
    # raising prepends the calling frame again, so start one entry below it
    err._pfd_own_tb = tb.tb_next if tb is not None else None
    return err.with_traceback(err._pfd_own_tb)


def _crossed(err) -> traceback.StackSummary:
    """The frames a nested run's error crossed to get here, not the ones it carries from
    inside (those are quoted in its message already)."""
    entries, tb, stop = [], err.__traceback__, getattr(err, "_pfd_own_tb", None)
    while tb is not None and tb is not stop:
        entries.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return traceback.StackSummary.extract(entries)


def _format_exception(exc) -> list:
    """``traceback.format_exception``, with chained pyfunc-debug errors cut to one line.

    A user exception raised ``from`` a nested run's error would otherwise
    repeat that error's whole message (and its chain) at every level.
    """
    cause = exc.__cause__ or exc.__context__
    if not isinstance(cause, OpError):
        return traceback.format_exception(exc)
    head = cause.message.splitlines()[0] if cause.message else ""
    return [f"(caused by {type(cause).__name__}: {head} ...)\n"] + \
        traceback.format_exception(exc, chain=False)


def missing_callback(op):
    """The error of an op whose wrapped function this process does not hold (a graph
    imported without it), else None."""
    cb = op.attrs.get("callback")
    name = op.attrs.get("func_name", "?")
    return InvalidArgumentError(
        None, op, f"ValueError: Could not find callback with key={op.attrs['token']} in the "
        f"registry: the Python function {name} used by op '{op.name}' ({op.type}) is not "
        "registered in this process. Function bodies are not serialized; rebuild the graph "
        "here, or import with import_graph_def(..., resolve_functions=True) to re-bind "
        "module-level functions by module:qualname.") if cb is None else None
