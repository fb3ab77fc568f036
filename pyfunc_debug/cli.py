"""The ``pyfunc-debug`` command (also ``python -m pyfunc_debug``)."""
from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def _tui():
    """The TUI package, imported only here: the core never depends on it."""
    import importlib
    return importlib.import_module("tui.launch")


def _cmd_demo(args) -> int:
    from . import demo
    if args.print or not sys.stdout.isatty():
        print("pyfunc-debug demo: the built-in graph (validate -> normalize -> log_features -> "
              "scale -> loss), three runs." + ("" if args.print else
                                                 "\n(stdout is not a terminal: printing the runs "
                                                 "instead of opening the UI)"))
        for op in demo.build().graph.get_operations():
            print(f"  op {op.name:14} {op.type:16} created at line {op.source.lineno}")
        demo.run()
        return 0
    tui = _tui()
    return tui.run_app(tui.demo_app())


class UsageError(Exception):
    """Bad command-line input: ``main`` prints it after the command's name and exits 2."""


def _script_command(rest, options: dict, usage: str):
    """(options, script, script args) of ``COMMAND SCRIPT [ARGS...] [options]``."""
    from .script import split_args
    try:
        opts, script, script_args = split_args(rest, options)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if script is None:
        raise UsageError(f"usage: {usage}")
    return opts, script, script_args


_TRACE_OPTIONS = {"-o": True, "--output": True, "--capture": True}
_TRACE_USAGE = ("pyfunc-debug trace SCRIPT [ARGS...] -o OUT.json|OUT.jsonl "
                "[--capture none|summary|full]")


def _cmd_trace(args) -> int:
    from .script import run_script
    from .trace.recorder import trace
    opts, script, script_args = _script_command(args.rest, _TRACE_OPTIONS, _TRACE_USAGE)
    out = (opts.get("-o") or opts.get("--output") or [None])[-1]
    if out is None:
        raise UsageError(f"usage: {_TRACE_USAGE}")
    try:
        recorder = trace(out, capture=(opts.get("--capture") or ["summary"])[-1])
    except ValueError as e:
        raise UsageError(str(e)) from None
    with recorder as tr:
        status = run_script(script, script_args)
    runs = sum(1 for e in tr.events if type(e).__name__ == "RunStart")
    print(f"pyfunc-debug trace: wrote {len(tr.events)} events ({tr.op_count} op runs in "
          f"{runs} runs) to {out}", file=sys.stderr)
    return status


_RUN_OPTIONS = {"--break": True, "--break-on": True, "--console": False, "--guard-mutation": False}
_RUN_USAGE = ("pyfunc-debug run SCRIPT [ARGS...] [--break GLOB]... [--break-on nan|error] "
              "[--console] [--guard-mutation]")


def _cmd_run(args) -> int:
    from .debug import ConsoleFrontend, Debugger
    from .script import run_script
    opts, script, script_args = _script_command(args.rest, _RUN_OPTIONS, _RUN_USAGE)
    kinds = opts.get("--break-on", [])
    bad = [k for k in kinds if k not in ("nan", "error")]
    if bad:
        raise UsageError(f"--break-on takes nan or error, not {bad[0]!r}")
    guard = bool(opts.get("--guard-mutation"))
    if not opts.get("--console") and not sys.stdout.isatty():
        print("pyfunc-debug run: stdout is not a terminal: using the console frontend",
              file=sys.stderr)
        opts["--console"] = True
    if not opts.get("--console"):
        tui = _tui()
        return tui.run_app(tui.script_app(script, script_args, breaks=opts.get("--break", []),
                                          break_on=tuple(kinds) or ("error",),
                                          guard_mutation=guard))
    frontend = ConsoleFrontend()
    dbg = Debugger(on_pause=frontend, guard_mutation=guard)
    frontend.debugger = dbg
    for glob in opts.get("--break", []):
        dbg.break_on(op=glob)
    if "nan" in kinds:
        dbg.break_on(when="nan_producer")
    if "error" in kinds:
        dbg.break_on(on_error=True)
    with dbg:
        status = run_script(script, script_args)
    for w in dbg.warnings:
        print(f"pyfunc-debug: warning: {w.message}", file=sys.stderr)
    return status


def _cmd_view(args) -> int:
    from .trace.jsonl import TraceFormatError, load_trace
    if args.trace.endswith(".json"):
        raise UsageError(f"{args.trace} is a Chrome trace: open it in https://ui.perfetto.dev; "
                         "view replays .jsonl traces (pyfunc-debug trace -o out.jsonl)")
    try:
        load_trace(args.trace)  # fail here, with the file and line, not inside the UI
    except (OSError, TraceFormatError) as e:
        raise UsageError(str(e)) from None
    tui = _tui()
    return tui.run_app(tui.view_app(args.trace))


def _cmd_diff(args) -> int:
    from .trace.diff import BadTrace, run_diff
    try:
        return run_diff(args.a, args.b, rtol=args.rtol, atol=args.atol)
    except BadTrace as e:
        raise UsageError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pyfunc-debug",
        description="Debug and trace dataflow graphs whose ops wrap Python functions.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="open the debugger UI on the built-in example graph")
    d.add_argument("--print", action="store_true",
                   help="print the demo's runs instead of opening the UI")
    d.set_defaults(func=_cmd_demo)
    t = sub.add_parser(
        "trace", help="run a script, recording every op: trace SCRIPT [ARGS...] -o OUT.json|"
        "OUT.jsonl [--capture none|summary|full]",
        description="Run SCRIPT with every Session.run / function call recorded. OUT.json is "
        "Chrome trace format (open it in https://ui.perfetto.dev); OUT.jsonl is pyfunc-debug's "
        "own format (pfd.load_trace). Put script arguments that look like our options after --.")
    t.add_argument("rest", nargs=argparse.REMAINDER, help="SCRIPT [ARGS...] -o OUT [--capture]")
    t.set_defaults(func=_cmd_trace)
    r = sub.add_parser(
        "run", help="run a script under the debugger: run SCRIPT [ARGS...] [--break GLOB]... "
        "[--break-on nan|error] [--console] [--guard-mutation]",
        description="Run SCRIPT with every Session.run / function call under the debugger. "
        "--break GLOB pauses before ops whose name matches (repeatable); --break-on nan pauses "
        "at the op that produces a NaN/Inf; --break-on error pauses where an op fails; "
        "--guard-mutation warns when a wrapped function writes into its inputs. At a pause "
        "the terminal UI opens (keys in its footer); with --console a (pfd) prompt takes c, n, "
        "s, pm, p, b, q, help instead. The UI pauses on errors unless --break-on says otherwise.")
    r.add_argument("rest", nargs=argparse.REMAINDER, help="SCRIPT [ARGS...] [options]")
    r.set_defaults(func=_cmd_run)
    v = sub.add_parser("view", help="replay a recorded trace (.jsonl) in the debugger UI")
    v.add_argument("trace", help="a .jsonl trace from pyfunc-debug trace or pfd.trace()")
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


# Commands whose own options may sit among the script's arguments: parsed by split_args.
_SCRIPT_COMMANDS = {"trace", "run"}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if argv and argv[0] in _SCRIPT_COMMANDS and not set(argv[1:2]) & {"-h", "--help"}:
        args = argparse.Namespace(command=argv[0], rest=argv[1:],
                                  func={"trace": _cmd_trace, "run": _cmd_run}[argv[0]])
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


if __name__ == "__main__":
    sys.exit(main())
