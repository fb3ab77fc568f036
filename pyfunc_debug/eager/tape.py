"""GradientTape: records ops on watched tensors; ``gradient`` replays them backwards.

Records are (op, inputs, outputs) triples; ``op`` is a graph ``Operation`` or an
eager op record, so one backprop (``autodiff.backprop``) serves both.
"""
from __future__ import annotations

import contextlib
import threading

from ..nest import flatten, pack_sequence_as

__all__ = ["GradientTape", "recording", "record", "install_backprop"]

_local = threading.local()
# ``autodiff`` installs its backprop here when imported: eager/ never imports upward.
_backprop = None


def install_backprop(fn) -> None:
    global _backprop
    _backprop = fn


def _active() -> list:
    try:
        return _local.tapes
    except AttributeError:
        _local.tapes = []
        return _local.tapes


def recording() -> bool:
    return bool(getattr(_local, "tapes", None))


def variable_accessed(var) -> None:
    """A trainable variable read while tapes record is watched by them (TF's default)."""
    if not var.trainable:
        return
    for tape in _local.tapes:
        if tape._watch_accessed:
            tape._tracked[id(var)] = var


def record(op, inputs, outputs) -> None:
    for tape in list(_local.tapes):
        tape._record(op, inputs, outputs)


class GradientTape:
    """Record ops on watched tensors; ``gradient(target, sources)`` differentiates.

    Watched tensors (``tape.watch(x)``) and trainable variables read in the
    block (unless ``watch_accessed_variables=False``) are recorded, with what is
    computed from them.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._records: list = []
        self._tracked: dict[int, object] = {}
        self._used = False

    def __enter__(self):
        _active().append(self)
        return self

    def __exit__(self, *exc):
        tapes = _active()
        if self in tapes:
            tapes.remove(self)
        return False

    def watch(self, tensor) -> None:
        for t in flatten(tensor):
            if getattr(t, "dtype", None) is not None and t.dtype.is_differentiable:
                self._tracked[id(t)] = t

    def watched_tensors(self) -> list:
        return [t for t in self._tracked.values()]

    @contextlib.contextmanager
    def stop_recording(self):
        tapes = _active()
        was = self in tapes
        if was:
            tapes.remove(self)
        try:
            yield
        finally:
            if was:
                tapes.append(self)

    def reset(self) -> None:
        self._records.clear()
        self._tracked.clear()

    def _record(self, op, inputs, outputs) -> None:
        tracked = self._tracked
        for x in inputs:
            if id(x) in tracked:
                break
        else:
            return
        self._records.append((op, tuple(inputs), tuple(outputs)))
        for o in outputs:
            tracked[id(o)] = o

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        """d(target)/d(sources), shaped like ``sources``; ``None`` where unconnected."""
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute "
                               "one set of gradients (or jacobians).")
        self._used = True
        targets = flatten(target)
        seeds = flatten(output_gradients) if output_gradients is not None else [None] * len(targets)
        flat_sources = flatten(sources)
        with self.stop_recording():
            grads = _backprop(self._records, targets, seeds, flat_sources,
                             unconnected=str(getattr(unconnected_gradients, "value",
                                                     unconnected_gradients)).lower())
        return pack_sequence_as(sources, grads)


@contextlib.contextmanager
def isolated(tape):
    """Only ``tape`` (or none) records inside the block; outer tapes are paused."""
    saved = _active()
    _local.tapes = [tape] if tape is not None else []
    try:
        yield
    finally:
        _local.tapes = saved
