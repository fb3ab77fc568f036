"""The ``pyfunc-debug`` command (also ``python -m pyfunc_debug``)."""
from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def _cmd_demo(args) -> int:
    from . import demo
    print("pyfunc-debug demo: the built-in graph (validate -> normalize -> log_features -> "
          "scale -> loss), three runs.\n(The terminal UI is not built yet; this prints the runs.)")
    for op in demo.build().graph.get_operations():
        print(f"  op {op.name:14} {op.type:16} created at line {op.source.lineno}")
    demo.run()
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pyfunc-debug",
        description="Debug and trace dataflow graphs whose ops wrap Python functions.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="run the built-in example graph (no arguments, no files)")
    d.set_defaults(func=_cmd_demo)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
