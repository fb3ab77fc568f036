"""The console frontend: a ``(pfd)`` prompt at each pause, on any stdin/stdout.

Commands: ``c`` continue, ``n`` next op, ``s`` step into the wrapped function
under pdb, ``pm`` post-mortem at an error, ``p [out] [i]`` print values
(numpy-formatted), ``b GLOB`` break at ops matching GLOB, ``bl`` list
breakpoints, ``q`` abort the run, ``help``. End of input continues.

At a terminal (stdin and stdout both ttys, no streams given) the prompt reads
through ``readline``: Up/Down recall earlier commands of the session, Tab
completes the commands, and the history is kept across sessions in
``$PYFUNC_DEBUG_HISTORY``, else ``$XDG_STATE_HOME/pyfunc-debug/history``
(``~/.local/state/pyfunc-debug/history``); an empty ``PYFUNC_DEBUG_HISTORY``
keeps none. A history file that cannot be read or written is skipped silently.
Without a terminal the prompt reads plain lines, as before.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from .. import events as ev
from ..trace.summary import summarize

__all__ = ["ConsoleFrontend", "DiagnosticPrinter", "history_path"]

HELP = """commands at the (pfd) prompt:
  c          continue the run
  n          pause before the next op that runs (eager ops inside a py_function too)
  s          step into the wrapped Python function under pdb (py_func/numpy_function/py_function)
  pm         post-mortem: pdb at the frame that raised (at an error)
  p          print all input values (and outputs, after the op)
  p I        print input I;  p out [I]  print the outputs (or output I)
  b GLOB     also pause before ops whose name matches GLOB
  bl         list breakpoints
  q          abort this run (it raises pfd.errors.CancelledError)
  help       this list"""

_ACTIONS = {"c": "continue", "continue": "continue", "n": "step", "next": "step",
            "s": "step_into", "step": "step_into", "pm": "post_mortem", "q": "abort",
            "quit": "abort"}
COMMANDS = ("c", "n", "s", "pm", "p", "b", "bl", "q", "help", "continue", "next", "step",
            "quit")
HISTORY_LINES = 1000   # the history file keeps the most recent ones
# the builtin, taken now: pdbpp's pyrepl replaces builtins.input with its own line editor
# (its own history) once a pdb session has run
_INPUT = input


# a pause's actions as the keys that take them at the (pfd) prompt
_KEYS = {"continue": "c continue", "step": "n next op", "step_into": "s step into",
         "post_mortem": "pm post-mortem", "abort": "q abort"}


class ConsoleFrontend:
    """``on_pause`` for ``Debugger``: prints the pause, reads commands until an action."""

    prompt = "(pfd) "

    def __init__(self, stdin=None, stdout=None, debugger=None):
        # ``debugger``: a Debugger or a ``frontend.Link`` (``b`` and ``bl`` use it)
        self.stdin = stdin
        self.stdout = stdout
        self.debugger = debugger
        self._editor = None       # a _LineEditor, made at the first prompt at a terminal

    @property
    def _in(self):
        return self.stdin or sys.stdin

    @property
    def _out(self):
        return self.stdout or sys.stdout

    def write(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def __call__(self, pause) -> str:
        self.show(pause)
        while True:
            try:
                line = self._read_line()
            except KeyboardInterrupt:  # Ctrl+C at the prompt quits (the CLI says where)
                self.write("")
                raise
            if not line:
                self.write("(end of input: continuing)")
                return "continue"
            action = self.handle(line.strip(), pause)
            if action is not None:
                return action

    def _read_line(self) -> str:
        """One command line, ending in a newline; "" at the end of input."""
        if self._editor is None and self.stdin is None and self.stdout is None:
            self._editor = _LineEditor.at_terminal() or False
        if self._editor:
            return self._editor.read(self.prompt)
        self._out.write(self.prompt)
        self._out.flush()
        return self._in.readline()

    def show(self, pause) -> None:
        self.write(f"── {pause.describe()}")
        hints = set()
        for w in _diagnostics(pause):
            self.write(f"   ⚠ {w.message}")
            if w.hint and w.hint not in hints:
                hints.add(w.hint)
                self.write(f"     fix: {w.hint}")
        after = getattr(pause, "inputs_after", None)   # a remote pause has none
        for i, (s, producer) in enumerate(zip(pause.input_summaries(), pause.producers())):
            origin = f" (from '{producer}')" if producer else ""
            self.write(f"   input {i}{origin}:  {s.short()}   {s.preview}")
            if after is not None and i < len(after) and _changed(pause.inputs[i], after[i]):
                left = summarize(after[i])
                self.write(f"   input {i} after (modified by this op):  {left.short()}   "
                           f"{left.preview}")
        if pause.outputs is not None:
            for i, s in enumerate(pause.output_summaries()):
                self.write(f"   output {i}: {s.short()}   {s.preview}")
        if pause.error is not None:
            first = str(pause.error).strip().splitlines()
            self.write(f"   error: {pause.error_type}: "
                       f"{next((l for l in first if l and not l.startswith(('Graph', 'Detected'))), '')}")
        self.write("   keys: " + ", ".join(_KEYS[a] for a in pause.actions if a in _KEYS)
                   + "   (help for all commands)")

    def handle(self, cmd: str, pause):
        """Do one command; return the action it ends the pause with, or None."""
        word, _, rest = cmd.partition(" ")
        rest = rest.strip()
        if not word:
            return None
        if word in _ACTIONS:
            action = _ACTIONS[word]
            if action not in pause.actions:
                self.write(f"cannot {_NAMES.get(action, action)} here: {_why_not(pause, action)}")
                return None
            return action
        if word == "p":
            self._print(rest, pause)
        elif word == "b":
            self._add_breakpoint(rest)
        elif word == "bl":
            dbg = self.debugger
            for bp in (dbg.breakpoints if dbg else []):
                self.write(f"  {bp!r}")
        elif word in ("help", "h", "?"):
            self.write(HELP)
        else:
            self.write(f"unknown command {word!r}; type help for the list")
        return None

    def _print(self, rest: str, pause) -> None:
        parts = rest.split()
        which, label, count = "inputs", "input", len(pause.inputs)
        if parts and parts[0] in ("out", "o", "outputs"):
            if pause.outputs is None:
                self.write("no outputs yet: the op has not run (use n to run it)")
                return
            which, label, parts = "outputs", "output", parts[1:]
            count = len(pause.outputs)
        if parts:
            try:
                index = int(parts[0])
                if not -count <= index < count:
                    raise IndexError(index)
                chosen = [(f"{label} {index}", which, index)]
            except (ValueError, IndexError):
                p = "p" if label == "input" else "p out"
                if count == 1:
                    hint = f" ({p} 0; {p} alone prints it)"
                else:
                    hint = f" ({p} 0 … {p} {count - 1}; {p} alone prints them all)" \
                        if count else ""
                self.write(f"no {label} {parts[0]!r}: op '{pause.op_name}' has {count} "
                           f"{label}{'' if count == 1 else 's'}{hint}")
                return
        else:
            chosen = [(f"{label} {i}", which, i) for i in range(count)]
            if pause.outputs is not None and label == "input":
                chosen += [(f"out {i}", "outputs", i) for i in range(len(pause.outputs))]
        with np.printoptions(threshold=200, linewidth=100):
            for name, kind, i in chosen:
                v = pause.value(kind, i)   # a remote pause fetches the full value here
                if v is None:
                    self.write(f"{name}: the value is not available (the op moved on, or it "
                               "holds objects that cannot be sent)")
                    continue
                shown = repr(v) if isinstance(v, (np.generic, bytes)) else repr(np.asarray(v))
                self.write(f"{name}: {summarize(v).short()}\n{shown}")

    def _add_breakpoint(self, glob: str) -> None:
        if not glob:
            self.write("usage: b GLOB   (e.g. b loss*)")
            return
        if self.debugger is None:
            self.write("no debugger to add breakpoints to")
            return
        bp = self.debugger.break_on(op=glob)
        self.write(f"added {bp.describe()}")


_NAMES = {"step_into": "step into", "post_mortem": "post-mortem"}


def _why_not(pause, action: str) -> str:
    """Why ``action`` is not possible at ``pause`` (a remote pause cannot say: a fallback)."""
    if hasattr(pause, "why_not"):
        return pause.why_not(action)
    if action == "post_mortem":
        return "post-mortem is only possible at an error"
    return (f"op '{pause.op_name}' ({pause.op_type}) has no Python function to step into "
            "here (s works on py_func, numpy_function and py_function ops)")


def _diagnostics(pause) -> list:
    """Every diagnostic the pause is for, each once (a remote pause has only ``warning``)."""
    found = list(getattr(pause, "warnings", ()) or ())
    if not found and getattr(pause, "warning", None) is not None:
        found = [pause.warning]
    shown, seen = [], set()
    for w in found:
        if (w.kind, w.message) not in seen:
            seen.add((w.kind, w.message))
            shown.append(w)
    return shown


def _changed(given, left) -> bool:
    try:
        return not np.array_equal(given, left, equal_nan=np.asarray(left).dtype.kind in "fc")
    except (TypeError, ValueError):
        return given is not left


def history_path() -> str | None:
    """Where the prompt's history is kept across sessions (None: nowhere)."""
    chosen = os.environ.get("PYFUNC_DEBUG_HISTORY")
    if chosen is not None:
        return chosen or None
    state = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(state):   # the XDG spec: a relative path is to be ignored
        state = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "pyfunc-debug", "history")


