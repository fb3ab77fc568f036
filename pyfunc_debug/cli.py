"""The ``pyfunc-debug`` command (also ``python -m pyfunc_debug``)."""
from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]


def _tui():
    """The TUI package, imported only here: the core never depends on it."""
    import importlib
    return importlib.import_module("pyfunc_debug.tui.launch")


def _cmd_demo(args) -> int:
    from . import demo
    why = None if args.print else _console_only()
    if args.print or why:
        print("pyfunc-debug demo: the built-in graph (validate -> normalize -> log_features -> "
              "scale -> loss), three runs." + ("" if args.print else
                                                 f"\n({why}: printing the runs instead of "
                                                 "opening the UI)"))
        for op in demo.build().graph.get_operations():
            print(f"  op {op.name:14} {op.type:16} created at line {op.source.lineno}")
        demo.run()
        return 0
    tui = _tui()
    return tui.run_app(tui.demo_app())


class UsageError(Exception):
    """Bad command-line input: ``main`` prints it after the command's name and exits 2."""


def _program(args, options: dict, usage: str):
    """(options, Program) of ``COMMAND [OPTIONS] SCRIPT|-m MODULE [ARGS...]``, checked:
    a missing script or bad usage is a ``UsageError`` (exit 2), a syntax error exits 1,
    both before anything starts."""
    from .script import ProgramError, check, parse_command
    try:
        opts, program = parse_command(args.rest, options)
    except ValueError as e:
        raise UsageError(f"{e}\nusage: {usage}") from None
    if opts.get("--help"):
        args.parser.print_help()
        raise SystemExit(0)
    if program is None:
        raise UsageError(f"usage: {usage}")
    try:
        check(program)
    except ProgramError as e:
        if e.status == 2:
            raise UsageError(str(e)) from None
        print(e, file=sys.stderr)
        raise SystemExit(e.status) from None
    return opts, program


def _finish(outcome) -> int:
    """Print what ended the program (a traceback, or one line for an abort); its status."""
    sys.stdout.flush()
    if outcome.report:
        print(outcome.report, file=sys.stderr)
    return outcome.status


_TRACE_OPTIONS = {"-o": True, "--output": True, "--capture": True, "--tf": False, "--jax": False}
_TRACE_USAGE = ("pyfunc-debug trace -o OUT.json|OUT.jsonl [--capture none|summary|full] "
                "[--tf] [--jax] SCRIPT|-m MODULE [ARGS...]")


def _cmd_trace(args) -> int:
    from .script import run_program
    from .trace.recorder import trace
    opts, program = _program(args, _TRACE_OPTIONS, _TRACE_USAGE)
    out = (opts.get("-o") or opts.get("--output") or [None])[-1]
    if out is None:
        raise UsageError(f"-o OUT.json|OUT.jsonl is needed\nusage: {_TRACE_USAGE}")
    try:
        recorder = trace(out, capture=(opts.get("--capture") or ["summary"])[-1])
    except ValueError as e:
        raise UsageError(str(e)) from None
    frameworks = _frameworks(opts)
    with recorder as tr, frameworks:
        outcome = run_program(program)
    status = _finish(outcome)
    print(f"pyfunc-debug trace: wrote {tr.event_count} events ({tr.op_count} op runs in "
          f"{tr.run_count} runs) to {out}", file=sys.stderr)
    return status


_RUN_OPTIONS = {"--break": True, "--break-on": True, "--console": False, "--guard-mutation": False,
                "--tf": False, "--jax": False, "--listen": True, "--wait": False}
_RUN_USAGE = ("pyfunc-debug run [--break GLOB]... [--break-on nan|error|warning] [--console] "
              "[--guard-mutation] [--tf] [--jax] [--listen HOST:PORT [--wait]] "
              "SCRIPT|-m MODULE [ARGS...]")


def _frameworks(opts: dict):
    """Instrument TensorFlow / JAX for the block when --tf / --jax ask (a missing one: exit 2)."""
    from .framework_options import FrameworkMissing, instrumented
    try:
        return instrumented(opts)
    except FrameworkMissing as e:
        raise UsageError(str(e)) from None


