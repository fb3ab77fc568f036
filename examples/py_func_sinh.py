"""TensorFlow's documented ``compat.v1.py_func`` example, unchanged but for the import.

A placeholder fed 1.0 flows through ``np.sinh`` wrapped by ``py_func``; prints 1.1752012.

    python examples/py_func_sinh.py
"""
import numpy as np

import pyfunc_debug as tf


def my_func(x):
    # x will be a numpy array with the contents of the placeholder below
    return np.sinh(x)


def main():
    input = tf.compat.v1.placeholder(tf.float32)
    y = tf.compat.v1.py_func(my_func, [input], tf.float32)
    with tf.compat.v1.Session() as sess:
        result = sess.run(y, feed_dict={input: 1.0})
    print(f"py_func(np.sinh)(1.0) = {result!r}")
    return result


if __name__ == "__main__":
    main()
