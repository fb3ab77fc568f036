"""Fault capture (``capture="fault"``): the inputs of the wrapped calls that went wrong.

While a fault recorder is open, every wrapped-function kernel notes its op
and its argument list in ``events.held_calls`` (one dict store per call, by thread):
references, not copies, so a clean call costs next to nothing and leaves
nothing behind — the entry is replaced by the thread's next call and dropped
at the end of the run. When the call then turns out faulty — its op's
``OpError`` (it raised, or returned a wrong count or dtype), or a diagnostic
about it (``non_finite``, ``shape_change``, ``input_modified``, ...) — the
recorder writes the held inputs as value files (crash-safe, as
``capture="full"`` writes them) and appends a line naming them to
``<trace>.faults.jsonl``, beside the function's identity (module:qualname,
file, first line, source hash; once per op). ``pyfunc-debug replay`` reads it.

Inputs are held by reference: a function that writes into its input leaves
the written values behind. The write check (``runtime.modified``) notices it
and reports ``input_modified`` before any other diagnostic of the call, so
that call is recorded with ``modified: true`` and replay says its values are
the ones the call left behind.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import sys
import threading
import warnings

import numpy as np

from .. import events as ev
from .failures import original_line
from .values import BadValue, read_value, values_dir, write_value

__all__ = ["FaultRecorder", "faults_path", "load_faults", "identity",
           "FAULT_KINDS", "CallRecord"]

held = ev.held_calls   # thread ident -> (op, args) of the wrapped call running (last run) there

# diagnostics about the call that just ran (diagnose.KINDS "ran"/"eager")
FAULT_KINDS = frozenset({"non_finite", "shape_change", "input_modified", "mutation",
                         "tout_mismatch"})
_LINE = re.compile(r'File "([^"]+)", line (\d+)')
_lock = threading.Lock()


def faults_path(path) -> str:
    """Where a ``.jsonl`` trace's captured faulty calls are listed."""
    return os.fspath(path) + ".faults.jsonl"


def identity(func) -> dict:
    """Where ``func`` lives: module, qualname, file, first line and a hash of its source."""
    target = inspect.unwrap(func) if callable(func) else func
    code = getattr(target, "__code__", None)
    module = getattr(target, "__module__", None) or type(target).__module__
    qualname = getattr(target, "__qualname__", None) or getattr(target, "__name__", "?")
    file = os.path.abspath(code.co_filename) if code is not None else None
    line = code.co_firstlineno if code is not None else None
    info = {"module": module, "qualname": qualname, "file": file, "line": line,
            "source_sha256": source_hash(target)}
    if module == "__main__":   # ``run -m pkg.mod``: import the module by its real name
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        info["main_spec"] = getattr(spec, "name", None)
    return info


def identity_of_code(code) -> dict:
    """``identity`` of the function whose code object is ``code`` (its module found by file)."""
    file = os.path.abspath(code.co_filename)
    module = next((name for name, m in list(sys.modules.items())
                   if getattr(m, "__file__", None) and os.path.abspath(m.__file__) == file),
                  None)
    info = {"module": module, "qualname": getattr(code, "co_qualname", code.co_name),
            "file": file, "line": code.co_firstlineno, "source_sha256": source_hash(code)}
    if module == "__main__":
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        info["main_spec"] = getattr(spec, "name", None)
    return info


def source_hash(func) -> str | None:
    try:
        text = inspect.getsource(func)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def _raised_at(message: str):
    """(file, line) where the failing call raised: the innermost frame of the exception
    being handled (an OpError is emitted in the ``except`` clause that caught it), else
    the innermost frame the error message quotes."""
    tb = getattr(sys.exc_info()[1], "__traceback__", None)
    if tb is not None:
        while tb.tb_next is not None:
            tb = tb.tb_next
        return os.path.abspath(tb.tb_frame.f_code.co_filename), tb.tb_lineno
    found = _LINE.findall(message or "")
    return (found[-1][0], int(found[-1][1])) if found else (None, None)


class CallRecord(dict):
    """One captured call (a dict as stored); ``.inputs``: the values, loaded."""

    inputs: list


