"""TensorFlow's documented ``numpy_function`` example inside ``function``.

``np.sinh`` runs as a numpy function inside a traced ``@tf.function`` with a
fixed input signature; ``y * y`` for 1.0 prints 1.3810978.

    python examples/numpy_function_in_function.py
"""
import numpy as np

import pyfunc_debug as tf


def my_numpy_func(x):
    # x will be a numpy array with the contents of the input to the
    # tf.function
    return np.sinh(x)


@tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
def tf_function(input):
    y = tf.numpy_function(my_numpy_func, [input], tf.float32)
    return y * y


def main():
    result = tf_function(tf.constant(1.))
    print(result)
    return result


if __name__ == "__main__":
    main()
