"""``pfd.compat``: the ``v1`` names TensorFlow code uses."""
from . import v1

__all__ = ["v1"]
