"""Running graph ops on a Dask cluster (SPEC §8): ``Session(cluster=client)``.

Importing this package loads no Dask: it only registers the executor factory
the session asks for when given a cluster (``runtime.hooks.cluster``).
"""
from __future__ import annotations

from ..runtime import hooks

__all__ = ["cluster_executor"]


def cluster_executor(cluster):
    """The executor of a ``Session(cluster=...)`` (a ``dask.distributed.Client`` or address)."""
    try:
        from .executor import ClusterExecutor
    except ImportError as e:
        raise ImportError(f"Session(cluster=...) needs Dask: pip install "
                          f"'pyfunc-debug[distributed]' ({e})") from e
    return ClusterExecutor(cluster)


hooks.cluster = cluster_executor
