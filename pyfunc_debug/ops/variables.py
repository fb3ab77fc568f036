"""``pfd.Variable``: a mutable tensor (SPEC §2a).

Eagerly it holds its value: ``assign``/``assign_add``/``assign_sub`` replace
it, reads are watched by ``GradientTape`` (trainable variables automatically).
Built into a graph it is a stateful ``VariableV2`` op whose value lives in the
running session (``ctx.resources``), set by its ``.initializer``; reading it
before that raises ``FailedPreconditionError``. An eager variable used while a
graph is built (a ``pfd.function`` body) is read and written when the graph runs.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..dtypes import as_dtype, scalar_or_array
from ..eager import tape as tape_mod
from ..eager.tensor import EagerTensor
from ..errors import FailedPreconditionError
from ..graph.graph import building_graph
from ..graph.shape import TensorShape
from ..graph.tensor import SymbolicTensor
from ..source_text import relative_source
from .array_ops import group
from .convert import as_tensor_in, convert_to_tensor
from .registry import OpDef, dtype_attr, register

__all__ = ["Variable", "global_variables_initializer", "variables_initializer"]

_eager_names = itertools.count()


# -- graph ops -------------------------------------------------------------

def _uninitialized(op):
    return FailedPreconditionError(None, op, f"Attempting to use uninitialized value {op.name} "
                                   f"(variable created at {relative_source(str(op.source))}): run its initializer "
                                   "or pfd.compat.v1.global_variables_initializer() first.")


def _bind_read(op):
    def kernel(ctx):
        try:
            return ctx.resources[op]
        except KeyError:
            raise _uninitialized(op) from None
    return kernel


def _bind_update(update):
    def bind(op):
        var = op.attrs["var"]

        def kernel(ctx, value):
            old = ctx.resources.get(var) if update is not None else None
            if update is not None and old is None:
                raise _uninitialized(var)
            new = scalar_or_array(np.array(value if update is None else update(old, value),
                                           dtype=var.attrs["dtype"].np_dtype))
            ctx.resources[var] = new
            return new
        return kernel
    return bind


def _bind_eager_read(op):
    var = op.attrs["var"]
    return lambda ctx: var._value


def _bind_eager_update(update):
    def bind(op):
        var = op.attrs["var"]

        def kernel(ctx, value):
            var._set(value if update is None else update(var._value, value))
            return var._value
        return kernel
    return bind


def _var_infer(attrs, inputs):
    return [(attrs["dtype"], attrs["shape"])]


def _update_infer(attrs, inputs):
    return [(inputs[0].dtype, inputs[0].shape)]


def _identity_grad(op, inputs, outputs, grads):
    return [grads[0]] + [None] * (len(inputs) - 1)


def _no_kernel(attrs):
    raise FailedPreconditionError(None, None, "variable ops bind their kernel to the op")


def _stateful(name, bind, infer, grad=None, attr_types=None):
    return register(OpDef(name, kernel=_no_kernel, bind=bind, infer=infer, grad=grad,
                          stateful=True, needs_ctx=True, attr_types=attr_types or {}))


def _is_variable_op(value) -> bool:
    return getattr(getattr(value, "op_def", None), "name", None) == "VariableV2"


_VAR_ATTRS = {"var": _is_variable_op}
VARIABLE = _stateful("VariableV2", _bind_read, _var_infer,
                     attr_types={"dtype": dtype_attr, "shape": TensorShape})
ASSIGN = _stateful("Assign", _bind_update(None), _update_infer, attr_types=_VAR_ATTRS)
ASSIGN_ADD = _stateful("AssignAdd", _bind_update(np.add), _update_infer, attr_types=_VAR_ATTRS)
ASSIGN_SUB = _stateful("AssignSub", _bind_update(np.subtract), _update_infer,
                       attr_types=_VAR_ATTRS)
_EAGER_VAR_ATTRS = {"var": lambda v: getattr(type(v), "_pfd_variable", False)}
READ_EAGER = _stateful("ReadVariableOp", _bind_eager_read,
                       lambda a, i: [(a["var"].dtype, a["var"].shape)],
                       attr_types=_EAGER_VAR_ATTRS)
ASSIGN_EAGER = _stateful("AssignVariableOp", _bind_eager_update(None), _update_infer,
                         attr_types=_EAGER_VAR_ATTRS)
ASSIGN_ADD_EAGER = _stateful("AssignAddVariableOp", _bind_eager_update(np.add), _update_infer,
                             attr_types=_EAGER_VAR_ATTRS)
ASSIGN_SUB_EAGER = _stateful("AssignSubVariableOp", _bind_eager_update(np.subtract),
                             _update_infer, attr_types=_EAGER_VAR_ATTRS)
# what an eager read records on a tape: the gradient passes straight to the variable
READ = register(OpDef("ReadVariable", kernel=lambda a: (lambda v: v),
                      infer=lambda a, i: [(i[0].dtype, i[0].shape)], grad=_identity_grad))


class _ReadRecord:
    __slots__ = ("op_def", "attrs", "name", "type")

    def __init__(self, name):
        self.op_def, self.attrs, self.name, self.type = READ, {}, name, READ.name


# -- the Variable -----------------------------------------------------------

# what TF raises for graph-only attributes of an eager variable
_EAGER_ONLY_ERRORS = {
    "initial_value": (RuntimeError, "This property is not supported when eager execution is "
                      "enabled."),
    "op": (AttributeError, "Tensor.op is undefined when eager execution is enabled."),
}


class Variable:
    """A mutable tensor: ``Variable(initial_value, dtype=None, name=None, trainable=True)``."""

    _pfd_variable = True
    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable=True, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None,
                 import_scope=None, constraint=None, synchronization=None,
                 aggregation=None, shape=None):
        # TF's signature; placement, distribution and constraint arguments are accepted
        # and have no effect here
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if callable(initial_value):
            initial_value = initial_value()
        self.trainable = bool(trainable)
        dt = None if dtype is None else as_dtype(dtype)
        graph = building_graph()
        if graph is None and isinstance(initial_value, SymbolicTensor):
            graph = initial_value.graph
        self._graph = graph
        if graph is None:
            t = convert_to_tensor(initial_value, dt)
            if isinstance(t, SymbolicTensor):
                raise TypeError("an eager Variable needs an eager initial value")
            self.dtype = t.dtype
            self._value = t._value
            self._name = f"{name or 'Variable'}:{next(_eager_names)}" if name is None \
                else f"{name}:0"
            self.initializer = None  # as TF: initialised already (``evaluate(None)`` is None)
            return
        with graph.as_default():
            init = as_tensor_in(initial_value, graph, dt)
            if dt is not None and init.dtype is not dt:
                raise TypeError(f"initial value of dtype {init.dtype.name} for a {dt.name} "
                                "Variable")
            self.dtype = init.dtype
            self.op = graph.create_op(VARIABLE, (), {"dtype": init.dtype, "shape": init.shape},
                                      name=name or "Variable",
                                      out_specs=[(init.dtype, init.shape)])
            self._read = self.op.outputs[0]
            self.initial_value = init
            self.initializer = graph.create_op(ASSIGN, [init], {"var": self.op},
                                               name=f"{self.op.name}/Assign")
        graph.add_to_collection("variables", self)
        if self.trainable:
            graph.add_to_collection("trainable_variables", self)

    def __getattr__(self, name):
        # reached only for attributes this variable lacks: an eager one's graph-only ones
        message = _EAGER_ONLY_ERRORS.get(name) if self.__dict__.get("_graph", 0) is None \
            else None
        if message is None:
            raise AttributeError(f"'Variable' object has no attribute '{name}'")
        raise message[0](message[1])

    # -- what both kinds share -------------------------------------------------
    @property
    def name(self) -> str:
        return self._read.name if self._graph is not None else self._name

    @property
    def shape(self) -> TensorShape:
        if self._graph is not None:
            return self._read.shape
        return TensorShape(np.shape(self._value))

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def graph(self):
        return self._graph

    def _pfd_tensor(self, graph=None):
        """The tensor that reads this variable (in ``graph`` when one is being built)."""
        if self._graph is not None:
            return self._read
        graph = graph or building_graph()
        if graph is not None:
            return graph.create_op(READ_EAGER, (), {"var": self},
                                   name="ReadVariableOp").outputs[0]
        return self._read_eager()

    def _read_eager(self):
        t = EagerTensor(self._value, self.dtype)
        if tape_mod.recording():
            tape_mod.variable_accessed(self)
            tape_mod.record(_ReadRecord(self.name), (self,), (t,))
        return t

    def value(self):
        return self._pfd_tensor()

    def read_value(self):
        """The current value, as a tensor."""
        return self._pfd_tensor()

    def numpy(self):
        if self._graph is not None:
            raise NotImplementedError("numpy() is only available for eager variables; use "
                                      "sess.run(v) or v.eval() in a graph.")
        v = self._value
        return v.copy() if isinstance(v, np.ndarray) else v

    def eval(self, session=None):
        return self._read.eval(session=session)

    def __array__(self, dtype=None, copy=None):
        arr = np.asarray(self.numpy())
        return arr if dtype is None else arr.astype(dtype, copy=False)

    # -- updates ---------------------------------------------------------------
    def _set(self, value) -> None:
        new = np.array(value, dtype=self.dtype.np_dtype)
        if self.dtype.is_string:
            new = np.array(value, dtype=object)
        if np.shape(new) != np.shape(self._value):
            raise ValueError(f"Cannot assign a value of shape {np.shape(new)} to variable "
                             f"'{self.name}' of shape {np.shape(self._value)}.")
        self._value = scalar_or_array(new)

    def _update(self, value, graph_def, eager_def, update):
        if self._graph is not None:
            value = as_tensor_in(value, self._graph, self.dtype)
            return self._graph.create_op(graph_def, [value], {"var": self.op},
                                         name=graph_def.name).outputs[0]
        graph = building_graph()
        if graph is not None:
            value = as_tensor_in(value, graph, self.dtype)
            return graph.create_op(eager_def, [value], {"var": self},
                                   name=eager_def.name).outputs[0]
        delta = convert_to_tensor(value, self.dtype)._value
        self._set(delta if update is None else update(self._value, delta))
        return self

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Set the value (eagerly now; in a graph, an op that does it when run)."""
        return self._update(value, ASSIGN, ASSIGN_EAGER, None)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._update(delta, ASSIGN_ADD, ASSIGN_ADD_EAGER, np.add)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._update(delta, ASSIGN_SUB, ASSIGN_SUB_EAGER, np.subtract)

    def __repr__(self) -> str:
        if self._graph is not None:
            return (f"<pfd.Variable '{self.name}' shape={self.shape} "
                    f"dtype={self.dtype.name}>")
        value = np.array2string(np.asarray(self._value), separator=", ")
        return (f"<pfd.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={value}>")

    __hash__ = object.__hash__


def _forwarded(name):
    return lambda self, *args: getattr(self._pfd_tensor(), name)(*args)


# a variable reads itself wherever a tensor is expected (operators included)
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__matmul__",
              "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__",
              "__getitem__", "__float__", "__int__", "__bool__"):
    setattr(Variable, _name, _forwarded(_name))


def variables_initializer(var_list, name="init"):
    """One op running the initializers of ``var_list`` (graph variables)."""
    inits = [v.initializer for v in var_list if getattr(v, "_graph", None) is not None]
    return group(*inits, name=name)


def global_variables_initializer():
    """The initializer of every variable in the default graph (a no-op eagerly)."""
    graph = building_graph()
    if graph is None:
        return None  # eager variables are initialised when made
    return variables_initializer(graph.get_collection("variables"))

