"""The error hierarchy: TensorFlow's class names, our context.

Every error raised while building or running an op names the op, its type and
the user source line that created it; an exception raised by user code is
chained as ``__cause__`` (TensorFlow drops it).
"""
from __future__ import annotations

from .source_text import relative_source

__all__ = [
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError",
    "NotFoundError", "OutOfRangeError", "UnimplementedError",
    "ResourceExhaustedError", "InternalError", "UnavailableError", "FailedPreconditionError",
    "OperatorNotAllowedInGraphError", "error_for_exception", "op_context",
]


class OpError(Exception):
    """Base class: an error tied to an op (``.op`` may be ``None``).

    ``original_traceback``: for an error raised by a wrapped Python function,
    the traceback of the user's exception (its ``__cause__``), from the kernel's
    call down to the user's ``raise``; ``None`` otherwise.
    """

    original_traceback = None

    error_code = 2

    def __init__(self, node_def=None, op=None, message: str = "", *args):
        # TF signature is (node_def, op, message); also accept OpError("msg").
        if message == "" and op is None and isinstance(node_def, str):
            node_def, message = None, node_def
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return self.message


class CancelledError(OpError):
    error_code = 1


class UnknownError(OpError):
    error_code = 2


class InvalidArgumentError(OpError):
    error_code = 3


class NotFoundError(OpError):
    error_code = 5


class ResourceExhaustedError(OpError):
    error_code = 8


class FailedPreconditionError(OpError):
    error_code = 9


class OutOfRangeError(OpError):
    error_code = 11


class UnimplementedError(OpError):
    error_code = 12


class UnavailableError(OpError):
    """The service that should run the op is gone (e.g. a Dask worker died)."""

    error_code = 14


class InternalError(OpError):
    error_code = 13


class OperatorNotAllowedInGraphError(TypeError):
    """A Python operation (bool, iteration) on a symbolic tensor."""


# TF#33: order matters, subclasses are matched by isinstance.
_EXCEPTION_MAP = (
    ((ValueError, TypeError), InvalidArgumentError),
    ((StopIteration,), OutOfRangeError),
    ((MemoryError,), ResourceExhaustedError),
    ((NotImplementedError,), UnimplementedError),
)


def error_for_exception(exc: BaseException) -> type[OpError]:
    """The ``OpError`` subclass TensorFlow maps a Python exception to (TF#33)."""
    if isinstance(exc, OpError):
        return UnknownError  # TF: a tf.errors.* raised inside func loses its code
    for kinds, cls in _EXCEPTION_MAP:
        if isinstance(exc, kinds):
            return cls
    return UnknownError


def op_context(op) -> str:
    """``"op 'name' (Type) created at file:line"`` for error messages."""
    if op is None:
        return ""
    return f"op '{op.name}' ({op.type}) created at {relative_source(str(op.source))}"