class _LineEditor:
    """The prompt through ``readline``: history, line editing, Tab completing commands.

    ``readline`` is process-wide (pdb and the program's own ``input()`` use it
    too), so the prompt's history and completer are swapped in only while it
    reads: Up at ``(pfd)`` recalls ``(pfd)`` commands, not pdb's.
    """

    _shared = None   # one per process: the history file is read once

    def __init__(self, readline, path: str | None):
        self.readline = readline
        self.path = path
        self.lines: list = self._load() if path else []

    @classmethod
    def at_terminal(cls) -> "_LineEditor | None":
        """The editor when stdin and stdout are the terminal and readline imports, else None."""
        try:
            if not (sys.stdin.isatty() and sys.stdout.isatty()):
                return None
            import readline
        except (ImportError, AttributeError, ValueError):   # no readline; closed streams
            return None
        if cls._shared is None:
            libedit = "libedit" in (readline.__doc__ or "")
            readline.parse_and_bind("bind ^I rl_complete" if libedit else "tab: complete")
            cls._shared = cls(readline, history_path())
        return cls._shared

    def read(self, prompt: str) -> str:
        rl = self.readline
        saved = rl.get_completer(), rl.get_completer_delims(), self._history(self.lines)
        rl.set_completer(self._complete)
        rl.set_completer_delims(" ")
        rl.set_auto_history(False)
        try:
            line = _INPUT(prompt)
        except EOFError:   # Ctrl+D
            return ""
        finally:
            rl.set_auto_history(True)
            rl.set_completer(saved[0])
            rl.set_completer_delims(saved[1])
            self._history(saved[2])
        if line.strip() and (not self.lines or self.lines[-1] != line):
            self.lines.append(line)
            self._save(line)
        return line + "\n"

    def _history(self, lines: list) -> list:
        """Put ``lines`` in readline's history; return what was there."""
        rl = self.readline
        before = [rl.get_history_item(i) for i in range(1, rl.get_current_history_length() + 1)]
        rl.clear_history()
        for line in lines:
            rl.add_history(line)
        return before

    def _load(self) -> list:
        """The history file's last ``HISTORY_LINES`` lines (a longer file is cut back)."""
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:   # none yet, unreadable: start afresh
            return []
        if len(lines) > HISTORY_LINES:
            lines = lines[-HISTORY_LINES:]
            self._write(lines, "w")
        return lines

    def _save(self, line: str) -> None:
        self._write([line], "a")

    def _write(self, lines: list, mode: str) -> None:
        """Write to the history file; give up quietly (and for good) if it cannot be."""
        if self.path is None:
            return
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            with open(self.path, mode, encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
        except OSError:   # read-only home, full disk: the session's history still works
            self.path = None

    def _complete(self, text: str, state: int):
        words = self.readline.get_line_buffer().split()
        if len(words) > 1 or (words and not text):   # the command's argument
            choices = ("out",) if words[0] == "p" else ()
        else:
            choices = COMMANDS
        matches = [w + " " for w in choices if w.startswith(text)]
        return matches[state] if state < len(matches) else None


class DiagnosticPrinter:
    """An event subscriber printing each diagnostic (``Warning``) once per op and kind,
    with its fix hint: ``events.subscribe(DiagnosticPrinter(), capture="summary")``.

    It reads no summary of an ``OpEnd``, so it may be ``subscribe``'s ``settles``: a
    recorded framework callback then leaves its small summaries pending
    (``trace.pending``), and the diagnostics taken from them are the same."""

    def __init__(self, stdout=None):
        self.stdout = stdout
        self.seen: set = set()
        self.ops: dict = {}   # name -> type of every op run or planned: what globs matched
        self.ran = False   # a run started: the program ran something we watch
        self.deferred = False   # set by a callback that left a summary pending: unread

    def __call__(self, e) -> None:
        if type(e) is not ev.Warning or (e.op, e.kind) in self.seen:
            if type(e) is ev.OpStart:   # a dict store: no tuple made per op
                self.ops[e.op] = e.op_type
            elif type(e) is ev.RunStart:
                self.ran = True
                self.ops.update(zip(e.ops, e.op_types))
            return
        self.seen.add((e.op, e.kind))
        out = self.stdout or sys.stderr
        out.write(f"pyfunc-debug: warning: {e.message}\n")
        if e.hint:
            out.write(f"  fix: {e.hint}\n")
        out.flush()

    op_write = __call__   # as a settling sink: events that come without a debugger
