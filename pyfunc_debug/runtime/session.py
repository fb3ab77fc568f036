"""Session: runs fetches of a graph with feeds; one compiled plan per signature.

As in TensorFlow, a session is also a graph context: inside ``with sess:`` or
``sess.as_default()`` its graph is the default one and ops built there become
nodes of it.
"""
from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from .. import events as ev
from ..graph.defaults import get_default_session, pop_session, push_session
from ..graph.graph import building, get_default_graph, pin_eager
from ..graph.tensor import SymbolicTensor
from ..nest import pack_sequence_as
from . import hooks
from .executor import RunContext, execute
from .feeds import convert_feed, feed_tensor
from .fetches import resolve_fetches
from .plan import compile_plan

__all__ = ["Session", "InteractiveSession", "get_default_session"]


class Session:
    """Runs graph fetches: ``sess.run(fetches, feed_dict)`` (see SPEC §2, §2a).

    A run starts in the calling thread, cheap ops inline. Without
    ``inter_op_threads``, when a wrapped function blocks or runs long (a
    watchdog checks every few ms), the ops after it move to helper threads, so
    a blocking put/get pair completes (TF#16). ``inter_op_threads=N`` (N > 1)
    also times wrapped functions and spreads independent branches over N
    threads from the first one measured expensive (SPEC 2b).
    ``inter_op_threads=1`` runs everything in the calling thread, one op at a
    time (a blocking put/get pair then waits for ever, unlike TF).

    ``cluster=`` (a ``dask.distributed.Client`` or a scheduler address) runs
    ops placed with ``device("/job:worker/task:K")`` on the cluster's K-th
    worker (SPEC §8; needs the ``distributed`` extra).
    """

    def __init__(self, target: str = "", graph=None, config=None, inter_op_threads=None,
                 cluster=None):
        self.graph = graph if graph is not None else get_default_graph()
        self._plans: dict = {}
        self._fold_cache: dict = {}
        self._resources: dict = {}  # the values of the graph's variables in this session
        self._closed = False
        self._contexts: list = []
        self._helpers = inter_op_threads != 1
        self._pool = (ThreadPoolExecutor(inter_op_threads, thread_name_prefix="pfd-inter-op",
                                         initializer=_pool_thread_start)
                      if inter_op_threads and inter_op_threads > 1 else None)
        self._cluster = None if cluster is None else hooks.cluster(cluster)

    # -- context management ---------------------------------------------------
    def __enter__(self):
        self._contexts.append(self._default_scope())
        self._contexts[-1].__enter__()
        return self

    def __exit__(self, *exc):
        self._contexts.pop().__exit__(*exc)
        self.close()
        return False

    def as_default(self):
        """A context in which this session and its graph are the defaults."""
        return self._default_scope()

    @contextlib.contextmanager
    def _default_scope(self):
        push_session(self)
        try:
            with building(self.graph):
                yield self
        finally:
            pop_session(self)

    def close(self) -> None:
        self._closed = True
        if self._cluster is not None:
            self._cluster.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False)

    # -- running ------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of ``fetches`` (same structure; 0-d results as numpy scalars)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if feed_dict is None:
            feed_dict = {}
        elif not isinstance(feed_dict, dict):
            raise TypeError(f"feed_dict must be a dict of tensors to values, not "
                            f"{type(feed_dict).__name__}.")
        plan = self._plan_for(fetches, feed_dict)
        values = [convert_feed(t, v) for (_, t), v in zip(plan.feed_slots, feed_dict.values())]
        ctx = RunContext("session", resources=self._resources)
        if self._cluster is not None:
            results = self._cluster.execute(plan, values, ctx)
        else:
            results = execute(plan, values, ctx, self._pool, self._helpers)
        if fetches.__class__ is SymbolicTensor:
            return results[0]
        return pack_sequence_as(fetches, results)

    def _plan_for(self, fetches, feed_dict):
        single = fetches.__class__ is SymbolicTensor
        cache_key = (id(fetches) if single else _structure_id(fetches),
                     tuple(k if k.__class__ is str else id(k) for k in feed_dict))
        try:
            return self._plans[cache_key]
        except (KeyError, TypeError):
            pass
        flat = [self.graph.as_graph_element(fetches)] if single else \
            resolve_fetches(fetches, self.graph)
        feeds = [feed_tensor(self.graph, k) for k in feed_dict]
        plan = compile_plan(self.graph, flat, feeds, self._fold_cache)
        try:
            self._plans[cache_key] = plan
        except TypeError:
            pass  # unhashable fetch structure: compile each time
        return plan

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


class InteractiveSession(Session):
    """A session that makes itself the default when created (TF 1.x)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._contexts.append(self._default_scope())
        self._contexts[-1].__enter__()

    def close(self) -> None:
        while self._contexts:
            self._contexts.pop().__exit__(None, None, None)
        super().close()


def _pool_thread_start() -> None:
    """An inter-op thread: eager as TF's threads, and its name noted for traces."""
    pin_eager()
    ev.note_thread(threading.get_ident())
