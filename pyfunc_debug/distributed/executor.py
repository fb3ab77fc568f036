"""Running a plan across a Dask cluster: local segments here, placed ones as Dask tasks.

Segments run one after another in plan order (each waits for the values it
reads). A remote segment is one ``client.submit`` of ``task.run_segment``
pinned to its worker; its events come back with the results and are emitted
on this process's bus, stamped with the worker (``events.origin`` of their
``thread``, and their ``worker`` and ``pid`` fields). While it
runs, pauses of its ops that a debugger here asked for are answered
(``pauses.py``).
"""
from __future__ import annotations

import dataclasses
import threading
import time
import uuid

import cloudpickle  # Dask's own way of shipping functions (this module loads with Dask)

from .. import errors
from .. import events as ev
from ..graph.graph import eager_mode
from ..runtime import hooks
from ..runtime.loop import run_folds, run_steps
from ..runtime.observed import fold_items, main_items, run_span, run_steps_observed, \
    step_info
from .pauses import Channel, attended, errors_attended
from .placement import split, task_of
from .remote_errors import RemoteTraceback, remote_error
from .shipped import ship
from .task import run_segment

__all__ = ["ClusterExecutor", "RemoteTraceback"]

_now = time.perf_counter_ns
WORKER_CHECK_S = 0.5  # how often a wait checks that its worker is still there
PAUSE_CHECK_S = 0.05  # how often it looks for a pause request, when the task may ask


class ClusterExecutor:
    """What ``Session(cluster=...)`` runs its plans with (a Dask client or an address)."""

    def __init__(self, cluster):
        if isinstance(cluster, str):
            from distributed import Client  # the core imports Dask only when a cluster is used
            cluster, self._owned = Client(cluster), True
        else:
            self._owned = False
        self.client = cluster
        self._layouts: dict = {}  # (id(plan), worker count) -> (plan, [(segment, payload)])

    def workers(self) -> list:
        """Worker addresses in a stable order: ``task:K`` is the K-th (modulo their count)."""
        try:
            info = self.client.scheduler_info(n_workers=-1)
        except TypeError:  # Dask before 2025: every worker by default
            info = self.client.scheduler_info()
        return sorted(info["workers"])

    def close(self) -> None:
        if self._owned:
            self._owned = False
            self.client.close()

    def execute(self, plan, feed_values, ctx) -> list:
        """The fetched values of ``plan`` (the contract of ``runtime.executor.execute``)."""
        vals = plan.template.copy()
        for (slot, _), v in zip(plan.feed_slots, feed_values):
            vals[slot] = v
        workers = self.workers()
        if not workers:
            _no_workers(plan)
        layout = self._layout(plan, len(workers))
        observed = bool(ev._bus.subs)   # one span for the whole run, debugged or not
        with run_span(plan, ctx, observed), eager_mode():
            if plan.fold_steps and not plan.folds_done:
                run_folds(plan, vals, ctx, (lambda: run_steps_observed(
                    fold_items(plan), vals, ctx)) if observed else None)
            for seg, payload in layout:
                if seg.worker is None:
                    _run_here(plan, seg, payload, vals, ctx, observed)
                else:
                    self._run_there(plan, seg, payload, vals, ctx, workers[seg.worker])
        return [None if s is None else vals[s] for s in plan.fetch_slots]

    def _layout(self, plan, n: int) -> list:
        key = (id(plan), n)
        cached = self._layouts.get(key)
        if cached is None or cached[0] is not plan:
            info = step_info(plan)
            layout = []
            for seg in split(plan, n):
                if seg.worker is None:
                    payload = _sub_plan(plan, seg)
                else:  # pickled once: later runs send the same bytes
                    payload = (uuid.uuid4().hex, cloudpickle.dumps(
                        [ship(plan.steps[i], info[i]) for i in seg.indices]))
                layout.append((seg, payload))
            cached = self._layouts[key] = (plan, layout)
        return cached[1]

    def _run_there(self, plan, seg, payload, vals, ctx, address) -> None:
        bus = ev._bus
        capture = ev.CAPTURE_LEVELS[bus.capture] if bus.subs else None
        inputs = {s: vals[s] for s in seg.inputs}
        steps = attended(plan, seg)
        on_error = bool(steps) or errors_attended(plan, seg)
        channel = Channel(self.client, address) if on_error else None
        t_submit = _now()
        future = self.client.submit(run_segment, *payload, inputs, seg.outputs, ctx.kind,
                                    ctx.name, capture, bus.capture_bytes,
                                    channel and channel.attend(steps, on_error),
                                    workers=[address], allow_other_workers=False, pure=False)
        alive = lambda: not future.done() and address in self.workers()  # noqa: E731
        try:
            result = self._wait(future, address, None if channel is None else
                                lambda: channel.serve_one(plan, seg, ctx.run_id, alive))
        except errors.OpError:  # aborted at a pause
            future.cancel()
            raise
        except Exception as e:  # the worker died or the task could not run there
            first = plan.steps[seg.indices[0]].op
            names = ", ".join(plan.steps[i].op.name for i in seg.indices)
            err = errors.UnavailableError(
                None, first, f"Dask worker {address} could not run ops [{names}] (the first: "
                f"{errors.op_context(first)}): {type(e).__name__}: {e}")
            if ev._bus.subs:   # the task's own events died with it: the UI and trace say it
                t1 = _now()
                ev._bus.emit(ev.OpError(ev.next_seq(), ctx.run_id, t1, threading.get_ident(),
                                        first.name, first.type, None, type(err).__name__,
                                        err.message, str(first.source), t1 - t_submit))
            raise err from e
        except BaseException:  # Ctrl+C (maybe in a pdb session relayed from the worker)
            future.cancel()
            raise
        finally:
            if channel is not None:
                channel.close()
        _relay(result, ctx, t_submit, _now())
        if result["error"] is not None:
            err = remote_error(result["error"], plan, seg)
            if channel is not None:
                err._pfd_paused = True  # its error pause (if any) was offered already
            raise err from err.__cause__
        for s, v in result["values"].items():
            vals[s] = v

    def _wait(self, future, address: str, serve_pause):
        """The task's result; an error once its worker has left the cluster.

        A task pinned to a worker that died would wait for that worker for ever.
        ``serve_pause()`` answers a pause of the task's ops, if one is waiting.
        """
        poll = WORKER_CHECK_S if serve_pause is None else PAUSE_CHECK_S
        checked = time.monotonic()
        while True:
            try:
                return future.result(timeout=poll)
            except TimeoutError:  # what Dask raises too
                pass
            while serve_pause is not None and serve_pause():
                checked = time.monotonic()  # the worker just asked: it is there
            if time.monotonic() - checked >= WORKER_CHECK_S:
                checked = time.monotonic()
                if address not in self.workers():
                    future.cancel()
                    raise ConnectionError(f"worker {address} left the cluster")


