"""The ``argparse`` parser: every command, option, help line and example.

``run`` and ``trace`` are parsed by ``script.parse_command`` (python's
convention: our options, then the script and its own arguments); their
parsers here only print help and feed the shell completion. An argument whose
value is a file carries ``completion = "file"``, which ``completion`` reads.
"""
from __future__ import annotations

import argparse

from .attach import cmd_attach
from .demo import cmd_demo, example_names
from .run import BREAK_ON, RUN_USAGE, cmd_run
from .replay import cmd_replay
from .trace import TRACE_USAGE, cmd_trace
from .traces import cmd_diff, cmd_export, cmd_view

__all__ = ["build_parser", "SCRIPT_COMMANDS", "SHELLS"]

SHELLS = ("bash", "zsh")
# commands that run a program: parsed by script.parse_command; argparse only prints help
SCRIPT_COMMANDS = {"run": cmd_run, "trace": cmd_trace}
EXPORT_FORMATS = ("csv", "parquet")   # trace.export.FORMATS (imported only when used)

MAIN_EPILOG = """\
examples:
  pyfunc-debug demo                               the UI on a built-in graph (q quits)
  pyfunc-debug run --break-on nan train.py        pause right after the op that makes a NaN
  pyfunc-debug trace -o run.jsonl train.py        record every op; then: view run.jsonl

shell completion (commands, options, their values, file names):
  eval "$(pyfunc-debug --print-completion bash)"   # add this line to ~/.bashrc
  eval "$(pyfunc-debug --print-completion zsh)"    # or to ~/.zshrc, after compinit

pyfunc-debug COMMAND --help shows a command's options and examples."""

DEMO_EPILOG = """\
examples:
  pyfunc-debug demo                                   the built-in graph in the UI
  pyfunc-debug demo --print                           its three runs, printed
  pyfunc-debug demo --list                            the shipped example programs
  pyfunc-debug demo --example nan_hunt --break-on nan pause where the NaN is made
  pyfunc-debug demo --example py_func_sinh --console  at a (pfd) prompt instead of the UI"""

RUN_EPILOG = """\
examples:
  pyfunc-debug run train.py --epochs 3                the UI; --epochs 3 is the script's
  pyfunc-debug run --break-on nan train.py            pause right after the op making a NaN
  pyfunc-debug run --console --break 'loss*' train.py a (pfd) prompt before ops named loss*
  pyfunc-debug run -m mypkg.train                     a module, as python -m runs it
  pyfunc-debug run --tf --break-on nan tf_train.py    real TensorFlow's py_function callbacks
  pyfunc-debug run --listen 127.0.0.1:5678 --wait train.py   then, elsewhere: attach"""

TRACE_EPILOG = """\
examples:
  pyfunc-debug trace -o run.json train.py                 open it in https://ui.perfetto.dev
  pyfunc-debug trace -o run.jsonl train.py                then: pyfunc-debug view run.jsonl
  pyfunc-debug trace -o run.jsonl --capture full train.py values too (diff compares them)
  pyfunc-debug trace --tf -o map.jsonl tf_pipeline.py     real TensorFlow's callbacks"""

VIEW_EPILOG = """\
examples:
  pyfunc-debug view run.jsonl                        step through it: ←/→ events, [/] runs
  pyfunc-debug view new.jsonl --diff old.jsonl       open at the first op that differs"""

DIFF_EPILOG = """\
examples:
  pyfunc-debug diff old.jsonl new.jsonl              the first op whose outputs differ
  pyfunc-debug diff old.jsonl new.jsonl --rtol 1e-3  looser: float noise is no difference"""

EXPORT_EPILOG = """\
examples:
  pyfunc-debug export run.jsonl                      run.csv beside the trace
  pyfunc-debug export run.jsonl -o - | column -s, -t   CSV on stdout
  pyfunc-debug export run.jsonl --format parquet -o run.parquet   (the parquet extra)
  python -c "import pandas as pd; print(pd.read_csv('run.csv').groupby('op').duration_ns.sum())\""""

ATTACH_EPILOG = """\
examples:
  pyfunc-debug run --listen 127.0.0.1:5678 --wait train.py   prints: listening on ... token T
  pyfunc-debug attach 127.0.0.1:5678 --token T               the UI, live
  PYFUNC_DEBUG_TOKEN=T pyfunc-debug attach 127.0.0.1:5678 --console --break-on nan"""


