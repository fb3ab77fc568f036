"""TensorFlow's documented ``py_function`` example: ``log_huber`` with gradients.

Runs the v1-graph form (``tf.gradients`` in a Session) at x=1, m=2 — y = 1.0,
dy/dx = 2.0 — and on the other branch at x=3, then the eager ``GradientTape``
form. The gradient flows through a tape recorded while the function ran.

    python examples/log_huber.py
"""
import pyfunc_debug as tf


def log_huber(x, m):
    if tf.abs(x) <= m:
        return x**2
    else:
        return m**2 * (1 - 2 * tf.math.log(m) + tf.math.log(x**2))


def graph_mode(x_value, m_value):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32)
        m = tf.compat.v1.placeholder(tf.float32)
        y = tf.py_function(func=log_huber, inp=[x, m], Tout=tf.float32)
        dy_dx = tf.gradients(y, x)[0]
        with tf.compat.v1.Session() as sess:
            return sess.run([y, dy_dx], feed_dict={x: x_value, m: m_value})


def eager_mode(x_value, m_value):
    x = tf.constant(x_value)
    m = tf.constant(m_value)
    with tf.GradientTape() as t:
        t.watch([x, m])
        y = tf.py_function(func=log_huber, inp=[x, m], Tout=tf.float32)
    dy_dx = t.gradient(y, x)
    return y.numpy(), dy_dx.numpy()


def main():
    results = {}
    for x in (1.0, 3.0):
        results[("graph", x)] = graph_mode(x, 2.0)
        results[("eager", x)] = eager_mode(x, 2.0)
        print(f"x={x}, m=2: graph y, dy/dx = {results[('graph', x)]}; "
              f"eager y, dy/dx = {results[('eager', x)]}")
    return results


if __name__ == "__main__":
    main()
