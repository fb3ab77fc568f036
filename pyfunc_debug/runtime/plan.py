"""Plan: what one (fetches, feeds) signature runs, compiled once and reused.

Pruned to the ops the fetches need, in topological (= creation) order, with
identical stateless ops sharing one execution (CSE) and stateless ops on
constants folded: run on the first call and cached in ``fold_cache``
(a Session's or a function's) for later runs (TF#38, TF#41).
"""
from __future__ import annotations

import functools
import gc
import threading

import numpy as np
from dataclasses import dataclass, field

from ..errors import InvalidArgumentError, op_context
from ..graph.big_build import restore_full_collections
from ..graph.operation import Operation
from ..graph.tensor import SymbolicTensor
from .parallel import is_chain

__all__ = ["Plan", "Step", "compile_plan"]

# Step modes: how the executor calls the kernel (fixed arity avoids building a list).
ARGS0, ARGS1, ARGS2, ARGSN = 0, 1, 2, 3


@dataclass(eq=False, slots=True)
class Step:
    """One op to run: kernel, input slots, output slots."""

    op: Operation
    kernel: object
    in_slots: tuple
    out_slots: tuple
    needs_ctx: bool
    deps: tuple = ()  # indices of steps that must finish first (parallel runs)

    def as_tuple(self, frees: tuple = ()) -> tuple:
        """The executor's form; ``frees`` are slots to drop after it (last use)."""
        n_in = len(self.in_slots)
        mode = ARGSN if self.needs_ctx or n_in > 2 else n_in
        ins = self.in_slots[0] if mode == ARGS1 else self.in_slots
        single = len(self.out_slots) == 1
        outs = self.out_slots[0] if single else self.out_slots
        return (self.kernel, ins, outs, mode, single, self.needs_ctx, frees, self.op)


@dataclass(eq=False)
class Plan:
    """A compiled run: the template of slot values, the steps, where fetches are."""

    graph: object
    template: list
    steps: list
    fast_steps: tuple            # sequential form, dropping values after their last use
    feed_slots: tuple            # (slot, tensor) per feed key, in key order
    fetch_slots: tuple           # slot per flattened fetch, None for an Operation
    fold_steps: list             # steps run once, their outputs cached
    fold_cache: dict
    aliases: dict = field(default_factory=dict)   # de-duplicated op -> op that ran
    folded: set = field(default_factory=set)       # ops whose value came from the fold cache
    # re-entrant: a folded wrapped function may call Session.run on this plan again
    lock: threading.RLock = field(default_factory=threading.RLock)
    folds_done: bool = False
    concurrent: bool = False         # has independent ops that may block each other (TF#16)
    chain: bool = False              # no two steps independent: threads cannot help
    blocking: tuple = ()             # per step: it calls Python, so it may block
    overlap_schedule: tuple | None = None  # built on the first concurrent run (overlap.py)
    dependents: list | None = None   # per step, the steps waiting for it (overlap.py)
    costs: list | None = None        # per step, its time under an inter-op pool (overlap.py)
    first_costly: int | None = None  # first wrapped function measured expensive (None: stale)
    samples: list | None = None      # per step, its last time measured
    timings: list | None = None      # seconds of the last two inline, last two spread runs
    runs: int = 0                    # runs under an inter-op pool (every few are timed)
    next_timed: int = 0              # the next of them to time
    timed_gap: int = 0               # runs between timed ones (0: not chosen yet)
    retry_gap: int = 0               # runs between spread retries once inline runs won
    event_info: list | None = None   # per-step data for events, built on first observed run
    event_heads: tuple | None = None  # (op names, op types) every RunStart of the plan carries

    @functools.cached_property
    def parallel_steps(self) -> tuple:
        """The steps without drops (order of reads is not fixed), built on first use."""
        return tuple(f if not f[6] else s.as_tuple() for s, f in zip(self.steps, self.fast_steps))


def _needed_ops(fetch_ops, fed: set) -> list:
    seen, stack = {}, list(fetch_ops)
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen[id(op)] = op
        for t in op.inputs:
            if id(t) not in fed:
                stack.append(t.op)
        stack.extend(op.control_inputs)
    return sorted(seen.values(), key=lambda op: op._id)


def _missing_feed(op) -> InvalidArgumentError:
    dt = op.attrs["dtype"].name
    shape = op.attrs["shape"]
    return InvalidArgumentError(
        None, op, f"You must feed a value for placeholder tensor '{op.name}' with dtype {dt}"
        f"{'' if shape.dims is None else f' and shape {list(shape.dims)}'} "
        f"({op_context(op)}).")


def compile_plan(graph, fetches: list, feeds: list, fold_cache: dict) -> Plan:
    """Compile ``fetches`` (Tensors/Operations) given fed ``feeds`` (Tensors).

    The cyclic collector is paused meanwhile: compiling makes a few small
    records per op, none in a cycle, and each full collection it would trigger
    walks the whole graph — quadratic work on a big one.
    """
    restore_full_collections()  # the graph is built (see graph/big_build.py)
    was_on = gc.isenabled()
    gc.disable()
    try:
        return _compile(graph, fetches, feeds, fold_cache)
    finally:
        if was_on:
            gc.enable()


