"""A strict checker of the rules Perfetto's JSON importer applies (a test helper).

Modelled on what the importer does (see the project's Perfetto notes): pid/tid
are uint32; ``ts``/``dur`` in µs become integer ns (``llround(v * 1000)``); on
one thread a complete slice that starts inside another and ends after it is
dropped; a flow ``f`` with ``bp: "e"`` binds to the deepest slice enclosing its
timestamp (and an ``s`` likewise), so an endpoint that misses every op slice
binds to the run slice around it. ``problems(doc)`` lists every violation.
"""
from __future__ import annotations

import bisect
import json
import math
from collections import defaultdict

U32 = 1 << 32


def _ns(v) -> int:
    return int(round(v * 1000))


def _int_id(v) -> bool:
    return type(v) is int and 0 <= v < U32


def strict_loads(text: str):
    """``json.loads`` refusing NaN/Infinity, as RFC 8259 readers do."""
    def refuse(token):
        raise ValueError(f"non-standard JSON constant {token}")
    return json.loads(text, parse_constant=refuse)


def _slices(events, bad) -> dict:
    by_thread = defaultdict(list)
    for e in events:
        if e.get("ph") != "X":
            continue
        ts, dur = e.get("ts"), e.get("dur")
        if not all(type(v) in (int, float) and math.isfinite(v) for v in (ts, dur)) or dur < 0:
            bad.append(f"X slice {e.get('name')!r} has ts={ts!r} dur={dur!r}")
            continue
        start = _ns(ts)
        by_thread[(e["pid"], e["tid"])].append((start, start + _ns(dur), e))
    for sl in by_thread.values():
        sl.sort(key=lambda s: (s[0], -s[1]))
    return by_thread


def _check_nesting(by_thread, bad) -> None:
    for (pid, tid), sl in by_thread.items():
        stack = []
        for start, end, e in sl:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                p = stack[-1][2]
                bad.append(f"tid {tid}: slice {e['name']!r} [{start}, {end}] overlaps "
                           f"{p['name']!r} [{stack[-1][0]}, {stack[-1][1]}] (Perfetto drops it)")
                continue
            stack.append((start, end, e))


def _check_runs(by_thread, bad) -> None:
    runs = {}
    for sl in by_thread.values():
        for start, end, e in sl:
            if e.get("cat") == "run":
                rid = e.get("args", {}).get("run_id")
                if rid is None:  # older traces name the run "<kind> run <id>"
                    rid = int(e["name"].split()[2])
                runs[rid] = (start, end, e)
    for sl in by_thread.values():
        for start, end, e in sl:
            if e.get("cat") in ("op", "eager"):
                run = runs.get(e["args"].get("run_id"))
                if run is None:
                    bad.append(f"op slice {e['name']!r} has no run slice "
                               f"(run_id {e['args'].get('run_id')})")
                elif not (run[0] <= start and end <= run[1]):
                    bad.append(f"op slice {e['name']!r} [{start}, {end}] is outside its run "
                               f"{run[2]['name']!r} [{run[0]}, {run[1]}]")


def _binding(by_thread, starts, pid, tid, t):
    """The deepest slice on the thread enclosing ``t`` (what a flow endpoint binds to):
    going back from the last slice starting at or before ``t``, the first that contains it."""
    sl = by_thread.get((pid, tid), ())
    for i in range(bisect.bisect_right(starts.get((pid, tid), ()), t) - 1, -1, -1):
        if sl[i][1] >= t:
            return sl[i]
    return None


def _check_flows(events, by_thread, bad) -> int:
    ends = defaultdict(dict)
    for e in events:
        if e.get("ph") in ("s", "f"):
            if e["ph"] in ends[e.get("id")]:
                bad.append(f"flow id {e.get('id')} has two {e['ph']!r} events")
            ends[e.get("id")][e["ph"]] = e
    starts = {k: [s[0] for s in sl] for k, sl in by_thread.items()}
    for fid, pair in ends.items():
        if set(pair) != {"s", "f"}:
            bad.append(f"flow id {fid} is not an s/f pair: {sorted(pair)}")
            continue
        s, f = pair["s"], pair["f"]
        if (s.get("cat"), s.get("name")) != (f.get("cat"), f.get("name")):
            bad.append(f"flow id {fid}: s and f differ in cat/name")
        if f.get("bp") != "e":
            bad.append(f"flow id {fid}: f without bp:'e' binds to the next slice, not its own")
        bound = []
        for end in (s, f):
            b = _binding(by_thread, starts, end["pid"], end["tid"], _ns(end["ts"]))
            if b is None or b[2].get("cat") != "op":
                what = "nothing" if b is None else f"{b[2].get('cat')} slice {b[2]['name']!r}"
                bad.append(f"flow id {fid}: {end['ph']} at {end['ts']} binds to {what}, "
                           "not an op slice")
            bound.append(b)
        if None not in bound and bound[0][1] > bound[1][0]:
            bad.append(f"flow id {fid}: producer {bound[0][2]['name']!r} ends after consumer "
                       f"{bound[1][2]['name']!r} starts")
    return len(ends)


def problems(doc) -> list[str]:
    """Every way ``doc`` (a parsed Chrome JSON trace) breaks Perfetto's import rules."""
    bad: list[str] = []
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        return ["no traceEvents list"]
    named = set()
    for e in events:
        if not (_int_id(e.get("pid")) and _int_id(e.get("tid"))):
            bad.append(f"{e.get('ph')} event {e.get('name')!r}: pid/tid {e.get('pid')!r}/"
                       f"{e.get('tid')!r} not uint32")
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            named.add((e.get("pid"), e.get("tid")))
        if e.get("ph") == "i" and e.get("s") not in ("t", "p", "g"):
            bad.append(f"instant {e.get('name')!r} has scope {e.get('s')!r}")
    if bad:
        return bad
    by_thread = _slices(events, bad)
    for key in by_thread:
        if key[1] == 0:
            bad.append("slices on tid 0 merge into the process's main thread")
        if key not in named:
            bad.append(f"tid {key[1]} has slices but no thread_name metadata")
    _check_nesting(by_thread, bad)
    _check_runs(by_thread, bad)
    _check_flows(events, by_thread, bad)
    return bad


def check_file(path) -> dict:
    """Parse ``path`` strictly and assert it has no problems; counts for reporting."""
    with open(path, encoding="utf-8") as f:
        doc = strict_loads(f.read())
    found = problems(doc)
    assert not found, f"{path}: {len(found)} Perfetto import problems:\n" + "\n".join(found[:20])
    events = doc["traceEvents"]
    return {"slices": sum(e["ph"] == "X" for e in events),
            "threads": sum(e["ph"] == "M" and e["name"] == "thread_name" for e in events),
            "flows": sum(e["ph"] == "f" for e in events)}
