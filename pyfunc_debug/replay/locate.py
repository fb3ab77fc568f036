"""Finding a recorded op's function again: import its module, walk its qualname.

Importing the user's module runs its top-level code: that is why only
``pyfunc-debug replay`` (an explicit act) does it, never ``load_trace`` or ``view``.
A function recorded from a script run as ``__main__`` (``pyfunc-debug run
script.py``) is found by loading only the script's definitions under another
module name (``script_defs``): the program its top level is, and its
``if __name__ == "__main__":`` block, do not run again; one run with ``-m``
is imported by its real module name.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from ..trace.faults import source_hash
from .script_defs import load_definitions

__all__ = ["ReplayError", "find_function", "source_changed", "unimportable", "MAIN_NAME"]

MAIN_NAME = "__pfd_replay_main__"   # the module a recorded ``__main__`` script is loaded as


class ReplayError(ValueError):
    """A call that cannot be replayed; the message is one line naming the op and what to do."""


def _where(info) -> str:
    where = info.get("file") or "?"
    return f"{where}:{info['line']}" if info.get("line") else where


def unimportable(qualname: str) -> str:
    """Why replay cannot import a function of this qualname ("" when it can): nothing to
    find by name in its module."""
    if qualname == "?":   # identity() of a functools.partial, a callable instance
        return "a functools.partial or a callable object with no name"
    if "<lambda>" in qualname or "<locals>" in qualname:
        return "a lambda or is defined inside another function"
    return ""


def find_function(op: str, info: dict):
    """The function ``info`` (a function record) names, imported now."""
    module, qualname = info.get("module"), info.get("qualname")
    if not module or not qualname:
        raise ReplayError(f"op '{op}': the trace does not name its function (recorded by an "
                          "older pyfunc-debug?): record again with --capture fault")
    name = f"{module}:{qualname}"
    why = unimportable(qualname)
    if why:
        raise ReplayError(f"op '{op}': its function {name} ({_where(info)}) is {why}, which "
                          "replay cannot import: define it at module level and record again")
    try:
        mod = _import(module, info)
    except ReplayError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever importing the user's code raised
        raise ReplayError(f"op '{op}': importing {module} for {name} failed: "
                          f"{type(e).__name__}: {e}; run replay where the program's imports "
                          "work (its folder, or PYTHONPATH)") from None
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ReplayError(f"op '{op}': function {name} not found in {mod.__name__} "
                              f"({getattr(mod, '__file__', '?')}): was it renamed or moved "
                              "since the recording? record again")
    return obj


def _import(module: str, info: dict):
    file = info.get("file")
    if module == "__main__":
        spec_name = info.get("main_spec")
        if spec_name:   # run with -m: the module has a real name
            return _import_named(spec_name, file)
        if file and not os.path.isfile(file) and os.path.isfile(os.path.basename(file)):
            # the project moved (replay runs "later, elsewhere"): the script of that name
            # in the current folder
            print(f"replay: the recorded script {file} is not there; using "
                  f"./{os.path.basename(file)}", file=sys.stderr)
            file = os.path.abspath(os.path.basename(file))
        if not file or not os.path.isfile(file):
            raise ReplayError(f"op '{info.get('op', '?')}': the recorded script {file!r} is "
                              "not there any more, nor one of its name in the current folder: "
                              "run replay in the program's folder (it needs its source)")
        return _load_script(file, info.get("qualname") or "")
    return _import_named(module, file)


def _import_named(module: str, file):
    if module in sys.modules:
        return sys.modules[module]
    base = _package_root(module, file)
    if base is not None and base not in sys.path:
        sys.path.append(base)   # after the usual places: where it was is only a fallback
    return importlib.import_module(module)


def _package_root(module: str, file):
    """The folder ``module`` is imported from, judged by its recorded file (``a.b`` in
    ``/x/a/b.py`` -> ``/x``), so a test module pytest imported under its rootdir-based
    name imports here too."""
    if not file:
        return None
    folder = os.path.dirname(os.path.abspath(file))
    parts = module.split(".")
    if os.path.basename(file) == "__init__.py":
        parts = parts[:-1] if len(parts) > 1 else []
        folder = os.path.dirname(folder) if not parts else folder
    for _ in parts[:-1]:
        folder = os.path.dirname(folder)
    return folder


def _load_script(file: str, qualname: str):
    """The definitions of the script at ``file`` as module ``MAIN_NAME``; says on stderr
    which of its top-level lines did not run."""
    loaded = sys.modules.get(MAIN_NAME)
    if loaded is not None and getattr(loaded, "__file__", None) == file:
        return loaded
    folder = os.path.dirname(os.path.abspath(file))
    if folder not in sys.path:
        sys.path.insert(0, folder)   # as ``python script.py`` would: its siblings import
    mod, skipped = load_definitions(file, qualname, MAIN_NAME)
    if skipped:
        lines = ", ".join(map(str, skipped[:6])) + (", …" if len(skipped) > 6 else "")
        print(f"replay: loaded the definitions {qualname} needs from "
              f"{os.path.basename(file)}; its other top-level code did not run "
              f"(line{'s' if len(skipped) > 1 else ''} {lines})", file=sys.stderr)
    return mod


def source_changed(op: str, func, info: dict) -> str | None:
    """One line saying the function's source differs from the recorded one, or None."""
    recorded = info.get("source_sha256")
    if not recorded:
        return None
    now = source_hash(func)
    if now == recorded:
        return None
    code = getattr(func, "__code__", None)
    moved = ""
    if code is not None and info.get("line") and code.co_firstlineno != info["line"]:
        moved = f", now at line {code.co_firstlineno}, was {info['line']}"
    return (f"op '{op}': the source of {info['module']}:{info['qualname']} changed since the "
            f"recording ({_where(info)}{moved}): replaying the current code")
