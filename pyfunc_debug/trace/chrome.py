"""Chrome Trace Event Format export (what Perfetto UI and chrome://tracing open).

One complete ``X`` slice per op execution (µs), one per run enclosing its ops,
eager ops nested inside their py_function's slice, ``i`` instants for errors,
breakpoint hits and warnings, ``M`` metadata naming the process and threads,
and ``s``/``f`` flow events from each producer op to its consumers. Events
that ran in another process (``events.origin`` of their thread: a Dask worker)
get a process track of their own, one per worker.

Written for Perfetto's JSON importer, which is stricter than chrome://tracing:
pid/tid are read as uint32 (so threads are numbered 1..N here, their real
names and idents in ``thread_name`` metadata); on one thread a slice that
overlaps its parent is dropped (so slices are rebuilt with a stack per thread,
and a slice left open — an op interrupted, a run cut short — is closed where
its parent closes); a flow end binds to the slice enclosing its timestamp (so
flow ends sit inside the op's own slice, before any child slice starts).
"""
from __future__ import annotations

import json
import os

from ..events import BreakpointHit, OpEnd, OpError, OpStart, RunEnd, RunStart, Warning, origin
from .bulk import paused_gc

__all__ = ["to_chrome", "write_chrome"]

PID = 1  # Perfetto keeps pid/tid only when they fit in 32 bits; the real pid goes in metadata


class _Open:
    """A slice begun but not yet ended on one thread's stack."""

    __slots__ = ("key", "start", "event", "child_start")

    def __init__(self, key, start, event):
        self.key = key
        self.start = start
        self.event = event
        self.child_start = None  # when its first child began: flow ends go before it


def _op_args(e, start: OpStart | None) -> dict:
    args = {"type": e.op_type, "run_id": e.run_id}
    if e.parent:
        args["parent"] = e.parent
    if type(e) is OpEnd:
        if e.inputs:
            args["inputs"] = [s.short() for s in e.inputs]
        if e.outputs:
            args["outputs"] = [s.short() for s in e.outputs]
    elif type(e) is OpError:
        args.update(error=e.error_type, message=e.message[:2000])
    else:
        args["unfinished"] = True  # the trace ended (or the op was cut off) before it did
    if start is not None and start.source:
        args["source"] = start.source
    return args


