"""``pfd.math``: math ops under their TensorFlow namespace."""
from .ops.math_ops import (abs, add, conj, cosh, divide, equal, exp, greater, greater_equal,  # noqa: F401,A004
                           is_inf, is_nan, less, less_equal, log, maximum, minimum, multiply,
                           negative, not_equal, pow, reduce_max, reduce_mean, reduce_sum,
                           sigmoid, sign, sinh, sqrt, square, subtract, tanh, truediv)

__all__ = ["abs", "add", "conj", "cosh", "divide", "equal", "exp", "greater", "greater_equal", "is_inf",
           "is_nan", "less", "less_equal", "log", "maximum", "minimum", "multiply", "negative",
           "not_equal", "pow", "reduce_max", "reduce_mean", "reduce_sum", "sigmoid", "sign",
           "sinh", "sqrt", "square", "subtract", "tanh", "truediv"]
