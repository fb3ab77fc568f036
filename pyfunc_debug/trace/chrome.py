"""Chrome Trace Event Format export (what Perfetto UI and chrome://tracing open).

One complete ``X`` slice per op execution (µs), one per run enclosing its ops,
eager ops nested inside their py_function's slice, ``i`` instants for errors,
breakpoint hits and warnings, ``M`` metadata naming the process and threads,
and ``s``/``f`` flow events from each producer op to its consumers.
"""
from __future__ import annotations

import json
import os

from ..events import BreakpointHit, OpEnd, OpError, OpStart, RunEnd, RunStart, Warning

__all__ = ["to_chrome", "write_chrome"]


def _us(t_ns: int, t0: int) -> float:
    return (t_ns - t0) / 1000.0


def _op_args(e: OpEnd) -> dict:
    args = {"type": e.op_type, "run_id": e.run_id}
    if e.parent:
        args["parent"] = e.parent
    if e.inputs:
        args["inputs"] = [s.short() for s in e.inputs]
    if e.outputs:
        args["outputs"] = [s.short() for s in e.outputs]
    return args


def to_chrome(events, pid: int | None = None, thread_names=None, process_name="pyfunc-debug") -> dict:
    """The Chrome trace object (``{"traceEvents": [...]}``) for ``events``."""
    pid = os.getpid() if pid is None else pid
    events = list(events)
    t0 = min((e.t_ns for e in events), default=0)
    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
            "args": {"name": process_name}}]
    tids = sorted({e.thread for e in events})
    names = thread_names or {}
    for i, tid in enumerate(tids):
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                    "args": {"name": names.get(tid, "main" if i == 0 else f"thread {i}")}})
    starts, ends = {}, {}
    sources = {}
    for e in events:
        cls = type(e)
        if cls is RunStart:
            starts[e.run_id] = e
        elif cls is OpStart:
            sources[(e.run_id, e.op, e.parent)] = e
        elif cls is OpEnd:
            start_ts = _us(e.t_ns - e.duration_ns, t0)
            ends[(e.run_id, e.op)] = (start_ts, e.thread)
            ev = {"ph": "X", "name": e.op, "cat": "eager" if e.parent else "op",
                  "ts": start_ts, "dur": e.duration_ns / 1000.0, "pid": pid, "tid": e.thread,
                  "args": _op_args(e)}
            src = sources.get((e.run_id, e.op, e.parent))
            if src is not None and src.source:
                ev["args"]["source"] = src.source
            out.append(ev)
        elif cls is RunEnd and e.run_id in starts:
            s = starts[e.run_id]
            label = f"{s.kind} run {e.run_id}" + (f" {s.name}" if s.name else "")
            out.append({"ph": "X", "name": label, "cat": "run", "ts": _us(s.t_ns, t0),
                        "dur": e.duration_ns / 1000.0, "pid": pid, "tid": s.thread,
                        "args": {"ok": e.ok, "error": e.error, "ops": len(s.ops),
                                 "folded": list(s.folded)}})
        elif cls in (OpError, BreakpointHit, Warning):
            args = {"type": e.op_type}
            if cls is OpError:
                args.update(error=e.error_type, message=e.message[:2000])
            elif cls is BreakpointHit:
                args.update(when=e.when, breakpoint=e.breakpoint)
            else:
                args.update(message=e.message)
            out.append({"ph": "i", "s": "t", "name": f"{cls.__name__}: {e.op}", "cat": cls.__name__,
                        "ts": _us(e.t_ns, t0), "pid": pid, "tid": e.thread, "args": args})
    out.extend(_flows(sources.values(), ends, t0, pid))
    return {"traceEvents": out, "displayTimeUnit": "ms",
            "otherData": {"producer": "pyfunc-debug"}}


def _flows(op_starts, ends, t0, pid) -> list:
    flows, flow_id = [], 0
    for s in op_starts:
        if s.parent:
            continue
        consumer = ends.get((s.run_id, s.op))
        if consumer is None:
            continue
        for producer in dict.fromkeys(s.producers):
            p = ends.get((s.run_id, producer))
            if p is None:
                continue  # constants and feeds do not run
            flow_id += 1
            flows.append({"ph": "s", "id": flow_id, "name": "dataflow", "cat": "dataflow",
                          "ts": p[0], "pid": pid, "tid": p[1]})
            flows.append({"ph": "f", "bp": "e", "id": flow_id, "name": "dataflow",
                          "cat": "dataflow", "ts": consumer[0], "pid": pid, "tid": consumer[1]})
    return flows


def write_chrome(path, events, **kw) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(to_chrome(events, **kw), f, separators=(",", ":"))
