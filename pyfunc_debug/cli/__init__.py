"""The ``pyfunc-debug`` command (also ``python -m pyfunc_debug``).

One module per job: ``entry`` (``main``: parse, dispatch, exit status),
``parser`` (every command's options, help and examples), ``completion``
(shell completion scripts made from the parser), ``checks`` (usage errors and
file checks), ``terminal`` (can this terminal show the UI), ``program`` (what
``run`` and ``trace`` share), and one module per command family: ``run``,
``trace``, ``attach``, ``traces`` (``view``, ``diff``, ``export``), ``demo``.
Nothing here imports Textual: the UI is imported only when a command opens it.
"""
from __future__ import annotations

from .checks import UsageError
from .entry import main
from .parser import build_parser
from .traces import first_divergence

_first_divergence = first_divergence   # its old name (tests import it)

__all__ = ["main", "build_parser", "UsageError"]
