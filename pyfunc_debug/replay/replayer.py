"""``pyfunc-debug replay``: one captured call of a ``capture="fault"`` trace, run again.

``select`` picks the call (by default the first faulty one), ``replay`` imports
its function (``locate``), calls it with the recorded inputs (``call``) — under
pdb when asked — and prints the new outputs beside the recorded ones with a
verdict (``compare``). Exit status: 0 when the call now runs clean, 1 when it
is still faulty, 2 (``ReplayError``) when it cannot be replayed.
"""
from __future__ import annotations

import os
import sys
import warnings
from bdb import BdbQuit

import numpy as np

from ..tf_startup import import_quietly
from ..trace.faults import faults_path, load_faults
from .locate import ReplayError, find_function, source_changed

__all__ = ["replay", "select", "list_calls", "ReplayError"]


def _load(path):
    from ..trace.jsonl import load_trace
    return load_trace(path)


def captured(path, need_calls: bool = True):
    """(loaded trace, function records, captured calls) of the trace ``path``, refused
    (``ReplayError``) when it holds none to replay, saying why."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ReplayError(f"{path}: no such trace file")
    try:
        events = _load(path)
        with warnings.catch_warnings():   # an unreadable values file: told for the call chosen
            warnings.simplefilter("ignore", RuntimeWarning)
            functions, calls = load_faults(path)
    except ValueError as e:
        raise ReplayError(str(e).splitlines()[0]) from None
    capture = events.header.get("capture")
    if capture != "fault":   # a faults file beside it is an earlier recording's: not this one's
        stale = " (the faults file beside it is from an earlier recording)" if calls else ""
        raise ReplayError(f"{path} holds no captured inputs (recorded with capture="
                          f"{capture!r}){stale}: record with --capture fault to replay a call")
    if not calls and need_calls:
        gone = _maybe_moved(path)
        raise ReplayError(f"{path}: no wrapped call was faulty, so none was captured (fault "
                          "capture keeps only calls that raised or made a diagnostic)"
                          + (f"; {gone}" if gone else ""))
    return events, functions, calls


def _maybe_moved(path) -> str:
    """The file of captured calls is written with the first one: none beside a fault trace
    is no faulty call, or a trace moved without it; said when it is not there."""
    target = faults_path(path)
    return "" if os.path.exists(target) else \
        f"if it had some, {target} was not moved or copied with it"


def select(path, op=None, run=None, call=None):
    """(function record, call record, loaded trace) of the chosen captured call."""
    path = os.fspath(path)
    events, functions, calls = captured(path)
    chosen = calls
    if op is not None:
        chosen = [c for c in chosen if c["op"] == op]
        if not chosen:
            ran = any(getattr(e, "op", None) == op for e in events)
            names = ", ".join(sorted({c["op"] for c in calls}))
            raise ReplayError(f"op '{op}' has no captured call in {path}" +
                              (" (its calls ran clean)" if ran else " (no op of that name ran)")
                              + f"; captured: {names}")
    if run is not None:
        runs = sorted({c["run_id"] for c in chosen})
        chosen = [c for c in chosen if c["run_id"] == run]
        if not chosen:
            raise ReplayError(f"no captured call{f' of op {op!r}' if op else ''} in run {run} "
                              f"of {path}; runs with one: {', '.join(map(str, runs))}")
    k = 1 if call is None else call
    if not 1 <= k <= len(chosen):
        raise ReplayError(f"--call {k}: there {'is' if len(chosen) == 1 else 'are'} "
                          f"{len(chosen)} matching captured call{'s' if len(chosen) != 1 else ''}"
                          f" (1..{len(chosen)})")
    record = chosen[k - 1]
    told = next((e for e in events if e.seq == record["seq"]), None)
    if getattr(told, "op", None) != record["op"]:   # the diagnostic or error that captured it
        raise ReplayError(f"{faults_path(path)} does not belong to {path}: its call of op "
                          f"'{record['op']}' (event {record['seq']}) is not in the trace; were "
                          "the files of two recordings mixed? record again with --capture fault")
    function = functions.get(record["op"])
    if function is None:
        raise ReplayError(f"op '{record['op']}': the trace does not name its function: record "
                          "again with --capture fault")
    return function, record, events


def list_calls(path, out=None, op=None, run=None) -> int:
    """Print every captured call of ``path`` (of op ``op``, in run ``run``), one a line,
    numbered as ``--call`` counts them with the same ``--op``/``--run``."""
    out = out or sys.stdout
    _, functions, calls = captured(path, need_calls=False)
    calls = [c for c in calls if (op is None or c["op"] == op) and
             (run is None or c["run_id"] == run)]
    if not calls:
        which = "".join([f" of op '{op}'" if op else "", f" in run {run}" if run else ""])
        gone = _maybe_moved(path)
        print(f"{path}: no captured calls{which}" + (f" ({gone})" if gone else ""), file=out)
        return 0
    for n, c in enumerate(calls, start=1):
        f = functions.get(c["op"], {})
        what = c.get("original_error") if c["fault"] == "error" else c["fault"]
        print(f"{n:3}  run {c['run_id']}  op '{c['op']}' ({c['op_type']})  "
              f"{f.get('module')}:{f.get('qualname')}  {what}", file=out)
    return 0


def replay(path, op=None, run=None, call=None, mode=None, out=None) -> int:
    """Replay one captured call of the trace ``path``; see the module. ``mode``: None,
    "pdb" or "post-mortem"."""
    from .call import invoke, make_inputs, user_traceback
    from .compare import new_result, recorded_result, side_by_side, verdict
    out = out or sys.stdout
    function, record, events = select(path, op, run, call)
    name = record["op"]
    if function.get("adapter") == "tensorflow":   # as --tf: TF's C++ start-up chatter
        try:   # would bury the replay's lines; imported before the program's module does
            import_quietly("tensorflow")
        except ImportError:
            pass   # said where the inputs are made (``call``)
    notes = []
    if record.get("modified"):
        notes.append(f"op '{name}' wrote into its inputs: the recorded values are the ones "
                     "the call left behind, not the ones it was given")
    func = find_function(name, function)
    changed = source_changed(name, func, function)
    if changed:
        notes.append(changed)
    try:
        args, context = make_inputs(record, function, notes)
    except ValueError as e:
        raise ReplayError(f"op '{name}': {e}: its values file is missing or damaged; "
                          "record again with --capture fault") from None
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    what = record.get("original_error") if record["fault"] == "error" else record["fault"]
    print(f"replaying op '{name}' ({record['op_type']}) of run {record['run_id']}: "
          f"{function['module']}:{function['qualname']} "
          f"({function.get('file')}:{function.get('line')}); recorded fault: {what}", file=out)
    kind = f" ({type(args[0]).__module__.split('.')[0]} {type(args[0]).__name__})" if args else ""
    for i, a in enumerate(args):
        print(f"  input {i}: {_short(a)}{kind if i == 0 else ''}", file=out)
    out.flush()
    # an input_modified fault: does the call still write into what it is given?
    before = [a.tobytes() if isinstance(a, np.ndarray) else None for a in args] \
        if record["fault"] == "input_modified" else None
    outcome = invoke(func, args, context, mode, out)
    if isinstance(outcome.error, BdbQuit):
        print("replay: quit in pdb", file=out)
        return 1
    if outcome.not_called:
        raise ReplayError(f"op '{name}': the recorded inputs cannot be passed to "
                          f"{function['module']}:{function['qualname']} now: "
                          f"{type(outcome.error).__name__}: {outcome.error} (its parameters "
                          "changed since the recording, or it is a method or a partial whose "
                          "bound part replay cannot rebuild)")
    check_error = _output_check(record, function, outcome)
    recorded = recorded_result(events, record)
    now = new_result(record, outcome, check_error)
    if outcome.error is not None and mode != "post-mortem":
        print(user_traceback(outcome.error), file=out)
    print("A: recorded   B: this replay", file=out)
    for line in side_by_side(recorded, now, record):
        print(line, file=out)
    wrote = None if before is None else \
        [i for i, (a, b) in enumerate(zip(args, before)) if b is not None and a.tobytes() != b]
    text, faulty = verdict(record, recorded, outcome, check_error, wrote)
    print(text, file=out)
    return 1 if faulty else 0


def _short(value) -> str:
    import numpy as np

    from ..trace.summary import summarize
    try:
        return summarize(np.asarray(value), 0).short()
    except Exception:  # noqa: BLE001 - a framework tensor numpy cannot view: its repr
        return repr(value)[:80]


def _output_check(record, function, outcome):
    """The error the op's own result check raises on the replayed result (count, dtype)."""
    if outcome.error is not None or not function.get("Tout"):
        return None
    if function.get("adapter") == "tensorflow":   # a graph numpy_function: TF's check
        try:
            from ..tensorflow import result_error
        except ImportError:   # TensorFlow is not installed here (said with the inputs)
            return None
        return result_error(outcome.returned, function["Tout"], record["op"])
    if function.get("adapter"):
        return None
    from ..dtypes import as_dtype
    from ..errors import OpError
    touts = tuple(as_dtype(n) for n in function["Tout"])
    try:
        if record["op_type"] == "EagerPyFunc":
            from ..ops.script_results import convert_eager_results
            convert_eager_results(outcome.returned, touts, record["op"])
        else:
            from ..ops.script_results import strict_checker
            strict_checker(touts)(outcome.returned, record["op"])
    except OpError as e:
        return e
    except Exception as e:  # noqa: BLE001 - converting the result failed: TF fails too
        return e
    return None