def _console_only() -> str | None:
    """Why the UI cannot run in this terminal (then the console frontend is used), or None."""
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        return "not a terminal"
    if os.environ.get("TERM", "") in ("dumb", "unknown", ""):
        return f"TERM={os.environ.get('TERM', '')!r} cannot show the UI"
    return None


def _cmd_run(args) -> int:
    opts, program = _program(args, _RUN_OPTIONS, _RUN_USAGE)
    kinds = opts.get("--break-on", [])
    bad = [k for k in kinds if k not in ("nan", "error", "warning")]
    if bad:
        raise UsageError(f"--break-on takes nan, error or warning, not {bad[0]!r}")
    guard = bool(opts.get("--guard-mutation"))
    if opts.get("--listen"):
        with _frameworks(opts):
            return _run_listening(program, opts["--listen"][-1], bool(opts.get("--wait")),
                                  opts.get("--break", []), kinds, guard)
    if opts.get("--wait"):
        raise UsageError("--wait needs --listen HOST:PORT")
    why = None if opts.get("--console") else _console_only()
    if why is not None:
        print(f"pyfunc-debug run: {why}: using the console frontend", file=sys.stderr)
        opts["--console"] = True
    with _frameworks(opts):
        if not opts.get("--console"):
            tui = _tui()
            return tui.run_app(tui.script_app(program, breaks=opts.get("--break", []),
                                              break_on=tuple(kinds) or ("error",),
                                              guard_mutation=guard))
        return _run_console(program, opts.get("--break", []), kinds, guard,
                            on_worker=bool(opts.get("--tf") or opts.get("--jax")))


def _run_console(program, breaks, kinds, guard, on_worker=False) -> int:
    from .debug import ConsoleFrontend
    from .debug.console import DiagnosticPrinter
    from .debug.frontend import LocalLink, add_breakpoints, answering
    from .script import run_program
    link = LocalLink(guard_mutation=guard)
    frontend = ConsoleFrontend(debugger=link)
    add_breakpoints(link, breaks, kinds)
    # each diagnostic printed once, as it happens (summaries let the engine find them)
    link.start(DiagnosticPrinter(), answering(link, frontend), capture="summary")
    try:
        if on_worker:  # a framework's threads: Ctrl+C must still reach us
            from .framework_options import run_on_worker
            outcome = run_on_worker(run_program, program)
        else:
            outcome = run_program(program)
    finally:
        link.stop()
    return _finish(outcome)


def _run_listening(program, address, wait, breaks, kinds, guard) -> int:
    """``run --listen``: no UI here; the debugger is served to ``pyfunc-debug attach``."""
    from .debug.frontend import LocalLink, add_breakpoints
    from .remote.listen import current_server, listen
    from .script import run_program
    link = LocalLink(guard_mutation=guard)
    add_breakpoints(link, breaks, kinds)
    try:
        listen(address, title=program.title, link=link, hold=wait)
    except (ValueError, OSError) as e:
        raise UsageError(f"cannot listen on {address}: {e}") from None
    outcome = run_program(program)
    status = _finish(outcome)
    current_server().close(status)
    return status


def _cmd_attach(args) -> int:
    from .debug.frontend import add_breakpoints, answering
    from .remote.client import AttachError, RemoteLink
    kinds = args.break_on or []
    token = args.token or os.environ.get("PYFUNC_DEBUG_TOKEN")
    if not token:
        raise UsageError("a token is needed: --token TOKEN or PYFUNC_DEBUG_TOKEN (the target "
                         "printed it: 'pyfunc-debug: listening on HOST:PORT token TOKEN')")
    try:
        link = RemoteLink(args.address, token, capture=args.capture)
    except ValueError as e:
        raise UsageError(str(e)) from None
    except AttachError as e:
        print(f"pyfunc-debug attach: {e}", file=sys.stderr)
        return 1
    console = args.console or _console_only() is not None
    add_breakpoints(link, args.break_ or [], kinds if kinds or console else ["error"])
    print(f"pyfunc-debug attach: attached to {args.address} (pid {link.pid}: "
          f"{link.program or 'a Python process'})", file=sys.stderr)
    if not console:
        tui = _tui()
        return tui.run_app(tui.attach_app(link))
    from .debug import ConsoleFrontend
    from .debug.console import DiagnosticPrinter
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


