"""Comparing two recorded runs: the first op whose outputs diverge (SPEC §9).

Runs are matched by their index in each trace, ops inside a run by name in
execution order (an eager op inside a ``py_function`` by its parent, its name
and how many ops of that name ran before it there). A framework's callbacks
(``--tf``/``--jax``: one run of many calls, made by parallel threads in an
order no run repeats) are matched by their inputs instead: a call of an op
with the other trace's call of that op on the same inputs (the k-th such call
with the k-th). Outputs are compared by
their summaries — shape, dtype, NaN/Inf counts, min/max/mean within
``numpy.isclose`` tolerances — and by value when both traces captured it.
Ops complete after every op they read from, so the first mismatch in execution
order is where the runs part, not somewhere downstream of it.
"""
from __future__ import annotations

import math
import os
import shutil
import sys
from dataclasses import dataclass, field, replace

import numpy as np

from ..events import OpEnd, OpError, OpStart, RunStart
from .summary import ValueSummary

__all__ = ["diff_traces", "Divergence", "run_diff", "BadTrace"]

_NUMERIC = ("min", "max", "mean")


class BadTrace(ValueError):
    """An input ``diff`` cannot compare; the message names the file."""


@dataclass(frozen=True)
class Divergence:
    """Where two traces part: run index, op, both sides' summaries, the ops that agreed."""

    run: int                         # index of the run in each trace (0 = the first;
                                     # the report counts from 1)
    op: str | None                   # None when one trace has more runs
    a: ValueSummary | None           # the differing output's summary in A (None: no output)
    b: ValueSummary | None
    agreed: tuple = ()               # ops upstream of ``op`` whose outputs agreed
    reason: str = ""
    output: int | None = None        # which output of the op differs
    parent: str | None = None        # the py_function an eager op ran in
    op_type: str = ""
    labels: tuple = ("A", "B")
    events: tuple = field(default=(None, None), repr=False)  # the two OpEnd/OpError events
    absent: str = "(did not run)"    # the side with no event: what its column says
    tolerances: tuple = (1e-5, 1e-8)  # (rtol, atol): a row is marked when beyond them

    def report(self) -> str:
        """Both sides side by side, then the agreeing upstream ops (what the CLI prints)."""
        where = f"run {self.run + 1}" + (f", op {self.op!r}" if self.op else "")
        if self.parent:
            where += f" (eager op inside {self.parent!r})"
        elif self.op_type:
            where += f" ({self.op_type})"
        if self.output is not None:
            where += f", output {self.output}"
        lines = [f"A: {self.labels[0]}", f"B: {self.labels[1]}",
                 f"first difference at {where}: {self.reason}"]
        lines += _side_by_side(self.a, self.b, self.events, self.absent, self.tolerances)
        if self.op is not None:
            names = ", ".join(self.agreed) if self.agreed else "(none)"
            lines.append(f"upstream ops that agreed ({len(self.agreed)}): {names}")
        return "\n".join(lines)

    __str__ = report


# -- reading the two sides ----------------------------------------------------------


class _Run:
    __slots__ = ("run_id", "label", "order", "results", "producers", "parents", "by_inputs")

    def __init__(self, run_id):
        self.run_id = run_id
        self.by_inputs = False          # a framework's callbacks: calls matched by inputs
        self.label = f"run {run_id}"
        self.order: list = []           # op keys in completion order
        self.results: dict = {}         # key -> OpEnd | OpError
        self.producers: dict = {}       # graph op name -> names of the ops it reads
        self.parents: dict = {}         # key -> parent key (eager ops)


def _runs(events) -> list:
    runs: dict = {}
    counts: dict = {}
    for e in events:
        cls = type(e)
        if cls not in (RunStart, OpStart, OpEnd, OpError) or e.run_id is None:
            continue
        run = runs.get(e.run_id)
        if run is None:
            run = runs[e.run_id] = _Run(e.run_id)
        if cls is RunStart:
            run.label = f"{e.kind} run {e.run_id}" + (f" {e.name}" if e.name else "")
            run.by_inputs = e.name == CALLBACKS
        elif cls is OpStart:
            if not e.parent:
                run.producers[e.op] = e.producers
        else:
            given = _inputs_key(e) if run.by_inputs else None
            n = counts.get((e.run_id, e.parent, e.op, given), 0)
            counts[(e.run_id, e.parent, e.op, given)] = n + 1
            key = (e.parent, e.op, n if given is None else (given, n))
            run.order.append(key)
            run.results[key] = e
    return list(runs.values())


CALLBACKS = "callbacks"   # the name of a framework's callback run (external_calls)


