"""The diagnostics an ``on_warning`` breakpoint pauses for, kept until their op can show them.

Each ``Warning`` event is filed by when it was raised (``runtime.diagnose.KINDS``):

- "ran": on the op's own thread, right after it ran: taken by the pause check
  after that op (``take``); the thread's inbox is emptied when its next op starts;
- "run_start": about an op of the run that starts (folded, de-duplicated): the run
  loop takes them all at once (``take_run_start``) and pauses where the op ran in
  the folding, where its value is reused, or after the op it shares a value with;
- "built": while a graph was built (a blocked gradient): kept for any thread until
  the op it names next runs;
- "eager": an eager call inside a py_function body belongs to that op (``calling``
  names it); outside any op it already returned and nothing can pause for it —
  ``take`` never sees it, and the debugger says so (``refused``).

Kinds of the debugger's own notes (a condition that raised, a breakpoint that
cannot fire, …) are about the debugger, not the program: they are not filed.
"""
from __future__ import annotations

import threading

from ..runtime.diagnose import KINDS

__all__ = ["Inbox", "calling", "OWN_KINDS"]

OWN_KINDS = frozenset({"breakpoint_cannot_fire", "condition", "frontend", "subscriber",
                       "replay"})

# ``op``: the graph op whose kernel this thread runs under the debugger (``run_loop``):
# None outside any run, "" in a run's op that no breakpoint attends
calling = threading.local()


class Inbox:
    """Warnings waiting for a pause (see the module docstring); thread-safe."""

    def __init__(self):
        self._tls = threading.local()
        self._built: dict = {}      # op name -> [Warning], any thread
        self._lock = threading.Lock()

    def _mine(self, attr: str) -> dict:
        found = getattr(self._tls, attr, None)
        if found is None:
            found = {}
            setattr(self._tls, attr, found)
        return found

    def file(self, e) -> bool:
        """File a Warning; False when no pause can show it (an eager call outside any op)."""
        if e.kind in OWN_KINDS or not e.op:
            return True
        when = KINDS.get(e.kind, "ran")   # a kind not listed yet: as if after its op
        if when == "eager":
            op = getattr(calling, "op", None)
            if op is None:
                return False   # outside any run
            if op:   # "": inside an op no breakpoint attends, so none can pause after it
                self._mine("ran").setdefault(op, []).append(e)
        elif when == "run_start":
            self._mine("run_start").setdefault(e.op, []).append(e)
        elif when == "built" and e.run_id is None:
            with self._lock:
                self._built.setdefault(e.op, []).append(e)
        else:
            self._mine("ran").setdefault(e.op, []).append(e)
        return True

    def op_starts(self) -> None:
        """A graph op starts on this thread: what earlier ops raised is no longer wanted."""
        ran = getattr(self._tls, "ran", None)
        if ran:
            ran.clear()

    def take(self, name: str, source: str = "") -> tuple:
        """The warnings about op ``name`` that a pause right after it shows."""
        found = tuple(self._mine("ran").pop(name, ()))
        if self._built:
            with self._lock:
                built = self._built.get(name, ())
                mine = [w for w in built if not (w.source and source) or w.source == source]
                if mine:
                    self._built[name] = [w for w in built if w not in mine]
                    found += tuple(mine)
        return found

    def take_run_start(self) -> dict:
        """op name -> the warnings a run's start raised about it (on this thread)."""
        found = getattr(self._tls, "run_start", None)
        self._tls.run_start = None
        return found or {}
