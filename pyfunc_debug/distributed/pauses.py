"""Breakpoints on ops placed on workers: their pauses answered by the caller's debugger.

When a debugger in the calling process could pause one of a segment's ops
(a breakpoint matches its name or type, or it is stepping), the task runs
those ops "attended": before and after each, the worker sends the op's
values over a pair of Dask queues and waits; the caller hands them to its
debuggers through the external-op seam (``debug.external``, as for framework
callbacks), so the same UI or console pauses, and sends back the answer.
pdb cannot open in a worker (``s`` steps to the next op instead), and an
error pause is not offered for remote ops.
"""
from __future__ import annotations

import pickle
import time
import uuid

from ..debug.attachment import attached
from ..debug.external import ExternalOp, finished, starting, watching

__all__ = ["attended", "Channel", "ask"]

POLL_S = 0.05  # how often the caller looks for a pause request while a task runs


def _external(op) -> ExternalOp:
    return ExternalOp(op.name, op.type, str(op.source), wrapped=False)


def attended(plan, seg) -> tuple:
    """Positions (within ``seg``) of the steps a debugger here could pause at now."""
    if not attached():
        return ()
    return tuple(j for j, i in enumerate(seg.indices) if watching(_external(plan.steps[i].op)))


class Channel:
    """The caller's end: a request queue the worker writes, an answer queue it reads."""

    def __init__(self, client):
        from distributed import Queue
        self.name = f"pfd-pause-{uuid.uuid4().hex}"
        self._requests = Queue(self.name + "-req", client=client)
        self._answers = Queue(self.name + "-ans", client=client)

    def serve_one(self, plan, seg, run_id) -> bool:
        """Answer a pause request if one is waiting (else wait ``POLL_S``); whether one was.

        An abort at the pause raises ``CancelledError`` here, after telling the worker.
        """
        # qsize, not get(timeout=): the scheduler logs every get that times out
        if not self._requests.qsize():
            time.sleep(POLL_S)
            return False
        blob = self._requests.get()
        when, j, inputs, outputs = pickle.loads(blob)
        op = _external(plan.steps[seg.indices[j]].op)
        try:
            if when == "before":
                starting(op, inputs, run_id)
            else:
                finished(op, inputs, outputs, run_id)
        except BaseException:
            self._answers.put("abort")
            raise
        self._answers.put("continue")
        return True

    def close(self) -> None:
        for q in (self._requests, self._answers):
            try:
                q.close()
            except Exception:  # the scheduler may be gone already
                pass


def ask(channel: str, when: str, j: int, inputs: list, outputs=None) -> str:
    """The worker's end: send a pause request, wait for the caller's answer."""
    from distributed import Queue
    Queue(channel + "-req").put(pickle.dumps((when, j, inputs, outputs)))
    return Queue(channel + "-ans").get()
