"""Breakpoints, errors and pdb on ops placed on workers, answered by the caller's debugger.

When a debugger in the calling process could pause one of a segment's ops
(a breakpoint matches its name or type, or it is stepping), the task runs
those ops "attended": before and after each, the worker sends the op's
values over a pair of Dask queues and waits; the caller hands them to its
debuggers through the external-op seam (``debug.external``, as for framework
callbacks), so the same UI or console pauses, and sends back the answer
(continue, step — the worker then attends its next ops too — or abort).
When an ``on_error`` breakpoint could match one of its ops, a failing op
asks the caller the same way, while its traceback is alive: the caller's
debugger shows an error pause with the error the run will raise.

pdb runs in the worker, in the wrapped function, on the caller's terminal:
before asking about a wrapped function (or an error), the worker opens a
``remote.pdb_channel.PdbPort`` on its own host and sends its address with
the question. A ``s`` (step into) or ``p`` (post-mortem) answer makes the
caller connect with the token it gave the task, answer, and relay the session
to the terminal the debugger's pdb uses (the TUI suspends, as for a local
session; ``Debugger.serialized`` keeps one session at a time). pdb's ``q``
aborts the run with ``PdbQuit``, as locally; the session ends if the worker
dies, and Ctrl+C while the program runs ends it and interrupts the caller.
"""
from __future__ import annotations

import contextlib
import pickle
import secrets
import time
import uuid
from dataclasses import dataclass

from .. import events as ev
from ..debug.attachment import attached
from ..debug.external import ExternalOp, failed, finished, starting, watching
from ..remote.pdb_channel import PdbPort, connect, relay
from .remote_errors import remote_error

__all__ = ["Attend", "attended", "errors_attended", "wraps_function", "Channel", "Asker"]

ACCEPT_S = 10.0     # how long a worker waits for the caller to connect to its pdb port
ANSWER_POLL_S = 0.1  # how often, at most, a waiting worker looks for the caller's answer


@dataclass(frozen=True)
class Attend:
    """What a task is told: ``steps`` (positions in its segment) pause before and after,
    ``on_error``: a failing op asks first; questions go over queues named ``channel``,
    and the caller presents ``token`` to open pdb in the worker."""

    channel: str
    token: str
    steps: tuple
    on_error: bool


def wraps_function(op) -> bool:
    """A py_func/numpy_function/py_function: pdb can step into its function (an
    ``Operation`` here, its shipped copy on a worker)."""
    return "step_into" in op.op_def.extra and not op.attrs.get("is_grad") \
        and op.attrs.get("callback") is not None


@dataclass(frozen=True)
class PlacedOp(ExternalOp):
    """A graph op run on a worker, as its pauses show it: where it ran is in ``source``,
    and its graph ``inputs`` name the ops that produced the values."""

    inputs: tuple = ()


def _external(op, where: str = "") -> ExternalOp:
    return PlacedOp(op.name, op.type, str(op.source) + where, wrapped=wraps_function(op),
                    inputs=tuple(op.inputs))


def attended(plan, seg) -> tuple:
    """Positions (within ``seg``) of the steps a debugger here could pause at now."""
    if not attached():
        return ()
    return tuple(j for j, i in enumerate(seg.indices) if watching(_external(plan.steps[i].op)))


def errors_attended(plan, seg) -> bool:
    """Whether an error in ``seg`` could pause here (``on_error``, or stepping)."""
    ops = [plan.steps[i].op for i in seg.indices]
    return any(d.stepping or any(b.enabled and b.on_error and b.matches_op(op.name, op.type)
                                 for b in d.breakpoints for op in ops) for d in attached())


