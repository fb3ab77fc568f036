"""``pyfunc-debug demo``: the built-in graph in the UI (or printed), and the shipped
examples (``--list``, ``--example NAME``).

The examples are the package ``pyfunc_debug.examples`` (the repository's
``examples/`` folder); they are found through ``importlib.resources``, so this
works from an installed wheel, and run by path as ``pyfunc-debug run`` runs a
script.
"""
from __future__ import annotations

import argparse
import ast
from importlib import resources

from .checks import UsageError
from .terminal import console_only, tui

__all__ = ["cmd_demo", "examples", "example_names"]

PACKAGE = "pyfunc_debug.examples"
# examples in these folders run with the framework's option (their docstrings say so)
FRAMEWORK_FOLDERS = {"tensorflow": "--tf"}


def examples() -> dict:
    """name -> the example's file (a ``Traversable``), e.g. ``nan_hunt``,
    ``tensorflow/dataset_map``; sorted by name."""
    root = resources.files(PACKAGE)
    found = {}
    for folder, prefix in [(root, "")] + [(root / f, f + "/") for f in FRAMEWORK_FOLDERS]:
        if not folder.is_dir():
            continue
        for item in folder.iterdir():
            if item.name.endswith(".py") and not item.name.startswith("_"):
                found[prefix + item.name[:-3]] = item
    return dict(sorted(found.items()))


def example_names() -> list:
    return list(examples())


def summary(item) -> str:
    """The first line of an example's docstring (read, not imported: no side effects)."""
    try:
        doc = ast.get_docstring(ast.parse(item.read_text(encoding="utf-8")))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        doc = None
    return doc.strip().splitlines()[0].replace("``", "") if doc else ""


def cmd_demo(args) -> int:
    run_options = args.console or args.break_ or args.break_on
    if args.list:
        if args.example is not None or args.print or run_options:
            raise UsageError("--list takes no other option")
        return _list()
    if args.example == "":
        raise UsageError("--example needs the NAME of an example: "
                         f"{', '.join(example_names())} (pyfunc-debug demo --list says "
                         "what each shows)")
    if args.example:
        if args.print:
            raise UsageError("--print is for the built-in graph, not --example")
        return _run_example(args)
    if run_options:
        raise UsageError("--console, --break and --break-on go with --example NAME "
                         "(pyfunc-debug demo --list names them)")
    return _builtin(args.print)


def _builtin(printed: bool) -> int:
    from .. import demo
    why = None if printed else console_only()
    if printed or why:
        print("pyfunc-debug demo: the built-in graph (validate -> normalize -> log_features -> "
              "scale -> loss), three runs." + ("" if printed else
                                                 f"\n({why}: printing the runs instead of "
                                                 "opening the UI)"))
        for op in demo.build().graph.get_operations():
            print(f"  op {op.name:14} {op.type:16} created at line {op.source.lineno}")
        demo.run()
        return 0
    ui = tui()
    return ui.run_app(ui.demo_app())


def _list() -> int:
    found = examples()
    width = max(map(len, found), default=0) + 2
    print(f"examples shipped with pyfunc-debug ({resources.files(PACKAGE)}):")
    for name, item in found.items():
        extra = [o for f, o in FRAMEWORK_FOLDERS.items() if name.startswith(f + "/")]
        note = f" (runs with {extra[0]})" if extra else ""
        print(f"  {name:{width}}{summary(item)}{note}")
    print("run one under the debugger: pyfunc-debug demo --example NAME [--console] "
          "[--break-on nan]")
    return 0


def _run_example(args) -> int:
    """``run`` on the example's file: the same options, the same frontends, the same status."""
    from .run import cmd_run
    found = examples()
    item = found.get(args.example)
    if item is None:
        raise UsageError(f"no example named {args.example!r}; the examples are: "
                         f"{', '.join(found)}")
    rest = ["--console"] if args.console else []
    rest += [a for glob in args.break_ or [] for a in ("--break", glob)]
    rest += [a for kind in args.break_on or [] for a in ("--break-on", kind)]
    rest += [o for f, o in FRAMEWORK_FOLDERS.items() if args.example.startswith(f + "/")]
    with resources.as_file(item) as path:   # a real file already, unless installed zipped
        run_args = argparse.Namespace(command="demo", rest=[*rest, str(path)], parser=None)
        return cmd_run(run_args)