def _compile(graph, fetches: list, feeds: list, fold_cache: dict) -> Plan:
    fed = {id(t) for t in feeds}
    fetch_ops = [f.op if isinstance(f, SymbolicTensor) else f for f in fetches
                 if not (isinstance(f, SymbolicTensor) and id(f) in fed)]
    ops = _needed_ops(fetch_ops, fed)
    slot_of: dict[int, int] = {}
    template: list = []
    # slot -> index of the step writing it, or None: a list beside ``template``, not a
    # dict (at a million ops a dict's probes miss the caches: compile per op 1.8x its 1k)
    producer: list = []

    def new_slot(tensor, value=None):
        slot_of[id(tensor)] = len(template)
        template.append(value)
        producer.append(None)

    feed_slots = []
    for t in feeds:
        if id(t) not in slot_of:
            new_slot(t)
        feed_slots.append((slot_of[id(t)], t))

    canonical: dict = {}
    # equal tuples of slots and step indices are one object: a chain's step reads the
    # (slot,) the step before it writes and frees (plan memory per op, issue 28)
    shared: dict = {}

    def intern(t: tuple) -> tuple:
        return shared.setdefault(t, t)
    aliases, folded, constant_ops = {}, set(), set()
    steps, fold_steps = [], []
    step_of_op: dict[int, int] = {}
    for op in ops:
        if op.type == "Placeholder" and any(id(o) not in fed for o in op.outputs):
            raise _missing_feed(op)
        in_slots = intern(tuple(slot_of[id(t)] for t in op.inputs))
        op_def = op.op_def
        key = None
        if op_def.cse_key is not None and not op_def.stateful:
            k = op_def.cse_key(op)
            if k is not None:
                key = (op_def.name, in_slots, k,
                       tuple(sorted(id(c) for c in op.control_inputs)))
                if key in canonical:
                    first = canonical[key]
                    aliases[op] = first
                    for mine, theirs in zip(op.outputs, first.outputs):
                        slot_of[id(mine)] = slot_of[id(theirs)]
                    continue
                canonical[key] = op
        if op.type == "Const":
            constant_ops.add(op)
            new_slot(op.outputs[0], op.attrs["value"])
            continue
        if op in fold_cache:
            folded.add(op)
            constant_ops.add(op)
            for t, v in zip(op.outputs, fold_cache[op]):
                new_slot(t, v)
            continue
        for t in op.outputs:
            if id(t) not in slot_of:
                new_slot(t)
        kernel = op_def.bind(op) if op_def.bind is not None else op_def.kernel(op.attrs)
        if op_def.extra.get("hands_out_arrays"):
            kernel = _private_constants(kernel, op, constant_ops)
        step = Step(op, kernel, in_slots, intern(tuple(slot_of[id(t)] for t in op.outputs)),
                    op_def.needs_ctx)
        foldable = (key is not None and not op.control_inputs and
                    all(t.op in constant_ops for t in op.inputs))
        if foldable:
            constant_ops.add(op)
            fold_steps.append(step)
            continue
        deps = {producer[s] for s in in_slots if producer[s] is not None}
        for c in op.control_inputs:
            c = aliases.get(c, c)
            if id(c) in step_of_op:
                deps.add(step_of_op[id(c)])
        step.deps = intern(tuple(sorted(deps)))
        step_of_op[id(op)] = len(steps)
        for s in step.out_slots:
            producer[s] = len(steps)
        steps.append(step)
    fetch_slots = tuple(slot_of[id(f)] if isinstance(f, SymbolicTensor) else None for f in fetches)
    frees = [intern(f) for f in _last_uses(steps, set(fetch_slots))]
    blocking = tuple(_may_block(s.op) for s in steps)
    return Plan(graph, template, steps,
                tuple(s.as_tuple(f) for s, f in zip(steps, frees)), tuple(feed_slots), fetch_slots,
                fold_steps, fold_cache, aliases, folded,
                concurrent=_has_independent_blockers(steps, blocking),
                chain=is_chain(steps), blocking=blocking)


def _may_block(op) -> bool:
    return bool(op.op_def.extra.get("calls_python")) and not op.attrs.get("is_grad")


def _has_independent_blockers(steps, blocking) -> bool:
    """Whether two steps that call Python (and so may block) are unordered.

    They are all ordered iff each one depends on the previous one; in
    topological order that path stays between the two, so each check visits
    only the steps between them: O(steps) in all. A chain answers False, and
    its runs stay in the calling thread.
    """
    blockers = [i for i, b in enumerate(blocking) if b]
    return any(not _reaches(steps, a, b) for a, b in zip(blockers, blockers[1:]))


def _reaches(steps, src: int, dst: int) -> bool:
    """Whether step ``dst`` depends on step ``src`` (``src < dst``), directly or not."""
    stack, seen = [dst], {dst}
    while stack:
        for d in steps[stack.pop()].deps:
            if d == src:
                return True
            if d > src and d not in seen:
                seen.add(d)
                stack.append(d)
    return False


def _private_constants(kernel, op, constant_ops):
    """A wrapped function gets writeable copies of constant arrays (TF#49).

    Constants are shared across runs; a function writing into its input must not
    change what later runs see. Fed and computed arrays are handed over as is.
    """
    idx = [i for i, t in enumerate(op.inputs) if t.op in constant_ops]
    if not idx:
        return kernel

    def with_copies(*args):
        args = list(args)
        for i in idx:
            if isinstance(args[i], np.ndarray):
                args[i] = args[i].copy()
        return kernel(*args)
    return with_copies


def _last_uses(steps, keep: set) -> list:
    """Per step, the slots no later step reads: dropping them frees big arrays early."""
    last: dict[int, int] = {}
    for i, step in enumerate(steps):
        for s in step.in_slots:
            last[s] = i
    frees = [[] for _ in steps]
    for s, i in last.items():
        if s not in keep:
            frees[i].append(s)
    return [tuple(f) for f in frees]
