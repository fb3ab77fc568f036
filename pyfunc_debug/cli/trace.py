"""``pyfunc-debug trace``: run a program headless, recording every op to a file."""
from __future__ import annotations

import shlex
import sys

from ..framework_options import nothing_recorded
from .checks import UsageError, output_file, why
from .program import finish, frameworks, program

__all__ = ["cmd_trace", "TRACE_OPTIONS", "TRACE_USAGE"]

TRACE_OPTIONS = {"-o": True, "--output": True, "--capture": True, "--tf": False,
                 "--jax": False}
TRACE_USAGE = ("pyfunc-debug trace -o OUT.json|OUT.jsonl [--capture none|summary|full|fault] "
               "[--tf] [--jax] SCRIPT|-m MODULE [ARGS...]")



def cmd_trace(args) -> int:
    from ..trace.recorder import trace
    opts, prog = program(args, TRACE_OPTIONS, TRACE_USAGE)
    out = (opts.get("-o") or opts.get("--output") or [None])[-1]
    if out is None:
        raise UsageError(f"-o OUT.json|OUT.jsonl is needed\nusage: {TRACE_USAGE}")
    try:
        recorder = trace(out, capture=(opts.get("--capture") or ["summary"])[-1])
    except ValueError as e:
        raise UsageError(str(e)) from None
    output_file(out)   # exit 2 now, not after the script ran
    tr, outcome, failed = _record(recorder, frameworks(opts), prog, out)
    status = finish(outcome)
    if failed is not None:
        print(f"pyfunc-debug trace: cannot write {out}: {why(failed)}", file=sys.stderr)
        return status or 1
    if tr.run_count:
        failed = tr.failed_count   # op runs that raised are op runs too
        ops = _count(tr.op_count + failed, "op run") + (f", {failed} failed," if failed else "")
        print(f"pyfunc-debug trace: wrote {_count(tr.event_count, 'event')} "
              f"({ops} in {_count(tr.run_count, 'run')}) to {out}", file=sys.stderr)
    else:
        print(f"pyfunc-debug trace: wrote {_count(tr.event_count, 'event')} to {out}: "
              f"{nothing_recorded(opts)}", file=sys.stderr)
    if tr.faults is not None:
        print(_faults_line(tr.faults.count, out), file=sys.stderr)
    return status


def _faults_line(count: int, out: str) -> str:
    """What ``--capture fault`` kept, and the command that replays it."""
    if not count:
        return "pyfunc-debug trace: no faulty call (an exception, NaN/Inf, a wrong output, " \
               "a diagnostic): nothing to replay"
    return (f"pyfunc-debug trace: captured the inputs of {_count(count, 'faulty call')}; "
            f"re-run the first: pyfunc-debug replay {shlex.quote(out)}"
            + (f" (all: pyfunc-debug replay {shlex.quote(out)} --list)" if count > 1 else ""))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _record(recorder, instrumented, prog, out):
    """Run ``prog`` recorded: (the trace, the program's outcome, an ``OSError`` that kept
    the trace from being finished, or None)."""
    from ..script import run_program
    try:
        tr = recorder.__enter__()
    except OSError as e:  # the probe passed, the real file did not (a race, a full disk)
        raise UsageError(f"cannot write {out}: {why(e)}") from None
    failed = None
    try:
        with instrumented:
            outcome = run_program(prog)
    finally:
        try:
            recorder.__exit__(None, None, None)
        except OSError as e:  # the script ran; its trace could not be written out
            failed = e
    return tr, outcome, failed

