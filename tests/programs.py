"""Small user programs the command-line tests run (shared, so each exists once)."""

# a py_func that raises KeyError: 2 for the input 1.0
KEYERROR = """
        import numpy as np
        import pyfunc_debug as tf

        def lookup(x):
            table = {1: 2}
            return np.int64(table[int(x) + 1])

        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.compat.v1.py_func(lookup, [x], tf.int64, name="lookup")
        with tf.compat.v1.Session() as sess:
            print(sess.run(y, {x: 1.0}))
    """

# 2,000 runs of a 50 ms py_func named 'slow': time to pause, step in or quit
LOOP = """
        import time
        import numpy as np
        import pyfunc_debug as tf

        def slow(x):
            time.sleep(0.05)
            return x + np.float32(1)

        x = tf.compat.v1.placeholder(tf.float32)
        y = tf.compat.v1.py_func(slow, [x], tf.float32, name="slow")
        with tf.compat.v1.Session() as sess:
            for step in range(2000):
                sess.run(y, {x: 1.0})
    """
