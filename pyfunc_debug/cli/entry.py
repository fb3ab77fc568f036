"""``main``: parse the command line, run the command, turn its errors into exit statuses."""
from __future__ import annotations

import argparse
import os
import sys
import warnings

from ..source_text import is_ours
from .checks import UsageError
from .parser import SCRIPT_COMMANDS, build_parser

__all__ = ["main"]


def _parse(parser: argparse.ArgumentParser, argv: list) -> argparse.Namespace:
    if argv and argv[0] in SCRIPT_COMMANDS:   # python's convention, not argparse's
        sub = parser._subparsers._group_actions[0].choices[argv[0]]
        return argparse.Namespace(command=argv[0], rest=argv[1:], parser=sub,
                                  func=SCRIPT_COMMANDS[argv[0]], print_completion=None)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    """The ``pyfunc-debug`` command; returns its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = _parse(parser, argv)
    if args.print_completion:
        from .completion import render
        sys.stdout.write(render(parser, args.print_completion))
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    saved = warnings.showwarning
    warnings.showwarning = _our_warnings_as_lines(args.command, saved)
    try:
        return args.func(args)
    except UsageError as e:
        print(f"pyfunc-debug {args.command}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped (| head): quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        warnings.showwarning = saved


def _our_warnings_as_lines(command: str, show):
    """Warnings our own code raises (a trace's torn last line, a value file not read) as
    one line naming the command, not Python's two lines quoting our source; a program's
    own warnings as Python shows them."""
    def _line(message, category, filename, lineno, file=None, line=None):
        if not is_ours(os.path.abspath(filename)):
            return show(message, category, filename, lineno, file, line)
        print(f"pyfunc-debug {command}: warning: {message}", file=file or sys.stderr)
    return _line
