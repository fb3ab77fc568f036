"""What ``run`` and ``trace`` share: reading ``[OPTIONS] SCRIPT|-m MODULE [ARGS...]``,
checking the program can start, instrumenting frameworks, and reporting its end."""
from __future__ import annotations

import sys

from .checks import UsageError

__all__ = ["program", "frameworks", "finish"]


def program(args, options: dict, usage: str):
    """(options, Program) of ``COMMAND [OPTIONS] SCRIPT|-m MODULE [ARGS...]``, checked:
    a missing script or bad usage is a ``UsageError`` (exit 2), a syntax error exits 1,
    both before anything starts."""
    from ..script import ProgramError, check, parse_command
    try:
        opts, prog = parse_command(args.rest, options)
    except ValueError as e:
        raise UsageError(f"{e}\nusage: {usage}") from None
    if opts.get("--help"):
        args.parser.print_help()
        raise SystemExit(0)
    if prog is None:
        raise UsageError(f"usage: {usage}")
    try:
        check(prog)
    except ProgramError as e:
        if e.status == 2:
            raise UsageError(str(e)) from None
        print(e, file=sys.stderr)
        raise SystemExit(e.status) from None
    return opts, prog


def frameworks(opts: dict, ui: bool = False):
    """Instrument TensorFlow / JAX for the block when --tf / --jax ask (a missing one: exit 2);
    ``ui``: the UI will own the terminal (see ``instrumented``)."""
    from ..framework_options import FrameworkMissing, instrumented
    try:
        return instrumented(opts, ui)
    except FrameworkMissing as e:
        raise UsageError(str(e)) from None


def finish(outcome) -> int:
    """Print what ended the program (a traceback, or one line for an abort); its status."""
    sys.stdout.flush()
    if outcome.report:
        print(outcome.report, file=sys.stderr)
    return outcome.status
