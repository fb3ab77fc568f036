"""Running a user's script as ``__main__`` (for ``pyfunc-debug trace`` and ``run``)."""
from __future__ import annotations

import os
import runpy
import sys
import traceback

__all__ = ["run_script", "split_args"]


def run_script(path: str, args: list[str]) -> int:
    """Run ``path`` with ``sys.argv = [path, *args]``; its exit status (1 if it raised)."""
    if not os.path.isfile(path):
        print(f"pyfunc-debug: no such script: {path}", file=sys.stderr)
        return 2
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
        return 0
    except SystemExit as e:
        code = e.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def split_args(argv: list[str], options: dict[str, bool]) -> tuple[dict, str | None, list[str]]:
    """Split ``[opts] SCRIPT [ARGS...]`` where our options may also follow the script.

    ``options`` maps an option name to whether it takes a value. Everything after
    ``--`` belongs to the script.
    """
    found: dict = {}
    script, rest = None, []
    it = iter(argv)
    for a in it:
        if a == "--":
            rest.extend(it)
            break
        name, eq, val = a.partition("=")
        if name in options:
            if options[name]:
                if not eq:
                    val = next(it, None)
                    if val is None:
                        raise ValueError(f"option {name} needs a value")
                found.setdefault(name, []).append(val)
            else:
                found[name] = True
        elif script is None:
            script = a
        else:
            rest.append(a)
    return found, script, rest
