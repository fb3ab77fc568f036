"""The events that close an op that did not end: ``OpError`` for a failure or an interrupt."""
from __future__ import annotations

import time

from .. import events as ev
from .loop import annotate_error

__all__ = ["report_interrupt", "report_error"]

_now = time.perf_counter_ns


def report_interrupt(exc, run_id, name, typ, parent, src, tid, t0) -> None:
    """An op stopped by KeyboardInterrupt, SystemExit, a debugger quit or an abort:
    close its ``OpStart`` with an ``OpError`` naming it (the exception goes on unchanged)."""
    t1 = _now()
    text = str(exc)
    ev._bus.emit(ev.OpError(ev.next_seq(), run_id, t1, tid, name, typ, parent,
                            type(exc).__name__, f"interrupted by {type(exc).__name__}"
                            + (f": {text}" if text else ""), src, t1 - t0))


def report_error(exc, op, ctx, name, typ, src, tid, t0):
    """Emit ``OpError`` for a failed op and raise its annotated error."""
    t1 = _now()
    err = annotate_error(exc, op, ctx)
    ev._bus.emit(ev.OpError(ev.next_seq(), ctx.run_id, t1, tid, name, typ, None,
                            type(err).__name__, err.message, src, t1 - t0))
    if err is exc:
        raise exc
    raise err from exc
