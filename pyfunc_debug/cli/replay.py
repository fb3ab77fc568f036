"""``pyfunc-debug replay``: re-run one captured call of a ``--capture fault`` trace."""
from __future__ import annotations

from .checks import UsageError

__all__ = ["cmd_replay"]


def cmd_replay(args) -> int:
    from ..replay import ReplayError, list_calls, replay
    if args.pdb and args.post_mortem:
        raise UsageError("--pdb and --post-mortem exclude each other")
    try:
        if args.list:
            return list_calls(args.trace, op=args.op, run=args.run)
        mode = "pdb" if args.pdb else "post-mortem" if args.post_mortem else None
        return replay(args.trace, op=args.op, run=args.run, call=args.call, mode=mode)
    except ReplayError as e:
        raise UsageError(str(e)) from None
