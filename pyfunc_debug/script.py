"""Running a user's program as ``__main__`` (for ``pyfunc-debug run`` and ``trace``).

The command line follows ``python``'s convention (as ``pudb`` and ``viztracer``
do): our options come first, then ``SCRIPT`` or ``-m MODULE``, and everything
after that belongs to the program. ``check`` finds problems before any UI
opens (a missing script or module: exit 2; a syntax error: its traceback,
exit 1). ``run_program`` returns an ``Outcome`` — the exit status ``python``
would give (0, the ``sys.exit`` code, 1 on an uncaught exception, 130 on
Ctrl+C) and what to print for it — instead of printing, so a UI can show it
after it closes.
"""
from __future__ import annotations

import importlib.util
import os
import runpy
import sys
import traceback
from dataclasses import dataclass, field

from .source_text import is_ours, launcher_files, relative_source, without_frames_of

__all__ = ["Program", "Outcome", "ProgramError", "parse_command", "check", "run_program",
           "abort_line"]


class ProgramError(Exception):
    """The program cannot start; ``status`` is the exit status (2: not found, 1: syntax)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


@dataclass
class Program:
    """A script path or a module name (``-m``), and its arguments."""

    path: str | None = None
    module: str | None = None
    args: list = field(default_factory=list)

    @property
    def title(self) -> str:
        return " ".join([self.path if self.path else f"-m {self.module}", *self.args])

    @property
    def argv0(self) -> str:
        return self.path or self.module or ""


@dataclass
class Outcome:
    """How the program ended: exit status, the exception that ended it, and what to print."""

    status: int
    error: BaseException | None = None
    report: str = ""          # a traceback, or one line for an abort; "" when it just ended


def parse_command(argv: list[str], options: dict[str, bool]) -> tuple[dict, Program | None]:
    """``[OPTIONS] SCRIPT [ARGS...]`` or ``[OPTIONS] -m MODULE [ARGS...]``.

    ``options`` maps each option to whether it takes a value. Our options stop
    at the script (or at ``--``); an unknown option before it is an error.
    ``-h``/``--help`` gives ``({"--help": True}, None)``.
    """
    found: dict = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a in ("-h", "--help"):
            return {"--help": True}, None
        if a == "-m" or (a.startswith("-m") and not a.startswith("--") and len(a) > 2):
            module = a[2:] or (argv[i + 1] if i + 1 < len(argv) else None)
            if not module:
                raise ValueError("option -m needs a module name")
            return found, Program(module=module, args=list(argv[i + (1 if a[2:] else 2):]))
        if not a.startswith("-") or a == "-":
            break
        name, eq, val = a.partition("=")
        if name not in options:
            raise ValueError(f"unknown option {name!r} (our options come before the script; "
                             f"put the script's own options after it)")
        if options[name]:
            if not eq:
                i += 1
                if i >= len(argv):
                    raise ValueError(f"option {name} needs a value")
                val = argv[i]
            found.setdefault(name, []).append(val)
        elif eq:
            raise ValueError(f"option {name} takes no value")
        else:
            found[name] = True
        i += 1
    if i >= len(argv):
        return found, None
    return found, Program(path=argv[i], args=list(argv[i + 1:]))


def check(program: Program):
    """Raise ``ProgramError`` if ``program`` cannot start; return its code object (scripts)."""
    if program.module is not None:
        sys.path.insert(0, os.getcwd())   # as python -m does
        try:
            spec = importlib.util.find_spec(program.module)
        except (ImportError, ValueError) as e:
            raise ProgramError(f"cannot find module {program.module!r}: {e}", 2) from None
        finally:
            del sys.path[0]
        if spec is None:
            raise ProgramError(f"no module named {program.module!r}", 2)
        return None
    path = program.path
    if not os.path.exists(path):
        raise ProgramError(f"no such script: {path}", 2)
    if os.path.isdir(path) and not os.path.exists(os.path.join(path, "__main__.py")):
        raise ProgramError(f"{path} is a directory with no __main__.py", 2)
    if os.path.isdir(path):
        return None
    try:
        with open(path, "rb") as f:
            source = f.read()
        return compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        text = "".join(traceback.format_exception_only(type(e), e))
        raise ProgramError(text.rstrip(), 1) from None
    except (OSError, ValueError) as e:
        raise ProgramError(f"cannot read {path}: {e}", 2) from None


def run_program(program: Program) -> Outcome:
    """Run ``program`` as ``__main__`` with ``sys.argv`` set; how it ended."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    if program.module is not None:
        sys.argv = [program.module, *program.args]
        sys.path.insert(0, os.getcwd())
    else:
        sys.argv = [program.path, *program.args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(program.path)))
    try:
        if program.module is not None:
            runpy.run_module(program.module, run_name="__main__", alter_sys=True)
        else:
            # absolute, as `python script.py` makes __file__ and co_filename (3.9+)
            runpy.run_path(os.path.abspath(program.path), run_name="__main__")
        return Outcome(0)
    except SystemExit as e:
        return _exit_outcome(e)
    except BaseException as e:  # noqa: B036 - the program's end, whatever it was
        return _failure_outcome(e, program)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        _settle_callbacks()