class Channel:
    """The caller's end: a request queue the worker writes, an answer queue it reads."""

    def __init__(self, client, where: str = ""):
        from distributed import Queue
        self.name = f"pfd-pause-{uuid.uuid4().hex}"
        self.token = secrets.token_urlsafe(16)
        self._where = f" (on worker {where})" if where else ""
        self._requests = Queue(self.name + "-req", client=client)
        self._answers = Queue(self.name + "-ans", client=client)

    def attend(self, steps: tuple, on_error: bool) -> Attend:
        return Attend(self.name, self.token, steps, on_error)

    def serve_one(self, plan, seg, run_id, alive=None) -> bool:
        """Answer a pause request if one is waiting; whether one was.

        ``alive()`` says whether the worker is still there (asked while relaying pdb).
        An abort at the pause raises ``CancelledError`` here, after telling the worker.
        """
        # qsize, not get(timeout=): the scheduler logs every get that times out
        if not self._requests.qsize():
            return False
        req = pickle.loads(self._requests.get())
        real = plan.steps[seg.indices[req["j"]]].op
        op = _external(real, self._where)
        answered: list = []
        try:
            if req["when"] == "before":
                stepper = starting(op, req["inputs"], run_id)
                if stepper is not None and req["pdb"] is not None:
                    self._open_pdb(stepper, req["pdb"], "step_into", alive, answered)
            elif req["when"] == "after":
                finished(op, req["inputs"], req["outputs"], run_id)
            else:
                err = remote_error(req["error"], plan, seg)
                err._pfd_paused = True
                failed(op, req["inputs"], err, run_id, post_mortem=None if req["pdb"] is None
                       else lambda d: self._open_pdb(d, req["pdb"], "post_mortem", alive,
                                                     answered))
        except BaseException:
            if not answered:
                self._answers.put("abort")
            raise
        if not answered:
            stepping = any(d.stepping for d in attached())
            self._answers.put("step" if stepping else "continue")
        return True

    def _open_pdb(self, dbg, address, action: str, alive, answered: list) -> None:
        """Connect to the worker's pdb port, answer ``action``, relay the session to the
        terminal ``dbg``'s pdb uses (entering its ``around``: the TUI suspends)."""
        if answered:
            return   # one session per question (a second debugger asking gets none)
        try:
            ch = connect(address, self.token)
        except OSError as e:
            ev.emit(ev.Warning(ev.next_seq(), None, time.perf_counter_ns(), 0, "", "", None,
                               f"cannot open pdb in the worker at {address[0]}:{address[1]}: "
                               f"{e}; the op runs on", "pdb"))
            return
        answered.append(action)
        self._answers.put(action)
        runner = dbg.pdb
        with dbg.serialized, (runner.around() if runner.around is not None
                              else contextlib.nullcontext()):
            relay(ch, runner.stdin, runner.stdout, alive)

    def close(self) -> None:
        for q in (self._requests, self._answers):
            try:
                q.close()
            except Exception:  # the scheduler may be gone already
                pass


class Asker:
    """The worker's end for one task: ``ask`` sends a question and waits for the answer."""

    def __init__(self, attend: Attend, host: str):
        self.attend = attend
        self._host = host
        self._queues = None   # made at the first question (most tasks never ask)

    def ask(self, when: str, j: int, inputs: list, outputs=None, error=None,
            pdb=None) -> str:
        """The caller's answer; with ``pdb`` (a function of a ``remote.pdb_channel``
        ``PdbStreams``), a port is open meanwhile and a pdb answer runs ``pdb`` on the
        caller's connection (which ends when ``pdb`` returns or raises)."""
        if self._queues is None:
            from distributed import Queue
            self._queues = (Queue(self.attend.channel + "-req"),
                            Queue(self.attend.channel + "-ans"))
        requests, answers = self._queues
        port = _port(self._host) if pdb is not None else None
        with contextlib.closing(port) if port is not None else contextlib.nullcontext():
            requests.put(pickle.dumps({
                "when": when, "j": j, "inputs": inputs, "outputs": outputs, "error": error,
                "pdb": None if port is None else port.address}))
            answer = _answer(answers)
            if answer in ("step_into", "post_mortem") and port is not None:
                streams = port.accept(self.attend.token, ACCEPT_S)
                if streams is not None:
                    try:
                        pdb(streams)
                    finally:
                        streams.close()
        return answer


def _answer(answers) -> str:
    """The caller's answer; ``abort`` once the task is cancelled (the caller went away, or
    left this pause by Ctrl+C), so a worker never waits for ever. qsize, not
    get(timeout=): the scheduler logs every get that times out."""
    delay = 0.001
    while not answers.qsize():
        if _cancelled():
            return "abort"
        time.sleep(delay)
        delay = min(delay * 2, ANSWER_POLL_S)
    return answers.get()


def _cancelled() -> bool:
    try:
        from distributed import get_worker
        from distributed.worker import thread_state
        ts = get_worker().state.tasks.get(thread_state.key)
    except (ImportError, ValueError, AttributeError):  # not in a worker's task
        return False
    return ts is None or ts.state in ("cancelled", "released", "forgotten")


def _port(host: str):
    try:
        return PdbPort(host)
    except OSError:   # no port on that host: pause without pdb
        return None