def _inputs_key(e) -> str:
    """What tells a callback's calls apart: its inputs' summaries, exactly (the same values
    make the same summary); a failed call (no inputs recorded) by its error's type."""
    if type(e) is OpError:
        return f"error {e.error_type}"
    return repr([(tuple(s.shape), *s[1:9]) for s in e.inputs])   # a shape read back: a list


def _inputs_text(e) -> str:
    if e is None or type(e) is not OpEnd or not e.inputs:
        return ""
    return ", ".join(f"in {j} {s.short()}" for j, s in enumerate(e.inputs[:3]))


def _events(x, which: str):
    if isinstance(x, (str, os.PathLike)):
        from .jsonl import load_trace
        path = os.fspath(x)
        if path.endswith(".json"):
            raise BadTrace(f"{path} is a Chrome trace (for Perfetto); diff compares .jsonl traces "
                           "(pyfunc-debug trace SCRIPT -o run.jsonl)")
        try:
            return load_trace(path)
        except OSError as e:
            raise BadTrace(f"{path}: {e.strerror or e}") from None
        except ValueError as e:
            raise BadTrace(str(e)) from None
    if isinstance(x, list):   # a loaded trace keeps its header (what it captured)
        return x
    try:
        return list(x)
    except TypeError:
        raise BadTrace(f"trace {which} must be a path or a list of events, "
                       f"not {type(x).__name__}") from None


# -- comparing -------------------------------------------------------------------------


def _close(x, y, rtol, atol) -> bool:
    if x is None or y is None:
        return x is y
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return bool(np.isclose(x, y, rtol=rtol, atol=atol))