class FaultRecorder:
    """Captures the faulty calls a trace sees; ``path``: the ``.jsonl`` trace to write
    beside as they happen, or None to keep them (copied) until ``save``."""

    def __init__(self, path=None):
        self.path = path
        self.kept: list = []          # (record, values) when in memory
        self.functions: dict = {}     # op name -> its function record
        self.count = 0
        self._file = None
        self._closed = False
        if path is not None and os.path.lexists(faults_path(path)):
            os.unlink(faults_path(path))   # an earlier recording's: this trace replaces it
        with _lock:
            ev.fault_capture += 1

    def watching(self, callback):
        """``callback`` preceded by this recorder's look at the events that may name a fault."""
        note, kinds = self.note, (ev.OpError, ev.Warning, ev.RunEnd)

        def on_event(e):
            if e.__class__ in kinds:
                note(e)
            callback(e)
        return on_event

    def note(self, e) -> None:
        if e.__class__ is ev.RunEnd:
            held.pop(e.thread, None)   # the run is over: its last call's inputs go
            return
        if e.__class__ is ev.Warning:
            if e.kind not in FAULT_KINDS:
                return
            fault, error_type, message = e.kind, None, e.message
        elif e.message.startswith("interrupted by "):   # an abort, Ctrl+C: not the call's fault
            return
        else:
            fault, error_type, message = "error", e.error_type, e.message
        call = held.get(e.thread)
        if call is None or call[0].name != e.op:
            return
        held[e.thread] = None   # one record per call: a second diagnostic of it adds nothing
        op, args = call[0], call[1]
        try:
            self._capture(e, op, args, fault, error_type, message, call[2:])
        except Exception as exc:  # noqa: BLE001 - recording must never break the run
            warnings.warn(f"pyfunc-debug: the inputs of op '{e.op}' were not captured: "
                          f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)

    def _capture(self, e, op, args, fault, error_type, message, external) -> None:
        values = [np.asarray(a) for a in args]
        if op.name not in self.functions:
            if external:   # a TF/JAX callback: (the function called, "tensorflow" | "jax")
                self._add_external(op, *external, values)
            else:
                self._add_function(op)
        self.count += 1
        record = {"record": "call", "op": op.name, "op_type": op.type, "run_id": e.run_id,
                  "seq": e.seq, "thread": e.thread, "fault": fault,
                  "error_type": error_type, "message": message[-4000:],
                  "modified": fault == "input_modified", "inputs": []}
        if error_type is not None:   # the user's exception, and where it was raised
            record["error_file"], record["error_line"] = _raised_at(message)
            record["original_error"] = original_line(message)
        for i, (a, v) in enumerate(zip(args, values)):
            spec = {"key": f"fault{e.seq}-in{i}", "dtype": v.dtype.name, "shape": list(v.shape)}
            if not v.shape and a.__class__ is not np.ndarray:   # a numpy scalar or bytes, as
                spec["scalar"] = True                            # the call got it
            record["inputs"].append(spec)
        if self.path is None:
            self.kept.append((record, [v.copy() for v in values]))
        else:
            self._write(record, values)

    def _add_function(self, op) -> None:
        cb = op.attrs.get("callback")
        info = identity(cb.func) if cb is not None else {}
        info.update({"record": "function", "op": op.name, "op_type": op.type,
                     "Tout": [d.name for d in op.attrs.get("Tout", ())],
                     "Tin": [t.dtype.name for t in op.inputs],
                     "adapter": op.attrs.get("adapter")})
        self.functions[op.name] = info
        if self.path is not None:
            self._append(info)

    def _add_external(self, op, func, adapter, values) -> None:
        target = getattr(op, "target", None)
        code = getattr(inspect.unwrap(func), "__code__", None)
        # JAX hands over its own flat wrapper: the user's function is the op's code object
        info = identity_of_code(target) if target is not None and code is not target \
            else identity(func)
        info.update({"record": "function", "op": op.name, "op_type": op.type,
                     "Tout": list(op.declared),
                     "Tin": [v.dtype.name for v in values], "adapter": adapter})
        self.functions[op.name] = info
        if self.path is not None:
            self._append(info)

    def _write(self, record, values, path=None) -> None:
        folder = values_dir(path or self.path)
        os.makedirs(folder, exist_ok=True)
        for spec, v in zip(record["inputs"], values):   # the files first, then the line
            write_value(folder, spec["key"], v)
        self._append(record, path)

    def _append(self, record, path=None) -> None:
        line = (json.dumps(record, default=str) + "\n").encode()
        if path is not None:
            with open(faults_path(path), "ab") as f:
                f.write(line)
            return
        with _lock:
            if self._file is None:
                self._file = open(faults_path(self.path), "ab")
            self._file.write(line)
            self._file.flush()

    def save(self, path) -> None:
        """Write the kept calls beside the trace ``path`` (an in-memory recording)."""
        path = os.fspath(path)
        target = faults_path(path)
        if os.path.exists(target):
            os.unlink(target)
        for op in {r["op"] for r, _ in self.kept}:
            self._append(self.functions[op], path)
        for record, values in self.kept:
            self._write(record, values, path)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with _lock:
            ev.fault_capture -= 1
            if not ev.fault_capture:
                held.clear()
            if self._file is not None:
                self._file.close()


def load_faults(path) -> tuple[dict, list]:
    """(op -> function record, captured calls in order) of the trace ``path``.

    A torn last line (the recording process was killed) is skipped; a value file
    that cannot be read loads as ``None`` with one warning naming it.
    """
    path = os.fspath(path)
    functions, calls = {}, []
    try:
        with open(faults_path(path), "rb") as f:
            lines = f.read().split(b"\n")
    except FileNotFoundError:
        return functions, calls
    folder = values_dir(path)
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
            if type(rec) is not dict or rec.get("record") not in ("function", "call") or \
                    type(rec.get("op")) is not str:
                raise ValueError("not a function or call record")
        except (ValueError, RecursionError) as e:
            if n == len(lines) or (n == len(lines) - 1 and not lines[-1]):
                continue   # torn by a kill mid-write
            raise ValueError(f"{faults_path(path)}:{n}: malformed line: {e}") from None
        if rec["record"] == "function":
            functions[rec["op"]] = rec
            continue
        call = CallRecord(rec)
        call.inputs = [_load(folder, spec) for spec in rec.get("inputs", ())]
        calls.append(call)
    return functions, calls


def _load(folder, spec):
    key = spec.get("key") if type(spec) is dict else None
    try:
        return read_value(folder, key)
    except BadValue as e:
        warnings.warn(f"{os.path.join(folder, str(key) + '.npy')}: captured value not loaded "
                      f"({e})", RuntimeWarning, stacklevel=3)
        return None