class _Formatter(argparse.HelpFormatter):
    """Text with line breaks (the examples) is kept as written, other text is wrapped to
    the terminal; the commands are listed without a "COMMAND" heading line."""

    def _fill_text(self, text, width, indent):
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _format_action(self, action):
        if isinstance(action, argparse._SubParsersAction):
            return "".join(self._format_action(a) for a in action._get_subactions())
        return super()._format_action(action)


def _command(sub, name: str, epilog: str, **kw) -> argparse.ArgumentParser:
    return sub.add_parser(name, epilog=epilog, formatter_class=_Formatter, **kw)


def _file(action: argparse.Action) -> argparse.Action:
    """Mark an argument whose value is a file name (the shell completes file names; a
    callable ``completion`` instead gives the words to complete)."""
    action.completion = "file"
    return action


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("pyfunc-debug")
    except PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown (not installed)"


def _framework_options(parser) -> None:
    parser.add_argument("--tf", action="store_true", help="instrument TensorFlow's py_function / "
                        "numpy_function / py_func callbacks (needs the tensorflow extra)")
    parser.add_argument("--jax", action="store_true", help="instrument JAX's pure_callback / "
                        "io_callback / debug.callback (needs the jax extra)")


def _breakpoint_options(parser, break_on_help: str) -> None:
    parser.add_argument("--break", dest="break_", metavar="GLOB", action="append",
                        help="pause before ops whose name matches (repeatable)")
    parser.add_argument("--break-on", choices=BREAK_ON, action="append", help=break_on_help)


