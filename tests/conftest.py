"""Shared fixtures: a fresh default graph per test, so tests never see each other's ops."""
from __future__ import annotations

import signal

import pytest

import pyfunc_debug as pfd

# A suite started from a background job (``cmd &`` in a script, nohup) inherits SIGINT
# ignored, and so would every program the pty tests start: Python then installs no
# KeyboardInterrupt handler and their Ctrl+C does nothing. Give them a terminal's default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def fresh_default_graph():
    pfd.reset_default_graph()
    yield
    pfd.reset_default_graph()


# Hypothesis profiles for the property-based suite (tests/test_fuzz_*.py):
# "ci" (default) keeps the suite fast; PFD_HYPOTHESIS_PROFILE=long explores far more.
try:
    import os

    from hypothesis import HealthCheck, settings

    _COMMON = dict(deadline=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                          HealthCheck.filter_too_much])
    settings.register_profile("ci", max_examples=40, **_COMMON)
    settings.register_profile("long", max_examples=2500, **_COMMON)
    settings.load_profile(os.environ.get("PFD_HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # hypothesis is in the dev extra; without it the fuzz suite is skipped
    pass
