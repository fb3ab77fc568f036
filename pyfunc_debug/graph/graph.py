"""Graph: holds operations, hands out unique names, and tracks the build context.

The context is a per-thread stack: a ``Graph`` entry means "ops are built into
this graph"; an ``EAGER`` entry (pushed while a ``py_function`` body runs)
means "run ops at once" even when a graph is being built around it.
"""
from __future__ import annotations

import contextlib
import threading

from .big_build import BIG, defer_full_collections, restore_full_collections
from .operation import Operation
from .source import user_frame
from .tensor import SymbolicTensor, Tensor

__all__ = ["Graph", "get_default_graph", "reset_default_graph", "building_graph",
           "eager_mode", "name_scope", "control_dependencies", "device",
           "disable_eager_execution", "enable_eager_execution", "executing_eagerly",
           "building", "pin_eager", "EAGER"]

EAGER = object()
_state = threading.local()
_global = {"graph": None, "eager_disabled": False}
# Filled by ``serialize`` when it is imported: graph/ never imports upward.
graph_def_writer = None


def _stack() -> list:
    try:
        return _state.stack
    except AttributeError:
        _state.stack = []
        _state.scopes = []
        return _state.stack


class Graph:
    """A dataflow graph of ``Operation``s producing symbolic ``Tensor``s."""

    def __init__(self):
        self._ops: list[Operation] = []
        self._by_name: dict[str, Operation] = {}
        self._used: set[str] = set()
        self._next_suffix: dict[str, int] = {}
        self._control_stack: list[list[Operation]] = []
        self._device_stack: list[str] = []
        self._lock = threading.Lock()
        self._keepalive: list = []  # wrapped functions used by ops (TF#51)
        self._collections: dict[str, list] = {}

    # -- context ---------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        """Build ops into this graph inside the block."""
        stack = _stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()
            restore_full_collections()

    def control_dependencies(self, control_inputs):
        return _control_dependencies(self, control_inputs)

    def device(self, name: str):
        return _device(self, name)

    def name_scope(self, name: str):
        return name_scope(name)

    # -- names -----------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        candidate = name
        if candidate in self._used:
            i = self._next_suffix.get(name, 1)
            while f"{name}_{i}" in self._used:
                i += 1
            candidate = f"{name}_{i}"
            if mark_as_used:
                self._next_suffix[name] = i + 1
        if mark_as_used:
            self._used.add(candidate)
        return candidate

    # -- building --------------------------------------------------------
    def create_op(self, op_def, inputs, attrs, name=None, out_specs=None,
                  source=None) -> Operation:
        """Add a node; ``out_specs`` is a list of (dtype, shape) per output."""
        for t in inputs:
            if t.op.graph is not self:
                raise ValueError(
                    f"Tensor '{t.name}' must be from the same graph as the other "
                    f"inputs of the new {op_def.name} op.")
        scopes = _state.scopes if hasattr(_state, "scopes") else ()
        base = name or op_def.name
        full = "".join(scopes) + base if scopes else base
        if source is None:
            source = user_frame(2)
        controls = [op for frame in self._control_stack for op in frame]
        with self._lock:
            unique = self.unique_name(full)
            op = Operation(self, op_def, unique, inputs, attrs, controls,
                           self._device_stack[-1] if self._device_stack else "",
                           source, len(self._ops))
            if out_specs is None:
                out_specs = op_def.infer(attrs, inputs)
            op.outputs = [SymbolicTensor(op, i, dtype, shape)
                          for i, (dtype, shape) in enumerate(out_specs)]
            self._ops.append(op)
            self._by_name[unique] = op
        if len(self._ops) >= BIG:
            defer_full_collections()
        return op

    # -- lookup ----------------------------------------------------------
    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> SymbolicTensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings, not {type(name).__name__}.")
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"The name '{name}' looks like an Operation name, not a "
                             "Tensor name. Tensor names must be of the form "
                             "\"<op_name>:<output_index>\".")
        op = self._by_name.get(op_name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                           f"The operation, '{op_name}', does not exist in the graph.")
        if int(index) >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                           f"The operation, '{op_name}', exists but only has "
                           f"{len(op.outputs)} outputs.")
        return op.outputs[int(index)]

    def as_graph_element(self, obj):
        """Resolve a fetch: a Tensor/Operation of this graph or a name."""
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else self.get_operation_by_name(obj)
        as_tensor = getattr(obj, "_pfd_tensor", None)  # a Variable reads itself
        if as_tensor is not None and getattr(obj, "graph", None) is self:
            obj = as_tensor()
        if isinstance(obj, (SymbolicTensor, Operation)):
            if obj.graph is not self:
                raise ValueError(f"{obj!r} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    def as_graph_def(self) -> dict:
        """The graph as a JSON-able dict (``pfd.import_graph_def`` reads it back)."""
        return graph_def_writer(self)

    # -- collections (TF 1.x: "variables", "trainable_variables", ...) ------
    def add_to_collection(self, name: str, value) -> None:
        """Remember ``value`` under ``name`` (variables register themselves here)."""
        self._collections.setdefault(name, []).append(value)

    def get_collection(self, name: str) -> list:
        """The values added under ``name``, in order (a copy)."""
        return list(self._collections.get(name, ()))

    def _keep_alive(self, obj) -> None:
        self._keepalive.append(obj)

    def __repr__(self) -> str:
        return f"<pfd.Graph with {len(self._ops)} ops at {id(self):#x}>"


# -- module-level context -------------------------------------------------
def get_default_graph() -> Graph:
    for entry in reversed(_stack()):
        if entry is not EAGER:
            return entry
    if _global["graph"] is None:
        _global["graph"] = Graph()
    return _global["graph"]


def reset_default_graph() -> None:
    if any(e is not EAGER for e in _stack()):
        raise AssertionError("Do not use reset_default_graph() inside a graph context.")
    _global["graph"] = Graph()


def building_graph():
    """The graph new ops go into, or ``None`` when ops run eagerly."""
    stack = _stack()
    if stack:
        top = stack[-1]
        return None if top is EAGER else top
    return get_default_graph() if _global["eager_disabled"] else None


def executing_eagerly() -> bool:
    """True when ops run at once; False while a graph is being built (TF's meaning)."""
    return building_graph() is None


@contextlib.contextmanager
def building(graph):
    """Build into ``graph`` in the block; a no-op when it is already the top context."""
    stack = _stack()
    if stack and stack[-1] is graph:
        yield graph
        return
    stack.append(graph)
    try:
        yield graph
    finally:
        stack.pop()


@contextlib.contextmanager
def eager_mode():
    """Run ops at once inside the block (the body of a ``py_function``)."""
    stack = _stack()
    stack.append(EAGER)
    try:
        yield
    finally:
        stack.pop()


def pin_eager() -> None:
    """Make the calling (runtime-owned helper) thread run ops eagerly for good."""
    _stack().append(EAGER)


def disable_eager_execution() -> None:
    """Make graph building the default everywhere (TF 1.x behaviour)."""
    _global["eager_disabled"] = True


def enable_eager_execution() -> None:
    """Undo ``disable_eager_execution``: ops outside a graph context run at once."""
    _global["eager_disabled"] = False


@contextlib.contextmanager
def name_scope(name: str):
    """Prefix the names of ops made in the block with ``name/``."""
    _stack()
    scopes = _state.scopes
    if name is None or name == "":
        yield ""
        return
    if name.endswith("/"):
        full = name  # an absolute scope, re-entered as TF allows
    else:
        prefix = "".join(scopes) + name
        graph = building_graph()
        full = (graph.unique_name(prefix) if graph is not None else prefix) + "/"
        full = full[len("".join(scopes)):]
    scopes.append(full)
    try:
        yield "".join(scopes)
    finally:
        scopes.pop()


def _ops_of(control_inputs) -> list:
    out = []
    for c in control_inputs:
        if isinstance(c, Operation):
            out.append(c)
        elif isinstance(c, SymbolicTensor):
            out.append(c.op)
        elif isinstance(c, Tensor) or c is None:  # an eager value: nothing to wait for
            continue
        else:
            raise TypeError(f"Control input must be an Operation or a Tensor, not {c!r}.")
    return out


@contextlib.contextmanager
def _control_dependencies(graph, control_inputs):
    if control_inputs is None:
        saved, graph._control_stack = graph._control_stack, []
        try:
            yield
        finally:
            graph._control_stack = saved
        return
    ops = _ops_of(control_inputs)
    for op in ops:   # (an op of another graph would be run by this one's sessions)
        if op.graph is not graph:
            raise ValueError(f"Operation '{op.name}' is not an element of this graph: "
                             "control inputs must come from the graph the ops are built in.")
    graph._control_stack.append(ops)
    try:
        yield
    finally:
        graph._control_stack.pop()


def control_dependencies(control_inputs):
    """Ops built in the block run after ``control_inputs`` (TF#43); eager: no-op."""
    ops = _ops_of(control_inputs or [])
    graph = ops[0].graph if ops else building_graph()
    if graph is None:
        return contextlib.nullcontext()
    return _control_dependencies(graph, control_inputs)


@contextlib.contextmanager
def _device(graph, name):
    graph._device_stack.append(name or "")
    try:
        yield
    finally:
        graph._device_stack.pop()


def device(name: str):
    """Record ``name`` as ``op.device`` on ops built in the block; nothing else."""
    graph = building_graph() or get_default_graph()
    return _device(graph, name)
