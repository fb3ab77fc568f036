"""pytest entry point for pyfunc-debug (placeholder: being rewritten; delegates for now)."""
from pyfunc_debug.pytest_plugin import *  # noqa: F401,F403
from pyfunc_debug.pytest_plugin import pytest_addoption, pytest_configure, pfd_trace  # noqa: F401