def _cmd_view(args) -> int:
    from .trace.jsonl import TraceFormatError, load_trace
    if args.trace.endswith(".json"):
        raise UsageError(f"{args.trace} is a Chrome trace: open it in https://ui.perfetto.dev; "
                         "view replays .jsonl traces (pyfunc-debug trace -o out.jsonl)")
    size = os.path.getsize(args.trace) if os.path.isfile(args.trace) else 0
    if size > 16 << 20:
        print(f"pyfunc-debug view: loading {args.trace} ({size >> 20} MB)…", file=sys.stderr)
    try:
        trace = load_trace(args.trace)  # fail here, with the file and line, not inside the UI
    except (OSError, TraceFormatError) as e:
        raise UsageError(str(e)) from None
    position, note = None, ""
    if args.diff:
        position, note = _first_divergence(args.trace, trace, args.diff)
    tui = _tui()
    return tui.run_app(tui.view_app(args.trace, trace=trace, position=position, note=note))


def _first_divergence(path, events, other):
    """(position in ``events`` just after the first op that differs from ``other``, a note)."""
    from .trace.diff import BadTrace, diff_traces
    try:
        found = diff_traces(events, other, labels=(path, other))
    except (BadTrace, OSError, ValueError) as e:
        raise UsageError(str(e)) from None
    if found is None:
        return None, f"no difference from {other}"
    mine = found.events[0] if found.events else None
    runs = [i for i, e in enumerate(events) if type(e).__name__ == "RunStart"]
    position = runs[found.run] + 1 if found.run < len(runs) else len(events)
    if mine is not None:
        position = next((i + 1 for i, e in enumerate(events) if e.seq == mine.seq
                         and type(e) is type(mine)), position)
    where = f"run {found.run + 1}" + (f", op '{found.op}'" if found.op else "")
    return position, f"first difference from {other} at {where}: {found.reason}"


def _cmd_diff(args) -> int:
    from .trace.diff import BadTrace, run_diff
    try:
        return run_diff(args.a, args.b, rtol=args.rtol, atol=args.atol)
    except BadTrace as e:
        raise UsageError(str(e)) from None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("pyfunc-debug")
    except PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown (not installed)"


