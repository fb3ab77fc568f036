"""``pyfunc-debug attach``: the debugger of another process (``run --listen``,
``PYFUNC_DEBUG_LISTEN``), in the UI or at a ``(pfd)`` prompt."""
from __future__ import annotations

import os
import sys

from .checks import UsageError
from .terminal import console_only, tui

__all__ = ["cmd_attach"]


def cmd_attach(args) -> int:
    from ..debug.frontend import add_breakpoints
    from ..remote.client import AttachError, RemoteLink
    kinds = args.break_on or []
    token = args.token or os.environ.get("PYFUNC_DEBUG_TOKEN")
    if not token:
        raise UsageError("a token is needed: --token TOKEN or PYFUNC_DEBUG_TOKEN (the target "
                         "printed it: 'pyfunc-debug: listening on HOST:PORT token TOKEN')")
    console = args.console or console_only() is not None
    try:   # the UI takes a callback's small summaries itself, when it shows them
        link = RemoteLink(args.address, token, capture=args.capture, pending=not console)
    except ValueError as e:
        raise UsageError(str(e)) from None
    except AttachError as e:   # a malformed or impostor target: status 2; refused/gone: 1
        print(f"pyfunc-debug attach: {e}", file=sys.stderr)
        return getattr(e, "status", 1)
    try:
        add_breakpoints(link, args.break_ or [], kinds if kinds or console else ["error"])
    except ConnectionError as e:   # the target answered nonsense, or went away
        if link.ended.is_set():
            outcome = link.wait(0)
            print(outcome.report, file=sys.stderr)
            return outcome.status
        print(f"pyfunc-debug attach: {e}", file=sys.stderr)
        return 1
    print(f"pyfunc-debug attach: attached to {args.address} (pid {link.pid}: "
          f"{link.program or 'a Python process'})", file=sys.stderr)
    if not link.streams_values:
        print("pyfunc-debug attach: --capture none: the events carry no values or "
              "diagnostics until a pause", file=sys.stderr)
    if not console:
        ui = tui()
        return ui.run_app(ui.attach_app(link))
    return _attach_console(link)


def _attach_console(link) -> int:
    from ..debug import ConsoleFrontend
    from ..debug.console import DiagnosticPrinter
    from ..debug.frontend import answering
    frontend = ConsoleFrontend(debugger=link)
    link.start(DiagnosticPrinter(), answering(link, frontend))
    outcome = None
    while outcome is None:
        try:
            outcome = link.wait()
        except KeyboardInterrupt:
            if link.relay.active:        # Ctrl+C in the remote pdb: pdb's, not ours
                link.interrupt_pdb()
                continue
            link.quit()                  # elsewhere: detach, the process runs on
            outcome = link.wait(5)
            break
    if outcome is not None:
        print(outcome.report, file=sys.stderr)
    return outcome.status if outcome is not None else 1
