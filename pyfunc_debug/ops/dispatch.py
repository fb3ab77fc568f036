"""``apply``: the one place that decides between building a node and running eagerly."""
from __future__ import annotations

from ..graph.graph import building_graph
from ..graph.tensor import SymbolicTensor
from ..eager import execute as eager
from ..eager.tensor import EagerTensor
from ..eager import tape as tape_mod
from .convert import as_tensor_in, convert_to_tensor
from .registry import check_types

__all__ = ["apply", "apply1"]


def _graph_of(inputs):
    graph = None
    for x in inputs:
        if x.__class__ is SymbolicTensor:
            if graph is None:
                graph = x.op.graph
            elif x.op.graph is not graph:
                raise ValueError(f"Tensor '{x.name}' is from a different graph than the "
                                 "other inputs of this op.")
    return graph


def apply(op_def, inputs, attrs, name=None):
    """Run or build ``op_def`` on ``inputs`` (tensors); returns the output list.

    A symbolic input, or an active graph context, means build; otherwise the
    kernel runs at once on the values and the outputs are ``EagerTensor``s.
    """
    graph = _graph_of(inputs) or building_graph()
    if graph is None:
        inputs = [x if isinstance(x, EagerTensor) else convert_to_tensor(x) for x in inputs]
        check_types(op_def, inputs, True)
        return eager.execute(op_def, inputs, attrs, name)
    check_types(op_def, inputs, False)
    tensors = [as_tensor_in(x, graph) for x in inputs]
    op = graph.create_op(op_def, tensors, attrs, name=name)
    if tape_mod.recording():
        tape_mod.record(op, op.inputs, op.outputs)
    return op.outputs


def apply1(op_def, inputs, attrs, name=None):
    """``apply`` for single-output ops."""
    return apply(op_def, inputs, attrs, name)[0]
