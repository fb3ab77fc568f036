"""Plan: what one (fetches, feeds) signature runs, compiled once and reused.

Pruned to the ops the fetches need, in topological (= creation) order, with
identical stateless ops sharing one execution (CSE) and stateless ops on
constants folded: run on the first call and cached in ``fold_cache``
(a Session's or a function's) for later runs (TF#38, TF#41).
"""
from __future__ import annotations

import functools
import gc
import operator
import threading
from bisect import bisect_left

import numpy as np
from dataclasses import dataclass, field

from ..errors import InvalidArgumentError, op_context
from ..graph.big_build import restore_full_collections
from ..graph.operation import Operation
from ..graph.tensor import SymbolicTensor

__all__ = ["Plan", "Step", "compile_plan"]

_OP_ID = operator.attrgetter("op._id")

# Step modes: how the executor calls the kernel (fixed arity avoids building a list).
ARGS0, ARGS1, ARGS2, ARGSN = 0, 1, 2, 3
# A step tuple's ``single`` (truthy: one output) is READ_NEXT when only the next step
# reads that output, as its one input: an observed run hands its summary on directly
# and keeps none by slot (it dies young; runtime/observed.py).
READ_NEXT = 2
_FED = -(1 << 62)   # an op's first slot when its outputs are slotted one by one (compile)


@dataclass(eq=False, slots=True)
class Step:
    """One op to run: kernel, input slots, output slots."""

    op: Operation
    kernel: object
    in_slots: tuple
    out_slots: tuple
    needs_ctx: bool
    deps: tuple = ()  # indices of steps that must finish first (parallel runs)

    def as_tuple(self, frees: tuple = (), read_next: bool = False) -> tuple:
        """The executor's form; ``frees`` are slots to drop after it (last use);
        ``read_next``: only the next step reads its one output (see ``READ_NEXT``)."""
        n_in = len(self.in_slots)
        mode = ARGSN if self.needs_ctx or n_in > 2 else n_in
        ins = self.in_slots[0] if mode == ARGS1 else self.in_slots
        single = len(self.out_slots) == 1 and (READ_NEXT if read_next else True)
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


