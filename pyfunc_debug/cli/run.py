"""``pyfunc-debug run``: a program under the debugger, in the UI, at a ``(pfd)`` prompt,
or served to ``pyfunc-debug attach`` (``--listen``)."""
from __future__ import annotations

import sys

from .checks import UsageError
from .program import finish, frameworks, program
from .terminal import console_only, tui

__all__ = ["cmd_run", "RUN_OPTIONS", "RUN_USAGE", "BREAK_ON"]

BREAK_ON = ("nan", "error", "warning")
RUN_OPTIONS = {"--break": True, "--break-on": True, "--console": False,
               "--guard-mutation": False, "--tf": False, "--jax": False, "--listen": True,
               "--wait": False, "--capture": True, "-o": True, "--output": True}
RUN_USAGE = ("pyfunc-debug run [--break GLOB]... [--break-on nan|error|warning] [--console] "
             "[--guard-mutation] [--tf] [--jax] [--listen HOST:PORT [--wait]] "
             "[-o OUT.jsonl [--capture summary|full|fault]] SCRIPT|-m MODULE [ARGS...]")


def cmd_run(args) -> int:
    opts, prog = program(args, RUN_OPTIONS, RUN_USAGE)
    kinds = opts.get("--break-on", [])
    bad = [k for k in kinds if k not in BREAK_ON]
    if bad:
        raise UsageError(f"--break-on takes nan, error or warning, not {bad[0]!r}")
    guard = bool(opts.get("--guard-mutation"))
    with _recording(opts):
        return _run(args, opts, prog, kinds, guard)


def _recording(opts: dict):
    """``-o OUT.jsonl [--capture C]``: the run is recorded too (``--capture fault``: the
    inputs of faulty calls, for ``pyfunc-debug replay``); without -o, a null context."""
    import contextlib
    from .checks import output_file
    out = (opts.get("-o") or opts.get("--output") or [None])[-1]
    capture = (opts.get("--capture") or [None])[-1]
    if out is None:
        if capture is not None:
            raise UsageError(f"--capture {capture} needs -o OUT.jsonl (where to record)")
        return contextlib.nullcontext()
    if not out.endswith(".jsonl"):
        raise UsageError(f"-o {out}: run records .jsonl traces (pyfunc-debug trace also "
                         "writes .json)")
    from ..trace.recorder import trace
    try:
        recorder = trace(out, capture=capture or "summary")
    except ValueError as e:
        raise UsageError(str(e)) from None
    output_file(out)   # exit 2 now, not after the script ran
    return recorder


def _run(args, opts, prog, kinds, guard) -> int:
    if opts.get("--listen"):
        with frameworks(opts):
            return _run_listening(prog, opts["--listen"][-1], bool(opts.get("--wait")),
                                  opts.get("--break", []), kinds, guard)
    if opts.get("--wait"):
        raise UsageError("--wait needs --listen HOST:PORT")
    why = None if opts.get("--console") else console_only()
    if why is not None:
        print(f"pyfunc-debug {args.command}: {why}: using the console frontend",
              file=sys.stderr)
        opts["--console"] = True
    with frameworks(opts, ui=not opts.get("--console")):
        if not opts.get("--console"):
            ui = tui()
            return ui.run_app(ui.script_app(prog, breaks=opts.get("--break", []),
                                            break_on=tuple(kinds) or ("error",),
                                            guard_mutation=guard))
        return _run_console(prog, opts.get("--break", []), kinds, guard,
                            on_worker=bool(opts.get("--tf") or opts.get("--jax")))


def _run_console(prog, breaks, kinds, guard, on_worker=False) -> int:
    from ..debug import ConsoleFrontend
    from ..debug.console import DiagnosticPrinter
    from ..debug.frontend import LocalLink, add_breakpoints, answering
    from ..script import run_program
    link = LocalLink(guard_mutation=guard)
    frontend = ConsoleFrontend(debugger=link)
    add_breakpoints(link, breaks, kinds)
    # each diagnostic printed once, as it happens (summaries let the engine find them)
    printer = DiagnosticPrinter()
    link.start(printer, answering(link, frontend), capture="summary", settles=printer)
    try:
        if on_worker:  # a framework's threads: Ctrl+C must still reach us
            from ..framework_options import run_on_worker
            outcome = run_on_worker(run_program, prog)
        else:
            outcome = run_program(prog)
    finally:
        link.stop()
    if not printer.ran:   # as the UI says it: why there was nothing to watch
        from ..framework_options import nothing_recorded
        print(f"pyfunc-debug run: no op ran: {nothing_recorded()}", file=sys.stderr)
    else:   # a glob with a typo paused nowhere: say so
        from ..debug.breakpoints import unmatched
        for note in unmatched(link.breakpoints, printer.ops.items()):
            print(f"pyfunc-debug run: note: {note}", file=sys.stderr)
    return finish(outcome)


def _run_listening(prog, address, wait, breaks, kinds, guard) -> int:
    """``run --listen``: no UI here; the debugger is served to ``pyfunc-debug attach``."""
    from ..debug.frontend import LocalLink, add_breakpoints
    from ..remote.listen import current_server, listen
    from ..script import run_program
    link = LocalLink(guard_mutation=guard)
    add_breakpoints(link, breaks, kinds)
    try:
        listen(address, title=prog.title, link=link, hold=wait)
    except (ValueError, OSError) as e:
        raise UsageError(f"cannot listen on {address}: {e}") from None
    outcome = run_program(prog)
    status = finish(outcome)
    current_server().close(status)
    return status