def _no_workers(plan) -> None:
    placed = [s.op for s in plan.steps if task_of(s.op.device) is not None]
    if placed:
        raise errors.UnavailableError(
            None, placed[0], f"the Dask cluster has no workers to run "
            f"{errors.op_context(placed[0])} (placed on '{placed[0].device}')")


def _run_here(plan, seg, sub_plan, vals, ctx, observed) -> None:
    if hooks.runner is not None:  # a debugger is attached: its loop, for these steps
        hooks.runner(sub_plan, vals, ctx, None, span=False)
    elif observed:
        run_steps_observed(main_items(plan, seg.indices), vals, ctx)
    else:
        run_steps([plan.fast_steps[i] for i in seg.indices], vals, ctx)


def _sub_plan(plan, seg):
    """The plan restricted to a local segment's steps (what a debugger's loop runs)."""
    steps = [plan.steps[i] for i in seg.indices]
    return dataclasses.replace(
        plan, steps=steps, fast_steps=tuple(plan.fast_steps[i] for i in seg.indices),
        fold_steps=[],  # parallel_steps follow from steps (a cached property)
        folds_done=True, concurrent=False, blocking=tuple(plan.blocking[i] for i in seg.indices),
        overlap_schedule=None, event_info=None, event_heads=None)


def _relay(result, ctx, t_submit: int, t_back: int) -> None:
    """Emit a task's events here: this run's id, this process's seq, a stamped thread.

    Worker clocks differ from ours: the task's span is centred in the time we waited.
    """
    if not result["events"]:
        return
    thread = ev.remote_thread(result["address"], result["pid"], result["thread"],
                              result["thread_name"])
    span = result["t_end"] - result["t_start"]
    shift = t_submit + max(0, (t_back - t_submit) - span) // 2 - result["t_start"]
    # the UI and saved traces show where an op ran next to where it was made
    where = f" (on {ev.origin(thread).label})"
    address, pid = result["address"], result["pid"]
    for e in result["events"]:
        fields = {"seq": ev.next_seq(), "run_id": ctx.run_id, "t_ns": e.t_ns + shift,
                  "thread": thread}
        if type(e) in ev.WORKER_EVENTS:   # as fields too (SPEC §3b): no text to parse
            fields.update(worker=address, pid=pid)
        if type(e) in (ev.OpStart, ev.OpError) and e.source:
            fields["source"] = e.source + where
        ev._bus.emit(e._replace(**fields))