def _settle_callbacks() -> None:
    """A framework's threads still calling the program's functions finish first (see
    ``external_calls.settle``); only when an adapter was used (it imported that module)."""
    calls = sys.modules.get("pyfunc_debug.external_calls")
    if calls is not None:
        calls.settle()


def _exit_outcome(e: SystemExit) -> Outcome:
    code = e.code
    if code is None:
        return Outcome(0)
    if isinstance(code, int):
        return Outcome(code)
    return Outcome(1, report=str(code))   # python prints a non-integer exit code


def _failure_outcome(e: BaseException, program: Program) -> Outcome:
    status = 130 if isinstance(e, KeyboardInterrupt) else 1
    line = abort_line(e)
    if line is not None:
        return Outcome(status, e, f"pyfunc-debug: {line}")
    if isinstance(e, KeyboardInterrupt):
        return Outcome(status, e, f"pyfunc-debug: interrupted (Ctrl+C){_where(e)}")
    quit_ = _pdb_quit(e)
    if quit_ is not None:   # q in a pdb the program opened itself (breakpoint())
        return Outcome(status, e, f"pyfunc-debug: run aborted (q in pdb){_user_line(quit_)}")
    tb = _from_program(e.__traceback__, program)
    text = "".join(traceback.format_exception(type(e), e, tb))
    # a message that quotes the stack it was raised in (JAX's JaxRuntimeError): as run alone
    return Outcome(status, e, without_frames_of(text, launcher_files()).rstrip())


def abort_line(e: BaseException) -> str | None:
    """One line for a run the user ended from the debugger (``q``, Ctrl+C at a pause)."""
    op = getattr(e, "pfd_aborted_at", None)
    calls = sys.modules.get("pyfunc_debug.external_calls")  # loaded only with --tf/--jax
    if op is None and calls is not None:
        op = calls.abort_of(e)   # a framework's error: it kept only our message's text
    if op is None:
        return None
    return f"run aborted at op '{op}'" + (" (Ctrl+C)" if isinstance(e, KeyboardInterrupt) else "")


def _pdb_quit(e: BaseException):
    """The ``bdb.BdbQuit`` that ended the program, itself or as the cause of an op's error."""
    import bdb
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, bdb.BdbQuit):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


def _user_line(e: BaseException) -> str:
    """`` at FILE:LINE`` of the last frame of ``e``'s traceback outside pdb and us."""
    tb, found = e.__traceback__, ""
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if os.path.basename(name) not in ("bdb.py", "pdb.py", "pdbpp.py") \
                and not is_ours(os.path.abspath(name)):
            found = f" at {relative_source(f'{name}:{tb.tb_lineno}')}"
        tb = tb.tb_next
    return found


def _where(e: BaseException) -> str:
    tb, last = e.__traceback__, None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return ""
    return f" at {last.tb_frame.f_code.co_filename}:{last.tb_lineno}"


def _from_program(tb, program: Program):
    """The traceback from the program's own first frame on (no runpy, no pyfunc-debug)."""
    here = os.path.abspath(__file__)
    first = tb
    while first is not None:
        name = first.tb_frame.f_code.co_filename
        if name != here and os.path.basename(name) != "runpy.py" and not name.startswith("<frozen"):
            return first
        first = first.tb_next
    return tb