def _needed_ops(graph, fetch_ops, fed: set) -> list:
    """The ops the fetches need, in creation order.

    Marks by ``op._id`` (an op's index in its graph) in a bytearray, and sorts those
    ints: at a million ops, a dict of seen ops and a sort keyed on them miss the caches.
    Every op reached is this graph's: fetches are checked by the session, inputs when an
    op is made, control inputs when their block opens.
    """
    every = graph._ops
    seen, ids, stack = bytearray(len(every)), [], list(fetch_ops)
    while stack:
        op = stack.pop()
        i = op._id
        if seen[i]:
            continue
        seen[i] = 1
        ids.append(i)
        for t in op.inputs:
            if t not in fed:
                stack.append(t.op)
        stack.extend(op.control_inputs)
    ids.sort()
    return [every[i] for i in ids]


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
    # Keyed by tensor and op objects (identity hashes), and by position in lists where
    # the keys are dense ints: at a million ops, dicts of id() ints miss the caches on
    # every probe (compile per op was 1.8x its 1k value, issue 28).
    fed = set(feeds)
    fetch_ops = [f.op if isinstance(f, SymbolicTensor) else f for f in fetches
                 if not (isinstance(f, SymbolicTensor) and f in fed)]
    ops = _needed_ops(graph, fetch_ops, fed)
    # A tensor's slot is its op's first slot plus its output index: a list by op._id,
    # not a dict of a million tensors (compile per op at 1M ops, issue 28). Outputs
    # of an op with a fed output are the exception, kept in ``odd`` by tensor.
    base = [-1] * len(graph._ops)
    odd: dict = {}       # tensor -> slot, for every output of an op with a fed output
    template: list = []
    producer: list = []  # slot -> index of the step writing it, or None
    last: list = []      # slot -> index of the last step reading it, or -1
    # equal tuples of slots and step indices are one object: a chain's step reads the
    # (slot,) the step before it writes and frees (plan memory per op, issue 28).
    # 1-tuples by position, the rest by value.
    ones: list = []
    shared: dict = {}

    def one(k: int) -> tuple:
        while len(ones) <= k:
            ones.append((len(ones),))
        return ones[k]

    def intern(t: tuple) -> tuple:
        return t if not t else one(t[0]) if len(t) == 1 else shared.setdefault(t, t)

    def new_slots(n: int, value=None) -> int:
        s = len(template)
        template.extend([value] * n)
        producer.extend([None] * n)
        last.extend([-1] * n)
        return s

    def slot_of(t) -> int:
        b = base[t.op._id]
        return b + t.value_index if b >= 0 else odd[t]

    feed_slots = []
    for t in feeds:
        if base[t.op._id] == -1:
            if len(t.op.outputs) == 1:
                base[t.op._id] = new_slots(1)
            else:   # all its outputs by tensor, each in a slot of its own
                base[t.op._id] = _FED
                for o in t.op.outputs:
                    odd[o] = new_slots(1)
        feed_slots.append((slot_of(t), t))

    canonical: dict = {}
    aliases, folded, constant_ops = {}, set(), set()
    steps, fold_steps, blocking = [], [], []
    chain, concurrent, last_blocker = True, False, None
    for op in ops:
        if op.type == "Placeholder" and any(o not in fed for o in op.outputs):
            raise _missing_feed(op)
        in_slots = intern(tuple([slot_of(t) for t in op.inputs] if odd else
                                [base[t.op._id] + t.value_index for t in op.inputs]))
        op_def = op.op_def
        key = None
        fed_op = base[op._id] != -1   # it runs (a fetch) but readers get its fed value
        if fed_op:
            out_slots = tuple([new_slots(1) if t in fed else slot_of(t) for t in op.outputs])
        else:
            if op_def.cse_key is not None and not op_def.stateful:
                k = op_def.cse_key(op)
                if k is not None:
                    key = (op_def.name, in_slots, k,
                           tuple(sorted(id(c) for c in op.control_inputs)))
                    if key in canonical:
                        first = canonical[key]
                        aliases[op] = first
                        base[op._id] = base[first._id]
                        continue
                    canonical[key] = op
            if op.type == "Const":
                constant_ops.add(op)
                base[op._id] = new_slots(1, op.attrs["value"])
                continue
            if op in fold_cache:
                folded.add(op)
                constant_ops.add(op)
                base[op._id] = b = len(template)
                for v in fold_cache[op]:
                    new_slots(1, v)
                continue
            n = len(op.outputs)
            base[op._id] = b = new_slots(n)
            out_slots = one(b) if n == 1 else tuple(range(b, b + n))
        kernel = op_def.bind(op) if op_def.bind is not None else op_def.kernel(op.attrs)
        if op_def.extra.get("hands_out_arrays"):
            kernel = _private_constants(kernel, op, constant_ops)
        step = Step(op, kernel, in_slots, intern(out_slots), op_def.needs_ctx)
        if key is not None and not op.control_inputs and \
                all(t.op in constant_ops for t in op.inputs):
            constant_ops.add(op)
            fold_steps.append(step)
            continue
        i = len(steps)
        if len(in_slots) == 1 and not op.control_inputs:
            p = producer[in_slots[0]]
            step.deps = () if p is None else one(p)
        else:
            deps = {producer[s] for s in in_slots if producer[s] is not None}
            for c in op.control_inputs:
                c = aliases.get(c, c)
                # steps are in op order: a control input's step is found by bisection
                j = bisect_left(steps, c._id, key=_OP_ID)
                if j < i and steps[j].op is c:
                    deps.add(j)
            step.deps = intern(tuple(sorted(deps)))
        for s in in_slots:
            last[s] = i
        for s in step.out_slots:
            producer[s] = i
        steps.append(step)
        if chain and i and (i - 1) not in step.deps:
            chain = False   # in topological order, a chain's step i depends directly on i - 1
        may_block = bool(op_def.extra.get("calls_python")) and not op.attrs.get("is_grad")
        blocking.append(may_block)
        if may_block:
            # concurrent: two steps that call Python (and so may block) are unordered
            # (TF#16). Each check walks only the steps between two blockers: O(steps) in all.
            if last_blocker is not None and not concurrent:
                concurrent = not _reaches(steps, last_blocker, i)
            last_blocker = i
    fetch_slots = tuple(slot_of(f) if isinstance(f, SymbolicTensor) else None for f in fetches)
    frees = [()] * len(steps)   # per step, the slots no later step reads: dropped after it
    keep = set(fetch_slots)
    for s, i in enumerate(last):
        if i >= 0 and s not in keep:
            f = frees[i]
            frees[i] = one(s) if not f else f + (s,)
    n = len(steps)
    read_next = [i + 1 < n and len(s.out_slots) == 1 and last[s.out_slots[0]] == i + 1
                 and steps[i + 1].in_slots == s.out_slots for i, s in enumerate(steps)]
    return Plan(graph, template, steps,
                tuple([s.as_tuple(f if len(f) < 2 else intern(f), r)
                       for s, f, r in zip(steps, frees, read_next)]),
                tuple(feed_slots),
                fetch_slots, fold_steps, fold_cache, aliases, folded,
                concurrent=concurrent, chain=chain, blocking=tuple(blocking))


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
