"""The console frontend: a ``(pfd)`` prompt at each pause, on any stdin/stdout.

Commands: ``c`` continue, ``n`` next op, ``s`` step into the wrapped function
under pdb, ``pm`` post-mortem at an error, ``p [out] [i]`` print values
(numpy-formatted), ``b GLOB`` break at ops matching GLOB, ``bl`` list
breakpoints, ``q`` abort the run, ``help``. End of input continues.
"""
from __future__ import annotations

import sys

import numpy as np

from .. import events as ev
from ..trace.summary import summarize

__all__ = ["ConsoleFrontend", "DiagnosticPrinter"]

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


class ConsoleFrontend:
    """``on_pause`` for ``Debugger``: prints the pause, reads commands until an action."""

    prompt = "(pfd) "

    def __init__(self, stdin=None, stdout=None, debugger=None):
        # ``debugger``: a Debugger or a ``frontend.Link`` (``b`` and ``bl`` use it)
        self.stdin = stdin
        self.stdout = stdout
        self.debugger = debugger

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
            self._out.write(self.prompt)
            self._out.flush()
            try:
                line = self._in.readline()
            except KeyboardInterrupt:  # Ctrl+C at the prompt quits (the CLI says where)
                self.write("")
                raise
            if not line:
                self.write("(end of input: continuing)")
                return "continue"
            action = self.handle(line.strip(), pause)
            if action is not None:
                return action

    def show(self, pause) -> None:
        self.write(f"── {pause.describe()}")
        if pause.warning is not None:
            self.write(f"   ⚠ {pause.warning.message}")
            if pause.warning.hint:
                self.write(f"     fix: {pause.warning.hint}")
        for i, (s, producer) in enumerate(zip(pause.input_summaries(), pause.producers())):
            origin = f" (from '{producer}')" if producer else ""
            self.write(f"   input {i}{origin}:  {s.short()}   {s.preview}")
        if pause.outputs is not None:
            for i, s in enumerate(pause.output_summaries()):
                self.write(f"   output {i}: {s.short()}   {s.preview}")
        if pause.error is not None:
            first = str(pause.error).strip().splitlines()
            self.write(f"   error: {pause.error_type}: "
                       f"{next((l for l in first if l and not l.startswith(('Graph', 'Detected'))), '')}")
        self.write(f"   actions: {', '.join(pause.actions)}   (help for commands)")

    def handle(self, cmd: str, pause):
        """Do one command; return the action it ends the pause with, or None."""
        word, _, rest = cmd.partition(" ")
        rest = rest.strip()
        if not word:
            return None
        if word in _ACTIONS:
            action = _ACTIONS[word]
            if action not in pause.actions:
                why = {"step_into": f"op '{pause.op_name}' ({pause.op_type}) does not wrap a "
                                    "Python function, or it already ran",
                       "post_mortem": "post-mortem is only possible at an error"}.get(action, "")
                self.write(f"cannot {action} here: {why}")
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
                self.write(f"no {label} {parts[0]!r}: op '{pause.op_name}' has {count} "
                           f"{label}s (0..{count - 1})")
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


class DiagnosticPrinter:
    """An event subscriber printing each diagnostic (``Warning``) once per op and kind,
    with its fix hint: ``events.subscribe(DiagnosticPrinter(), capture="summary")``."""

    def __init__(self, stdout=None):
        self.stdout = stdout
        self.seen: set = set()

    def __call__(self, e) -> None:
        if type(e) is not ev.Warning or (e.op, e.kind) in self.seen:
            return
        self.seen.add((e.op, e.kind))
        out = self.stdout or sys.stderr
        out.write(f"pyfunc-debug: warning: {e.message}\n")
        if e.hint:
            out.write(f"  fix: {e.hint}\n")
        out.flush()
