"""Shared fixtures: a fresh default graph per test, so tests never see each other's ops."""
from __future__ import annotations

import pytest

import pyfunc_debug as pfd


@pytest.fixture(autouse=True)
def fresh_default_graph():
    pfd.reset_default_graph()
    yield
    pfd.reset_default_graph()
