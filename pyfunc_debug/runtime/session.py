"""Session: runs fetches of a graph with feeds; one compiled plan per signature."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..graph.graph import get_default_graph
from ..graph.tensor import Tensor
from ..ops.convert import scalar_or_array, to_bytes_array
from .executor import RunContext, execute
from ..nest import pack_sequence_as
from .fetches import resolve_fetches
from .plan import compile_plan

__all__ = ["Session", "get_default_session"]

_default = threading.local()


def get_default_session():
    stack = getattr(_default, "stack", None)
    if not stack:
        raise ValueError("No default session is registered. Use `with pfd.Session() as sess:`.")
    return stack[-1]


def _convert_feed(tensor, value):
    """A fed value in the placeholder's dtype, checked against its static shape."""
    dtype = tensor.dtype
    if isinstance(value, Tensor):
        raise TypeError(f"The value of a feed cannot be a pfd.Tensor object ('{value.name}'). "
                        "Acceptable feed values include Python scalars, strings, lists, "
                        "numpy ndarrays, or EagerTensors.")
    if hasattr(value, "_value"):  # EagerTensor
        value = value._value
    if dtype.is_string:
        arr = to_bytes_array(value)
    else:
        try:
            arr = np.asarray(value, dtype=dtype.np_dtype)
        except (TypeError, ValueError) as e:
            raise TypeError(f"Cannot feed {value!r} to tensor '{tensor.name}' of dtype "
                            f"{dtype.name}: {e}") from None
    if not tensor.shape.is_compatible_with(arr.shape):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor '{tensor.name}', "
                         f"which has shape {tensor.shape} (op '{tensor.op.name}' created at "
                         f"{tensor.op.source}).")
    return scalar_or_array(arr)


class Session:
    """Runs graph fetches: ``sess.run(fetches, feed_dict)`` (see SPEC §2).

    ``inter_op_threads=N`` (N > 1) runs independent branches concurrently.
    """

    def __init__(self, target: str = "", graph=None, config=None, inter_op_threads=None):
        self.graph = graph if graph is not None else get_default_graph()
        self._plans: dict = {}
        self._fold_cache: dict = {}
        self._closed = False
        self._pool = (ThreadPoolExecutor(inter_op_threads, thread_name_prefix="pfd-inter-op")
                      if inter_op_threads and inter_op_threads > 1 else None)

    # -- context management ---------------------------------------------------
    def __enter__(self):
        if not hasattr(_default, "stack"):
            _default.stack = []
        _default.stack.append(self)
        return self

    def __exit__(self, *exc):
        _default.stack.remove(self)
        self.close()
        return False

    def as_default(self):
        return _DefaultSession(self)

    def close(self) -> None:
        self._closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=False)

    # -- running ------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of ``fetches`` (same structure; 0-d results as numpy scalars)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_dict = feed_dict or {}
        plan = self._plan_for(fetches, feed_dict)
        values = [_convert_feed(t, v) for (_, t), v in zip(plan.feed_slots, feed_dict.values())]
        ctx = RunContext("session")
        results = execute(plan, values, ctx, self._pool)
        if fetches.__class__ is Tensor:
            return results[0]
        return pack_sequence_as(fetches, results)

    def _plan_for(self, fetches, feed_dict):
        single = fetches.__class__ is Tensor
        cache_key = (id(fetches) if single else _structure_id(fetches),
                     tuple(k if k.__class__ is str else id(k) for k in feed_dict))
        try:
            return self._plans[cache_key]
        except (KeyError, TypeError):
            pass
        flat = [self.graph.as_graph_element(fetches)] if single else \
            resolve_fetches(fetches, self.graph)
        feeds = [self._feed_tensor(k) for k in feed_dict]
        plan = compile_plan(self.graph, flat, feeds, self._fold_cache)
        try:
            self._plans[cache_key] = plan
        except TypeError:
            pass  # unhashable fetch structure: compile each time
        return plan

    def _feed_tensor(self, key) -> Tensor:
        if isinstance(key, str):
            key = self.graph.get_tensor_by_name(key)
        if hasattr(key, "_value") and not isinstance(key, Tensor):
            raise TypeError("Cannot use an EagerTensor as a feed key: feed placeholders "
                            "(symbolic tensors) of the session's graph.")
        if not isinstance(key, Tensor):
            raise TypeError(f"Cannot interpret feed_dict key {key!r} as a Tensor.")
        if key.graph is not self.graph:
            raise ValueError(f"Feed key {key!r} is not an element of this session's graph.")
        return key

    def list_devices(self):
        return ["/job:localhost/replica:0/task:0/device:CPU:0"]


def _structure_id(fetches):
    """A hashable key for a fetch structure, by tensor identity.

    Identity, not ``==``: tensors overload ``==`` elementwise. A cached plan keeps
    its tensors alive, so their ids cannot be reused while it is cached.
    """
    if isinstance(fetches, dict):
        return ("d",) + tuple((k, _structure_id(v)) for k, v in fetches.items())
    if isinstance(fetches, (list, tuple)):
        return (type(fetches),) + tuple(_structure_id(v) for v in fetches)
    return fetches if fetches.__class__ is str else id(fetches)


class _DefaultSession:
    def __init__(self, sess):
        self.sess = sess

    def __enter__(self):
        if not hasattr(_default, "stack"):
            _default.stack = []
        _default.stack.append(self.sess)
        return self.sess

    def __exit__(self, *exc):
        _default.stack.remove(self.sess)
        return False


InteractiveSession = Session