def _values_differ(va, vb, rtol, atol) -> str | None:
    xa, xb = np.asarray(va), np.asarray(vb)
    if xa.shape != xb.shape:
        return f"captured values have shapes {xa.shape} vs {xb.shape}"
    if xa.dtype.kind in "biufc" and xb.dtype.kind in "biufc":
        close = np.isclose(xa, xb, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            i = np.unravel_index(int(np.argmin(close)), close.shape) if close.ndim else ()
            return (f"captured values differ at {len(close.ravel()) - int(close.sum())} "
                    f"element(s), first at index {tuple(int(k) for k in i)}: "
                    f"{xa[i].tolist()!r} vs {xb[i].tolist()!r}")
        return None
    if not np.array_equal(xa, xb):
        return "captured values differ"
    return None


def compare_summaries(sa: ValueSummary, sb: ValueSummary, rtol: float, atol: float):
    """Why two output summaries differ, or None when they agree within tolerance."""
    if tuple(sa.shape) != tuple(sb.shape):
        return f"shape {tuple(sa.shape)} vs {tuple(sb.shape)}"
    if sa.dtype != sb.dtype:
        return f"dtype {sa.dtype} vs {sb.dtype}"
    if sa.nan != sb.nan:
        return f"NaN count {sa.nan} vs {sb.nan}"
    if sa.inf != sb.inf:
        return f"Inf count {sa.inf} vs {sb.inf}"
    for name in _NUMERIC:
        x, y = getattr(sa, name), getattr(sb, name)
        if not _close(x, y, rtol, atol):
            return f"{name} {x!r} vs {y!r} (beyond rtol={rtol:g}, atol={atol:g})"
    if sa.min is None and sb.min is None and sa.preview != sb.preview:
        return f"values {sa.preview} vs {sb.preview}"  # strings: no statistics to compare
    if sa.value is not None and sb.value is not None:
        return _values_differ(sa.value, sb.value, rtol, atol)
    return None


def _first_output(e):
    return e.outputs[0] if type(e) is OpEnd and e.outputs else None


def _gist(message: str) -> str:
    """The last informative line of an error message (not the ``[[{{node ...}}]]`` tag)."""
    lines = [ln.strip() for ln in message.splitlines()
             if ln.strip() and not ln.strip().startswith("[[")]
    return lines[-1][:200] if lines else ""


def _compare_ops(ea, eb, rtol, atol):
    """(reason, output index, summary A, summary B), or None when the two agree."""
    if type(ea) is OpError or type(eb) is OpError:
        if type(ea) is OpError and type(eb) is OpError:
            if ea.error_type == eb.error_type:
                return None
            return f"failed with {ea.error_type} vs {eb.error_type}", None, None, None
        which, err = ("A", ea) if type(ea) is OpError else ("B", eb)
        return (f"failed in {which} only ({err.error_type}: {_gist(err.message)})", None,
                _first_output(ea), _first_output(eb))
    if len(ea.outputs) != len(eb.outputs):
        return f"{len(ea.outputs)} vs {len(eb.outputs)} outputs", None, None, None
    for i, (sa, sb) in enumerate(zip(ea.outputs, eb.outputs)):
        why = compare_summaries(sa, sb, rtol, atol)
        if why is not None:
            return why, i, sa, sb
    return None


def _upstream(run: _Run, key, upto: int) -> tuple:
    """Names of the ops that ``key`` depends on and that completed before it, in order."""
    parent, op, _ = key
    graph_op = parent or op
    seen, todo = set(), [graph_op]
    while todo:
        for p in run.producers.get(todo.pop(), ()):
            if p not in seen:
                seen.add(p)
                todo.append(p)
    out = []
    for k in run.order[:upto]:
        kp, kop, _ = k
        if kp is None and kop in seen:
            out.append(kop)
        elif parent is not None and kp == parent:
            out.append(f"{kop} (in {kp})")  # an earlier eager op of the same py_function
    return tuple(out)


_NO_SUCH_CALL = "(no call on those inputs)"   # a callback run's side with no such call


def _first_in_run(i, ra: _Run, rb: _Run, rtol, atol, labels):
    if ra.by_inputs and rb.by_inputs:
        return _first_call(i, ra, rb, rtol, atol, labels)
    for n, key in enumerate(ra.order):
        ea = ra.results[key]
        eb = rb.results.get(key)
        found = (("ran in A but not in B", None, _first_output(ea), None) if eb is None
                 else _compare_ops(ea, eb, rtol, atol))
        if found is not None:
            why, out, sa, sb = found
            return Divergence(i, key[1], sa, sb, _upstream(ra, key, n), why, out, key[0],
                              ea.op_type, labels, (ea, eb))
    for n, key in enumerate(rb.order):
        if key not in ra.results:
            eb = rb.results[key]
            return Divergence(i, key[1], None, _first_output(eb), _upstream(rb, key, n),
                              "ran in B but not in A", None, key[0], eb.op_type, labels,
                              (None, eb))
    return None


def _first_call(i, ra: _Run, rb: _Run, rtol, atol, labels):
    """A framework's callback runs: first the calls both made on the same inputs whose
    outputs differ (a real difference); then the calls one made on inputs the other
    never had (different data, or runs that stopped at different points: a parallel
    map runs ahead of what is consumed, so a failing run stops after more or fewer)."""
    for n, key in enumerate(ra.order):
        eb = rb.results.get(key)
        if eb is None:
            continue
        ea = ra.results[key]
        found = _compare_ops(ea, eb, rtol, atol)
        if found is not None:
            why, out, sa, sb = found
            return Divergence(i, key[1], sa, sb, _upstream(ra, key, n),
                              f"{why}, in its calls on the same inputs ({_inputs_text(ea)})",
                              out, key[0], ea.op_type, labels, (ea, eb), _NO_SUCH_CALL)
    only_a = [k for k in ra.order if k not in rb.results]
    only_b = [k for k in rb.order if k not in ra.results]
    if not only_a and not only_b:
        return None
    first, run, side = (only_a[0], ra, "A") if only_a else (only_b[0], rb, "B")
    e = run.results[first]
    n, m = len(only_a), len(only_b)
    counts = (f"{_calls(n)} in A {'was' if n == 1 else 'were'} on inputs B never gave it "
              f"({m} the other way)" if n else
              f"{_calls(m)} in B {'was' if m == 1 else 'were'} on inputs A never gave it")
    why = (f"{counts}: the data differ, or the runs stopped at different points; "
           f"the first, in {side}: {_inputs_text(e) or 'a failed call'}")
    ends, summaries = ((e, None), (_first_output(e), None)) if side == "A" else \
        ((None, e), (None, _first_output(e)))
    return Divergence(i, first[1], *summaries, (), why, None, first[0], e.op_type, labels,
                      ends, _NO_SUCH_CALL)


def _calls(n: int) -> str:
    return f"{n} call{'' if n == 1 else 's'}"


def _check_tolerance(name, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise BadTrace(f"{name} must be a finite number >= 0, not {v!r}")
    return float(v)


def diff_traces(a, b, rtol: float = 1e-5, atol: float = 1e-8, labels=None):
    """The first op whose outputs differ between traces ``a`` and ``b``, or None.

    ``a`` and ``b`` are ``.jsonl`` paths or lists of events. Returns a
    ``Divergence`` (``.run``, ``.op``, ``.a``, ``.b``, ``.agreed``; ``str()`` of
    it is the report) or ``None`` when every run and op agrees.
    """
    rtol, atol = _check_tolerance("rtol", rtol), _check_tolerance("atol", atol)
    if labels is None:
        labels = tuple(os.fspath(x) if isinstance(x, (str, os.PathLike)) else "(a list of events)"
                       for x in (a, b))
    events_a, events_b = _events(a, "a"), _events(b, "b")
    for events, label in ((events_a, labels[0]), (events_b, labels[1])):
        if _capture(events) == "none":   # no summaries: every op would seem to agree
            raise BadTrace(f"{label} was recorded with --capture none: it holds no values to "
                           "compare (record it with --capture summary, the default, or full)")
    runs_a, runs_b = _runs(events_a), _runs(events_b)
    for i, (ra, rb) in enumerate(zip(runs_a, runs_b)):
        found = _first_in_run(i, ra, rb, rtol, atol, labels)
        if found is not None:
            return replace(found, tolerances=(rtol, atol))
    if len(runs_a) != len(runs_b):
        i = min(len(runs_a), len(runs_b))
        return Divergence(i, None, None, None, (),
                          f"A has {len(runs_a)} run{'' if len(runs_a) == 1 else 's'}, "
                          f"B has {len(runs_b)}",
                          labels=labels)
    return None


# -- the report ------------------------------------------------------------------------

_ROWS = ("shape", "dtype", "min", "max", "mean", "nan", "inf", "preview")


def _cell(s: ValueSummary | None, name: str, event, absent: str) -> str:
    if s is None:
        if name == "shape":
            if event is None:
                return absent
            if type(event) is OpError:
                return f"(failed: {event.error_type})"
            return "(no output)"
        return ""
    v = getattr(s, name)
    if name == "shape":
        return "(" + ", ".join(str(d) for d in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, float):
        return f"{v:.8g}"
    return str(v)


def _side_by_side(sa, sb, events, absent, tolerances=(1e-5, 1e-8), columns=None) -> list:
    """Rows of both sides; ``*`` marks a row that differs — min, max and mean only beyond
    the tolerances (``diff --rtol/--atol``), as the comparison itself decides. ``columns``:
    the width to fit (a cell cut to fit ends in "…"); default, the terminal's."""
    if sa is None and sb is None and events == (None, None):
        return []
    if columns is None:   # COLUMNS first (a pipe to the UI sets it), then the terminal
        columns = shutil.get_terminal_size((120, 24)).columns
    room = max(24, columns - 10)   # after the marker and the row's name
    width = max(24, min(48, max(len(_cell(sa, n, events[0], absent)) for n in _ROWS) + 2))
    width = max(12, min(width, room // 2))
    out = [f"  {'':8}{'A':<{width}}B"]
    for name in _ROWS:
        ca, cb = _cell(sa, name, events[0], absent), _cell(sb, name, events[1], absent)
        same = ca == cb
        if not same and name in _NUMERIC and sa is not None and sb is not None:
            x, y = getattr(sa, name), getattr(sb, name)
            same = isinstance(x, float) and isinstance(y, float) and _close(x, y, *tolerances)
        out.append(f"{' ' if same else '*'} {name:8}{_fit(ca, width - 2):<{width}}"
                   f"{_fit(cb, min(60, room - width))}")
    return out


def _fit(text: str, n: int) -> str:
    """``text`` in ``n`` characters: cut, it ends in "…" (never a number cut silently)."""
    return text if len(text) <= n else text[:n - 1] + "…"


def _capture(events) -> str | None:
    """What a loaded trace file captured (its header's ``capture``); None for a list."""
    return getattr(events, "header", {}).get("capture")


def run_diff(a, b, rtol: float = 1e-5, atol: float = 1e-8, out=None) -> int:
    """``pyfunc-debug diff``: print the report; 0 when nothing differs, 1 when something does.

    Raises ``BadTrace`` (exit status 2 for the CLI) on input it cannot compare.
    """
    out = out or sys.stdout
    events_a, events_b = _events(a, "a"), _events(b, "b")
    d = diff_traces(events_a, events_b, rtol=rtol, atol=atol, labels=(os.fspath(a), os.fspath(b)))
    if d is None:
        print(f"no difference between {a} and {b} (rtol={rtol:g}, atol={atol:g})", file=out)
        if not (_capture(events_a) == _capture(events_b) == "full"):
            print("  compared by summaries (shape, dtype, NaN/Inf counts, min, max, mean): "
                  "record both with --capture full to compare every value", file=out)
        return 0
    print(d.report(), file=out)
    return 1
