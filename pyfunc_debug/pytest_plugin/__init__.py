"""The pytest plugin's parts that import the engine, and an alias for the plugin itself.

The plugin is the light module ``pyfunc_debug_pytest`` (entry point ``pyfunc_debug``,
SPEC §6 and 5b): it defines the options and the ``pfd_trace`` fixture and imports
``recording`` (``--pfd-trace``) or ``breaking`` (``--pfd-break-on``) only when asked.

``-p pyfunc_debug.pytest_plugin`` or ``pytest_plugins = ["pyfunc_debug.pytest_plugin"]``
still load it: this package defines no option, hook or fixture of its own (pytest
would register them a second time beside the entry point's); it registers the
entry module under the entry point's name unless that is already done, and an
autoload that comes later then skips it. Importing this package imports
``pyfunc_debug`` (numpy, the engine): ``-p pyfunc_debug`` is the light spelling.
"""
from __future__ import annotations

import pyfunc_debug_pytest as _entry

__all__: list[str] = []


def pytest_addhooks(pluginmanager) -> None:
    # the first hook pytest replays for a plugin registered late (-p, conftest), before options
    if not pluginmanager.is_registered(_entry) and not pluginmanager.has_plugin(_entry.PLUGIN_NAME):
        pluginmanager.register(_entry, _entry.PLUGIN_NAME)