def _framework_help(parser) -> None:
    parser.add_argument("--tf", action="store_true", help="instrument TensorFlow's py_function / "
                        "numpy_function / py_func callbacks (needs the tensorflow extra)")
    parser.add_argument("--jax", action="store_true", help="instrument JAX's pure_callback / "
                        "io_callback / debug.callback (needs the jax extra)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pyfunc-debug",
        description="Debug and trace dataflow graphs whose ops wrap Python functions.")
    p.add_argument("--version", action="version", version=f"pyfunc-debug {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="open the debugger UI on the built-in example graph")
    d.add_argument("--print", action="store_true",
                   help="print the demo's runs instead of opening the UI")
    d.set_defaults(func=_cmd_demo)
    t = sub.add_parser(
        "trace", help="run a program, recording every op",
        usage=_TRACE_USAGE.replace("pyfunc-debug ", "%(prog)s ", 1).replace("trace ", "", 1),
        description="Run SCRIPT (or -m MODULE) with every Session.run / function call "
        "recorded. OUT.json is Chrome trace format (open it in https://ui.perfetto.dev); "
        "OUT.jsonl is pyfunc-debug's own format (pfd.load_trace, pyfunc-debug view). Our "
        "options come before the script; everything after it is the script's. The exit "
        "status is the script's.")
    t.add_argument("-o", "--output", metavar="OUT", help="OUT.json or OUT.jsonl")
    t.add_argument("--capture", choices=("none", "summary", "full"),
                   help="value summaries (default) or copies of values too")
    _framework_help(t)
    t.set_defaults(func=_cmd_trace)
    r = sub.add_parser(
        "run", help="run a program under the debugger",
        usage=_RUN_USAGE.replace("pyfunc-debug ", "%(prog)s ", 1).replace("run ", "", 1),
        description="Run SCRIPT (or -m MODULE) with every Session.run / function call under "
        "the debugger. Our options come before the script; everything after it is the "
        "script's. At a pause the terminal UI opens (keys in its footer); with --console, or "
        "when there is no terminal (or TERM=dumb), a (pfd) prompt takes c, n, s, pm, p, b, q, "
        "help instead. The UI pauses on errors unless --break-on says otherwise. The exit "
        "status is the script's: 0, its sys.exit code, 1 on an uncaught exception (q aborts "
        "the run: 1), 130 on Ctrl+C.")
    r.add_argument("--break", metavar="GLOB", action="append",
                   help="pause before ops whose name matches (repeatable)")
    r.add_argument("--break-on", choices=("nan", "error", "warning"), action="append",
                   help="nan: pause at the op that produces a NaN/Inf; error: where an op "
                   "fails; warning: right after an op that raised a diagnostic")
    r.add_argument("--console", action="store_true", help="a (pfd) prompt instead of the UI")
    r.add_argument("--guard-mutation", action="store_true",
                   help="warn when a wrapped function writes into its inputs")
    _framework_help(r)
    r.add_argument("--listen", metavar="HOST:PORT",
                   help="no UI here: serve the debugger for pyfunc-debug attach (port 0: any)")
    r.add_argument("--wait", action="store_true",
                   help="with --listen: start the program once a client is attached")
    r.set_defaults(func=_cmd_run)
    a = sub.add_parser(
        "attach", help="debug a process started with run --listen or PYFUNC_DEBUG_LISTEN",
        description="Attach the debugger UI (or, with --console, the (pfd) prompt) to a process "
        "serving its debugger (pyfunc-debug run --listen HOST:PORT, PYFUNC_DEBUG_LISTEN, "
        "pfd.debug.listen). Events stream in live; breakpoints, pauses, values and pdb (s, p) "
        "work as locally, pdb on this terminal. Leaving (q in the UI, Ctrl+C at the console) "
        "detaches: the process runs on. Exit status 0 when the process ended or we detached, "
        "1 when it went away (killed) or refused us.")
    a.add_argument("address", metavar="HOST:PORT", help="where the process listens")
    a.add_argument("--token", help="the token the process printed (or PYFUNC_DEBUG_TOKEN)")
    a.add_argument("--console", action="store_true", help="a (pfd) prompt instead of the UI")
    a.add_argument("--capture", choices=("none", "summary"), default="none",
                   help="value summaries in every streamed event (slows the target; pauses "
                   "always carry them): none (default) or summary")
    a.add_argument("--break", dest="break_", metavar="GLOB", action="append",
                   help="pause before ops whose name matches (repeatable)")
    a.add_argument("--break-on", choices=("nan", "error", "warning"), action="append",
                   help="as for run")
    a.set_defaults(func=_cmd_attach)
    v = sub.add_parser("view", help="replay a recorded trace (.jsonl) in the debugger UI")
    v.add_argument("trace", help="a .jsonl trace from pyfunc-debug trace or pfd.trace()")
    v.add_argument("--diff", metavar="OTHER.jsonl",
                   help="open at the first op whose outputs differ from OTHER (see diff)")
    v.set_defaults(func=_cmd_view)
    df = sub.add_parser(
        "diff", help="compare two .jsonl traces: the first op whose outputs differ",
        description="Match runs by index and ops by name in execution order; print the first op "
        "whose outputs differ (shape, dtype, NaN/Inf counts, min/max/mean beyond tolerance, "
        "values when both captured), both sides' summaries and the upstream ops that agreed. "
        "Exit status 0: no difference, 1: a difference, 2: bad input.")
    df.add_argument("a", help="the first .jsonl trace")
    df.add_argument("b", help="the second .jsonl trace")
    df.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance (1e-5)")
    df.add_argument("--atol", type=float, default=1e-8, help="absolute tolerance (1e-8)")
    df.set_defaults(func=_cmd_diff)
    return p


# Commands that run a program: parsed by script.parse_command (python's convention),
# argparse only prints their help.
_SCRIPT_COMMANDS = {"trace": _cmd_trace, "run": _cmd_run}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if argv and argv[0] in _SCRIPT_COMMANDS:
        sub = parser._subparsers._group_actions[0].choices[argv[0]]
        args = argparse.Namespace(command=argv[0], rest=argv[1:], parser=sub,
                                  func=_SCRIPT_COMMANDS[argv[0]])
    else:
        args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except UsageError as e:
        print(f"pyfunc-debug {args.command}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped (| head): quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
