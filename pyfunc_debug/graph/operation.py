"""Operation: one node of a graph, with its unique name and creation site."""
from __future__ import annotations

from .defaults import require_session

__all__ = ["Operation"]


class Operation:
    """A node: ``type`` names its ``OpDef``; ``source`` is where user code made it."""

    __slots__ = ("name", "type", "op_def", "inputs", "control_inputs", "outputs",
                 "attrs", "graph", "device", "source", "_id", "_grad_consumers",
                 "__weakref__")

    def __init__(self, graph, op_def, name, inputs, attrs, control_inputs,
                 device, source, op_id):
        self.graph = graph
        self.op_def = op_def
        self.type = op_def.name
        self.name = name
        self.inputs = tuple(inputs)
        self.attrs = attrs
        self.control_inputs = tuple(control_inputs)
        self.device = device
        self.source = source
        self._id = op_id
        self._grad_consumers = ()
        self.outputs = []

    @property
    def stateful(self) -> bool:
        return self.op_def.stateful

    @property
    def node_def(self) -> dict:
        return {"name": self.name, "op": self.type, "device": self.device}

    def get_attr(self, name: str):
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self.name}' has no attr named '{name}'.") from None

    def values(self) -> tuple:
        return tuple(self.outputs)

    def run(self, feed_dict=None, session=None):
        """Run this op in ``session`` (default: the default session)."""
        require_session(session, f"Operation '{self.name}'").run(self, feed_dict)

    def __repr__(self) -> str:
        return f"<pfd.Operation '{self.name}' type={self.type}>"