class _Builder:
    """One pass over the events: slices from per-thread stacks, then flows."""

    def __init__(self, t0: int, pid: int, origin_of=origin):
        self.t0 = t0
        self.pid = pid
        self.origin_of = origin_of
        self.tids: dict[int, int] = {}      # thread ident -> 1..N, in order of appearance
        self.pids: dict[int, int] = {}      # tid -> its process track (``pid`` for this one)
        self.processes: dict = {}           # (address, pid) of a remote process -> its track
        self.stacks: dict[int, list] = {}
        self.out: list = []
        self.anchors: dict = {}             # (run_id, op) -> (flow timestamp ns, tid)
        self.consumers: list = []           # (OpStart, tid) of graph ops with producers
        self.last_ns: dict[int, int] = {}

    def tid(self, ident: int) -> int:
        t = self.tids.get(ident)
        if t is None:
            t = self.tids[ident] = len(self.tids) + 1
            self.stacks[ident] = []
            o = self.origin_of(ident)
            key = None if o is None else (o.address, o.pid)
            if key is None:
                self.pids[t] = self.pid
            else:
                self.pids[t] = self.processes.setdefault(
                    key, self.pid + 1 + len(self.processes))
        return t

    def push(self, ident, key, start, event) -> None:
        stack = self.stacks[ident]
        if stack and stack[-1].child_start is None:
            stack[-1].child_start = start
        stack.append(_Open(key, start, event))

    def pop(self, ident, key, end, closing) -> _Open | None:
        """Close ``key``'s slice at ``end``; slices left open above it close there too."""
        stack = self.stacks[ident]
        for depth in range(len(stack) - 1, -1, -1):
            if stack[depth].key == key:
                break
        else:
            return None
        while len(stack) > depth + 1:
            self.close(ident, stack.pop(), end, None)
        entry = stack.pop()
        self.close(ident, entry, end, closing)
        return entry

    def pop_elsewhere(self, key, end, closing) -> bool:
        """Close a run begun on another thread, on its own track: a framework's callbacks
        form one run, begun by the first call's thread and ended by the program's (it was
        drawn twice, once "unfinished" and once as a "partial run")."""
        for ident, stack in self.stacks.items():
            if any(entry.key == key for entry in stack):
                self.pop(ident, key, max(end, self.last_ns.get(ident, end)), closing)
                return True
        return False

    def close(self, ident, entry: _Open, end: int, closing) -> None:
        """Emit the ``X`` slice of ``entry`` ending at ``end`` (``closing``: its end event)."""
        start = entry.start
        end = max(end, start)
        tid = self.tids[ident]
        e = entry.event
        if type(e) is RunStart:
            name = f"{e.kind or 'partial'} run {e.run_id}" + (f" {e.name}" if e.name else "")
            args = {"run_id": e.run_id, "ops": len(e.ops), "folded": list(e.folded)}
            if type(closing) is RunEnd:
                args.update(ok=closing.ok, error=closing.error)
            else:
                args["unfinished"] = True
            cat = "run"
        else:
            name = e.op
            args = _op_args(closing if closing is not None else e, e)
            cat = "eager" if e.parent else "op"
            if not e.parent:
                # a point inside this slice and before its first child: flows bind here
                limit = min(entry.child_start or end, end)
                self.anchors[(e.run_id, e.op)] = (start + (limit - start) // 2, tid)
        self.out.append({"ph": "X", "name": name, "cat": cat, "ts": (start - self.t0) / 1000.0,
                         "dur": (end - start) / 1000.0, "pid": self.pids[tid], "tid": tid,
                         "args": args})

    def orphan(self, ident, e) -> None:
        """An end without its ``OpStart`` (a partial recording): its own duration places it."""
        start = OpStart(e.seq, e.run_id, e.t_ns - e.duration_ns, e.thread, e.op, e.op_type,
                        e.parent)
        self.close(ident, _Open(None, start.t_ns, start), e.t_ns, e)

    def instant(self, e, tid) -> None:
        cls = type(e)
        args = {"type": e.op_type}
        if cls is OpError:
            args.update(error=e.error_type, message=e.message[:2000])
        elif cls is BreakpointHit:
            args.update(when=e.when, breakpoint=e.breakpoint)
        else:
            args.update(message=e.message)
        self.out.append({"ph": "i", "s": "t", "name": f"{cls.__name__}: {e.op}",
                         "cat": cls.__name__, "ts": (e.t_ns - self.t0) / 1000.0,
                         "pid": self.pids[tid], "tid": tid, "args": args})

    def feed(self, events) -> None:
        for e in events:
            cls = type(e)
            ident = e.thread
            tid = self.tid(ident)
            t = e.t_ns
            self.last_ns[ident] = t
            if cls is OpStart:
                self.push(ident, (e.run_id, e.op, e.parent), t, e)
                if e.producers and not e.parent:
                    self.consumers.append(e)
            elif cls is OpEnd or cls is OpError:
                if self.pop(ident, (e.run_id, e.op, e.parent), t, e) is None:
                    self.orphan(ident, e)
                if cls is OpError:
                    self.instant(e, tid)
            elif cls is RunStart:
                self.push(ident, ("run", e.run_id), t, e)
            elif cls is RunEnd:
                key = ("run", e.run_id)
                if self.pop(ident, key, t, e) is None and not self.pop_elsewhere(key, t, e):
                    start = RunStart(e.seq, e.run_id, t - e.duration_ns, ident, "", "")
                    self.close(ident, _Open(None, start.t_ns, start), t, e)
            elif cls in (BreakpointHit, Warning):
                self.instant(e, tid)

    def finish(self) -> None:
        """Close what the trace left open at its thread's last timestamp, innermost first;
        a run at the trace's last timestamp (its ops may have run on helper threads)."""
        last = max(self.last_ns.values(), default=self.t0)
        for ident, stack in self.stacks.items():
            end = self.last_ns.get(ident, self.t0)
            while stack:
                entry = stack.pop()
                is_run = isinstance(entry.key, tuple) and entry.key[:1] == ("run",)
                self.close(ident, entry, last if is_run and not stack else end, None)

    def flows(self) -> None:
        flow_id = 0
        for s in self.consumers:
            consumer = self.anchors.get((s.run_id, s.op))
            if consumer is None:
                continue
            for producer in dict.fromkeys(s.producers):
                p = self.anchors.get((s.run_id, producer))
                if p is None:
                    continue  # constants and feeds do not run
                flow_id += 1
                self.out.append({"ph": "s", "id": flow_id, "name": "dataflow", "cat": "dataflow",
                                 "ts": (p[0] - self.t0) / 1000.0, "pid": self.pids[p[1]],
                                 "tid": p[1]})
                self.out.append({"ph": "f", "bp": "e", "id": flow_id, "name": "dataflow",
                                 "cat": "dataflow", "ts": (consumer[0] - self.t0) / 1000.0,
                                 "pid": self.pids[consumer[1]], "tid": consumer[1]})


def _metadata(b: _Builder, thread_names, process_name, real_pid) -> list:
    out = [{"ph": "M", "name": "process_name", "pid": b.pid, "tid": 0,
            "args": {"name": process_name, "os_pid": real_pid}}]
    for (address, os_pid), pid in b.processes.items():
        out.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                    "args": {"name": f"worker {address}", "os_pid": os_pid,
                             "address": address}})
    for ident, tid in b.tids.items():
        o = b.origin_of(ident)
        name = thread_names.get(ident) or (o.thread_name if o is not None else
                                           "main" if tid == 1 else f"thread {tid}")
        pid = b.pids[tid]
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                    "args": {"name": name, "ident": ident}})
        out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                    "args": {"sort_index": tid}})
    return out


def _start_ns(e) -> int:
    d = getattr(e, "duration_ns", 0) if type(e) in (OpEnd, OpError) else 0
    return e.t_ns - (d or 0)


def to_chrome(events, pid: int = PID, thread_names=None, process_name="pyfunc-debug",
              real_pid: int | None = None, origin_of=origin) -> dict:
    """The Chrome trace object (``{"traceEvents": [...]}``) for ``events``.

    ``origin_of(thread)`` names the process a thread belongs to (``None``: this one).
    """
    events = events if isinstance(events, (list, tuple)) else list(events)
    t0 = min((_start_ns(e) for e in events), default=0)
    b = _Builder(t0, pid, origin_of)
    with paused_gc():
        b.feed(events)
        b.finish()
        b.flows()
    meta = _metadata(b, thread_names or {}, process_name,
                     os.getpid() if real_pid is None else real_pid)
    return {"traceEvents": meta + b.out, "displayTimeUnit": "ms",
            "otherData": {"producer": "pyfunc-debug"}}


def write_chrome(path, events, **kw) -> None:
    """Write ``events`` as Chrome JSON: ``json.dumps`` (the C encoder) and one write."""
    text = json.dumps(to_chrome(events, **kw), separators=(",", ":"))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
