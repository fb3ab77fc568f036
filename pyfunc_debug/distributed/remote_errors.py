"""Errors raised in a worker, rebuilt in the caller as the same ``pfd.errors`` class.

A task returns an error as plain data (an ``OpError`` holds its op, which does
not travel back): class name, op name, message, traceback text.
"""
from __future__ import annotations

from .. import errors

__all__ = ["RemoteTraceback", "error_record", "remote_error"]


class RemoteTraceback(Exception):
    """The traceback text of an error raised in a worker (the ``__cause__`` of its ``OpError``)."""

    def __str__(self) -> str:
        return "\n\n" + self.args[0]


def error_record(e: errors.OpError, op_name: str = "") -> tuple:
    """What travels back: (class name, op name, message, traceback text)."""
    import traceback
    return (type(e).__name__, getattr(e.op, "name", "") or op_name, e.message,
            "".join(traceback.format_exception(e)))


def remote_error(record, plan, seg) -> errors.OpError:
    """The caller's error for a worker's ``record``: same class and message, the op of
    ``plan``; ``remote_traceback`` (also its ``__cause__``) holds the worker's text."""
    cls_name, op_name, message, tb_text = record
    if cls_name == "PdbQuit":   # pdb's q in the worker: aborted, as a local q
        from ..debug.pdb_bridge import PdbQuit
        err = PdbQuit(None, None, f"the run was aborted from pdb (quit) in op '{op_name}'")
        err.pfd_aborted_at = op_name
    else:
        cls = getattr(errors, cls_name, None)
        if not (isinstance(cls, type) and issubclass(cls, errors.OpError)):
            cls = errors.UnknownError
        op = next((plan.steps[i].op for i in seg.indices if plan.steps[i].op.name == op_name),
                  None)
        err = cls(None, op, message)
    err.remote_traceback = tb_text
    err.__cause__ = RemoteTraceback(tb_text)
    return err