def _script_usage(usage: str, command: str) -> str:
    return usage.replace("pyfunc-debug ", "%(prog)s ", 1).replace(f"{command} ", "", 1)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pyfunc-debug", epilog=MAIN_EPILOG, formatter_class=_Formatter,
        description="Debug and trace dataflow graphs whose ops wrap Python functions "
                    "(py_func, numpy_function, py_function).")
    p.add_argument("--version", action="version", version=f"pyfunc-debug {_version()}")
    p.add_argument("--print-completion", choices=SHELLS, metavar="bash|zsh",
                   help="print a completion script for the shell (see below)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    _add_demo(sub)
    _add_run(sub)
    _add_trace(sub)
    _add_view(sub)
    _add_diff(sub)
    _add_export(sub)
    _add_replay(sub)
    _add_attach(sub)
    return p


def _add_demo(sub) -> None:
    d = _command(
        sub, "demo", DEMO_EPILOG,
        help="the debugger UI on a built-in graph, or a shipped example program",
        description="Open the debugger UI on a built-in graph (numpy_function -> py_func -> "
        "py_function -> loss) that runs three times: run 1 is clean, run 2 makes a NaN, run 3 "
        "fails. Without a terminal the runs are printed. The shipped example programs "
        "(--list) run under the debugger with --example NAME, as pyfunc-debug run runs a "
        "script: the UI in a terminal, the (pfd) prompt otherwise or with --console.")
    d.add_argument("--print", action="store_true",
                   help="print the built-in graph's runs instead of opening the UI")
    d.add_argument("--list", action="store_true",
                   help="list the shipped examples, each with its first docstring line")
    d.add_argument("--example", metavar="NAME", nargs="?", const="",   # "": name them
                   help="run the example NAME under the "
                   "debugger").completion = example_names   # the shell completes the names
    d.add_argument("--console", action="store_true",
                   help="with --example: a (pfd) prompt instead of the UI")
    _breakpoint_options(d, "with --example: as for run")
    d.set_defaults(func=cmd_demo)


def _program_arguments(p) -> None:
    """``SCRIPT|-m MODULE [ARGS...]`` as help shows it (``script.parse_command`` parses)."""
    p.add_argument("-m", metavar="MODULE", help="run a module (as python -m) instead of SCRIPT")
    _file(p.add_argument("script", metavar="SCRIPT", nargs="?", help="the Python script to run"))
    p.add_argument("args", metavar="ARGS", nargs="*", help="the script's own arguments")


def _add_run(sub) -> None:
    r = _command(
        sub, "run", RUN_EPILOG, help="run a program under the debugger",
        usage=_script_usage(RUN_USAGE, "run"),
        description="Run SCRIPT (or -m MODULE) with every Session.run / function call under "
        "the debugger. Our options come before the script; everything after it is the "
        "script's. At a pause the terminal UI opens (keys in its footer); with --console, or "
        "when there is no terminal (or TERM=dumb), a (pfd) prompt takes c, n, s, pm, p, b, q, "
        "help instead (in a terminal, Up/Down recall earlier commands and Tab completes "
        "them). The UI pauses on errors unless --break-on says otherwise. The exit status is "
        "the script's: 0, its sys.exit code, 1 on an uncaught exception (q aborts the run: "
        "1), 130 on Ctrl+C.")
    _breakpoint_options(r, "nan: pause at the op that produces a NaN/Inf; error: where an op "
                        "fails; warning: right after an op that raised a diagnostic")
    r.add_argument("--console", action="store_true", help="a (pfd) prompt instead of the UI")
    r.add_argument("--guard-mutation", action="store_true",
                   help="warn when a wrapped function writes into its inputs")
    _framework_options(r)
    r.add_argument("--listen", metavar="HOST:PORT",
                   help="no UI here: serve the debugger for pyfunc-debug attach (port 0: any)")
    r.add_argument("--wait", action="store_true",
                   help="with --listen: start the program once a client is attached")
    _file(r.add_argument("-o", "--output", metavar="OUT.jsonl",
                         help="also record the run to OUT.jsonl (as trace does)"))
    r.add_argument("--capture", choices=("summary", "full", "fault"),
                   help="with -o: what the recording keeps; fault: the inputs of faulty "
                   "calls, for pyfunc-debug replay")
    _program_arguments(r)
    r.set_defaults(func=cmd_run)


def _add_trace(sub) -> None:
    t = _command(
        sub, "trace", TRACE_EPILOG, help="run a program headless, recording every op",
        usage=_script_usage(TRACE_USAGE, "trace"),
        description="Run SCRIPT (or -m MODULE) with every Session.run / function call "
        "recorded. OUT.json is Chrome trace format (open it in https://ui.perfetto.dev); "
        "OUT.jsonl is pyfunc-debug's own format (pfd.load_trace, pyfunc-debug view, export). "
        "Our options come before the script; everything after it is the script's. The exit "
        "status is the script's; an OUT that cannot be written is an error (exit 2) before "
        "the script starts.")
    _file(t.add_argument("-o", "--output", metavar="OUT", help="OUT.json or OUT.jsonl"))
    t.add_argument("--capture", choices=("none", "summary", "full", "fault"),
                   help="value summaries (default), copies of values too (full), or "
                   "summaries plus the inputs of faulty calls, for replay (fault)")
    _framework_options(t)
    _program_arguments(t)
    t.set_defaults(func=cmd_trace)


def _add_view(sub) -> None:
    v = _command(
        sub, "view", VIEW_EPILOG, help="replay a recorded trace (.jsonl) in the debugger UI",
        description="Replay a .jsonl trace (pyfunc-debug trace -o OUT.jsonl, pfd.trace()) in "
        "the debugger UI: move through its events and runs, each op's inputs and outputs as "
        "they were recorded. It needs a terminal; without one, read the trace with "
        "pyfunc-debug export. Chrome traces (.json) open in https://ui.perfetto.dev.")
    _file(v.add_argument("trace", metavar="TRACE",
                         help="a .jsonl trace from pyfunc-debug trace or pfd.trace()"))
    _file(v.add_argument("--diff", metavar="OTHER.jsonl",
                         help="open at the first op whose outputs differ from OTHER (see diff)"))
    v.set_defaults(func=cmd_view)


def _add_diff(sub) -> None:
    df = _command(
        sub, "diff", DIFF_EPILOG, help="compare two .jsonl traces: the first op whose outputs "
        "differ",
        description="Match runs by index and ops by name in execution order; print the first op "
        "whose outputs differ (shape, dtype, NaN/Inf counts, min/max/mean beyond tolerance, "
        "values when both captured), both sides' summaries and the upstream ops that agreed. "
        "Exit status 0: no difference, 1: a difference, 2: bad input.")
    _file(df.add_argument("a", metavar="A", help="the first .jsonl trace"))
    _file(df.add_argument("b", metavar="B", help="the second .jsonl trace"))
    df.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance (1e-5)")
    df.add_argument("--atol", type=float, default=1e-8, help="absolute tolerance (1e-8)")
    df.set_defaults(func=cmd_diff)


def _add_export(sub) -> None:
    e = _command(
        sub, "export", EXPORT_EPILOG, help="a .jsonl trace as a table: one row per op call",
        description="Write one row per op call of a .jsonl trace: run, op, op_type, thread, "
        "worker, start_ns, duration_ns, status, and per input/output shape, dtype, min, max, "
        "mean, nan, inf. CSV needs nothing; Parquet needs the parquet extra "
        "(pip install 'pyfunc-debug[parquet]'). The row count goes to stderr.")
    _file(e.add_argument("trace", metavar="TRACE", help="a .jsonl trace"))
    e.add_argument("--format", choices=EXPORT_FORMATS, default="csv",
                   help="csv (default) or parquet")
    _file(e.add_argument("-o", "--output", metavar="OUT",
                         help="where to write: - is stdout (csv only); default: TRACE with "
                         "the format's suffix"))
    e.set_defaults(func=cmd_export)


REPLAY_EPILOG = """\
examples:
  pyfunc-debug trace -o run.jsonl --capture fault train.py   inputs of faulty calls only
  pyfunc-debug replay run.jsonl                      the first faulty call, new vs recorded
  pyfunc-debug replay run.jsonl --pdb                stop at its function's first line
  pyfunc-debug replay run.jsonl --op scale --run 3 --post-mortem   pdb where it raises"""


def _add_replay(sub) -> None:
    r = _command(
        sub, "replay", REPLAY_EPILOG, help="re-run a recorded faulty call from its captured "
        "inputs (under pdb)",
        description="Re-run one call captured by a --capture fault trace (by default the "
        "first faulty one) in this process: import its function's module (a script recorded as "
        "__main__: only the definitions the function needs, not its program), call it with the "
        "recorded inputs, and print the new outputs beside the recorded ones. Exit status: 0 "
        "when the call now runs clean, 1 when it is still faulty, 2 when it cannot be "
        "replayed.")
    _file(r.add_argument("trace", metavar="TRACE", help="a .jsonl trace recorded with "
                         "--capture fault"))
    r.add_argument("--op", metavar="NAME", help="a captured call of this op")
    r.add_argument("--run", metavar="N", type=int, help="a captured call in run N")
    r.add_argument("--call", metavar="K", type=int, help="the K-th matching captured call "
                   "(1 = the first)")
    r.add_argument("--pdb", action="store_true", help="stop at the function's first line, "
                   "the recorded arguments in scope")
    r.add_argument("--post-mortem", action="store_true",
                   help="open pdb at the frame that raises, if it raises")
    r.add_argument("--list", action="store_true", help="list the captured calls")
    r.set_defaults(func=cmd_replay)


def _add_attach(sub) -> None:
    a = _command(
        sub, "attach", ATTACH_EPILOG,
        help="debug a process started with run --listen or PYFUNC_DEBUG_LISTEN",
        description="Attach the debugger UI (or, with --console, the (pfd) prompt) to a process "
        "serving its debugger (pyfunc-debug run --listen HOST:PORT, PYFUNC_DEBUG_LISTEN, "
        "pfd.debug.listen). Events stream in live; breakpoints, pauses, values and pdb (s, p) "
        "work as locally, pdb on this terminal. Leaving (q in the UI, Ctrl+C at the console) "
        "detaches: the process runs on. Exit status 0 when the process ended or we detached, "
        "1 when it went away (killed) or refused us.")
    a.add_argument("address", metavar="HOST:PORT", help="where the process listens")
    a.add_argument("--token", help="the token the process printed (or PYFUNC_DEBUG_TOKEN)")
    a.add_argument("--console", action="store_true", help="a (pfd) prompt instead of the UI")
    a.add_argument("--capture", choices=("none", "summary"), default="summary",
                   help="what streamed events carry: summary (default: value summaries and "
                   "diagnostics, as locally) or none (the cheapest stream for the target: "
                   "no values or diagnostics until a pause; pauses always carry them)")
    _breakpoint_options(a, "as for run")
    a.set_defaults(func=cmd_attach)
