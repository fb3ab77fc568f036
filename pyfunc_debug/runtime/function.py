"""``pfd.function``: trace a Python function once per signature into a graph, then run it.

As in TF: wrapped functions never run while tracing (TF#5); unused stateful
ops still run on every call, unused stateless ones are pruned (TF#42).
Called while another graph is being built, the body is traced inline there.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..dtypes import as_dtype
from ..graph.graph import Graph, building_graph
from ..graph.operation import Operation
from ..graph.tensor import SymbolicTensor, TensorBase, TensorSpec
from ..eager.tensor import EagerTensor
from ..nest import flatten, map_structure
from ..ops.array_ops import placeholder
from ..ops.convert import convert_to_tensor
from .executor import RunContext, execute
from .plan import compile_plan

__all__ = ["function", "Function", "ConcreteFunction"]


class ConcreteFunction:
    """One trace: ``.graph``, ``.inputs`` (placeholders), ``.outputs``; callable."""

    def __init__(self, name, graph, inputs, structured_outputs):
        self.name = name
        self.graph = graph
        self.inputs = inputs
        self.structured_outputs = structured_outputs
        self.outputs = [t for t in flatten(structured_outputs) if isinstance(t, SymbolicTensor)]
        stateful = [op for op in graph.get_operations() if op.stateful]
        self._fetches = self.outputs + stateful
        self._fold_cache: dict = {}
        self._resources: dict = {}
        self._plan = compile_plan(graph, self._fetches, inputs, self._fold_cache)

    def __call__(self, *args):
        values = [_bind(spec_t, a, self.name) for spec_t, a in zip(self.inputs, args)]
        ctx = RunContext("function", self.name, self._resources)
        results = execute(self._plan, values, ctx)
        it = iter(results[:len(self.outputs)])
        by_id = {}
        for t in self.outputs:
            by_id.setdefault(id(t), EagerTensor(next(it), t.dtype))
        return map_structure(lambda t: by_id[id(t)] if isinstance(t, SymbolicTensor) else t,
                             self.structured_outputs)

    def __repr__(self) -> str:
        return f"<ConcreteFunction {self.name} inputs={self.inputs} outputs={self.outputs}>"


def _bind(placeholder_t, value, fname):
    """An argument as the placeholder's numpy value (no copy: TF#49)."""
    spec = TensorSpec(placeholder_t.shape, placeholder_t.dtype)
    if isinstance(value, EagerTensor):
        if value.dtype is not spec.dtype or not spec.shape.is_compatible_with(value.shape):
            raise TypeError(f"Binding inputs to pfd.function '{fname}' failed: Can not cast "
                            f"{TensorSpec(value.shape, value.dtype)} to {spec}")
        return value._value
    try:
        t = convert_to_tensor(value, spec.dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Binding inputs to pfd.function '{fname}' failed: {e}") from None
    if not spec.shape.is_compatible_with(t.shape):
        raise TypeError(f"Binding inputs to pfd.function '{fname}' failed: shape {t.shape} "
                        f"is not compatible with {spec}")
    return t._value


def _spec_of(value) -> TensorSpec | None:
    if isinstance(value, TensorBase):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, (np.ndarray, np.generic)):
        return TensorSpec(np.shape(value), as_dtype(value.dtype))
    return None


class Function:
    """A traced-on-demand Python function (what ``@pfd.function`` returns)."""

    def __init__(self, python_function, input_signature=None, name=None):
        self.python_function = python_function
        self.input_signature = None if input_signature is None else list(input_signature)
        self.name = name or getattr(python_function, "__name__", "function")
        self._concrete: dict = {}
        functools.update_wrapper(self, python_function)

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def _signature(self, args) -> tuple:
        if self.input_signature is not None:
            if len(args) != len(self.input_signature):
                raise TypeError(f"pfd.function '{self.name}' takes {len(self.input_signature)} "
                                f"positional arguments per its input_signature, got {len(args)}")
            return tuple(self.input_signature)
        return tuple(_spec_of(a) or ("static", _static_key(a)) for a in args)

    def get_concrete_function(self, *args) -> ConcreteFunction:
        """The trace for ``args`` (or for ``input_signature`` when none are given)."""
        if not args and self.input_signature is not None:
            sig = tuple(self.input_signature)
            args = (None,) * len(sig)
        else:
            sig = self._signature(args)
        found = self._concrete.get(sig)
        if found is None:
            found = self._trace(sig, args)
            self._concrete[sig] = found
        return found

    def _trace(self, sig, args) -> ConcreteFunction:
        graph = Graph()
        params = _param_names(self.python_function, len(sig))
        with graph.as_default():
            call_args, inputs = [], []
            for spec, a, pname in zip(sig, args, params):
                if isinstance(spec, TensorSpec):
                    p = placeholder(spec.dtype, spec.shape, name=spec.name or pname)
                    inputs.append(p)
                    call_args.append(p)
                else:
                    call_args.append(a)
            out = self.python_function(*call_args)
        for leaf in flatten(out):
            if isinstance(leaf, Operation):
                raise TypeError("To be compatible with pfd.function, Python functions must return "
                                "zero or more Tensors or None values; found return value of type "
                                f"Operation ({leaf.name}). Fetch its effect through a Tensor.")
        return ConcreteFunction(self.name, graph, inputs, out)

    def __call__(self, *args, **kwargs):
        if kwargs:
            params = _param_names(self.python_function, len(args) + len(kwargs))
            args = args + tuple(kwargs[p] for p in params[len(args):])
        if building_graph() is not None:
            return self.python_function(*args)  # inline into the graph being built
        concrete = self.get_concrete_function(*args)
        tensor_args = [a for a, s in zip(args, self._signature(args)) if isinstance(s, TensorSpec)]
        return concrete(*tensor_args)


def _static_key(value):
    try:
        hash(value)
        return value
    except TypeError:
        return id(value)


def _param_names(fn, n) -> list:
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        names = []
    return (names + [f"arg{i}" for i in range(len(names), n)])[:n]


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_compile=None, name=None):
    """Decorator: trace ``func`` into a graph per input signature (SPEC §2)."""
    if jit_compile or experimental_compile:
        raise NotImplementedError("jit_compile is not supported: wrapped Python functions "
                                  "cannot be compiled (TF#48).")
    if func is None:
        return lambda f: Function(f, input_signature, name)
    return Function(func, input_signature, name)
