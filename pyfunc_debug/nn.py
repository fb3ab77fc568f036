"""``pfd.nn``: the few activations the examples use."""
from .ops.math_ops import relu, sigmoid, tanh  # noqa: F401

__all__ = ["relu", "sigmoid", "tanh"]
