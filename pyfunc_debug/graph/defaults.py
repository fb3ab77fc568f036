"""The per-thread default session stack (TF's ``get_default_session``).

It lives in the graph layer so ``Tensor.eval`` and ``Operation.run`` can find
the session without importing the runtime; ``runtime/session.py`` pushes and
pops sessions here.
"""
from __future__ import annotations

import threading

__all__ = ["get_default_session", "push_session", "pop_session", "require_session"]

_local = threading.local()


def _stack() -> list:
    try:
        return _local.sessions
    except AttributeError:
        _local.sessions = []
        return _local.sessions


def get_default_session():
    """The innermost session entered with ``with sess:``/``sess.as_default()``, or ``None``."""
    stack = _stack()
    return stack[-1] if stack else None


def push_session(sess) -> None:
    _stack().append(sess)


def pop_session(sess) -> None:
    stack = _stack()
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is sess:
            del stack[i]
            return


def require_session(session, what: str):
    """``session`` or the default one; a ``ValueError`` naming ``what`` when there is none."""
    session = session if session is not None else get_default_session()
    if session is None:
        raise ValueError(f"Cannot evaluate {what}: no default session is registered. Use "
                         "`with pfd.compat.v1.Session():` or pass `session=sess`.")
    return session
