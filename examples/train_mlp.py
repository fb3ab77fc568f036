"""Training a small MLP whose loss is a ``py_function``.

A one-hidden-layer tanh network learns ``y = sin(3 x0) + 0.5 x1**2`` (plus a
little noise) from 256 generated points (fixed seed), with plain gradient
descent. The loss is a Huber loss written as an ordinary Python function of
``tf`` ops and wrapped in ``tf.py_function``: the ops it runs are recorded on a
tape during the forward call, so ``tf.gradients`` flows through it back to the
weights (a ``numpy_function`` here would give ``None`` gradients and a warning
naming it). The graph is built once; each step feeds the current weights and
applies ``w -= lr * grad`` in numpy. It prints the loss falling every 50 steps;
``main(steps=...)`` returns the losses.

    python examples/train_mlp.py [--steps 300]

To look inside the loss while it trains — pause before the ``loss/huber`` op,
``s`` steps into ``huber`` under pdb with the real predictions in scope, ``n``
walks the eager ops it runs one at a time:

    pyfunc-debug run --break 'loss/huber' --console examples/train_mlp.py

To record every op of every step (the eager ops inside ``huber`` appear as
children of it) and open the file in https://ui.perfetto.dev:

    pyfunc-debug trace -o train.json examples/train_mlp.py --steps 20
"""
import argparse

import numpy as np

import pyfunc_debug as tf

DELTA = 0.5


def huber(pred, target):
    # py_function: pred and target are EagerTensors, and these ops run eagerly
    # on a tape, so the loss is differentiable.
    err = tf.abs(pred - target)
    quadratic = 0.5 * tf.square(err)
    linear = DELTA * (err - 0.5 * DELTA)
    return tf.reduce_mean(tf.where(err <= DELTA, quadratic, linear))


def make_data(n=256, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 2)).astype(np.float32)
    y = np.sin(3 * x[:, :1]) + 0.5 * x[:, 1:] ** 2 + 0.05 * rng.standard_normal((n, 1))
    return x, y.astype(np.float32)


def init_params(hidden=32, seed=1):
    rng = np.random.default_rng(seed)
    return {"w1": (rng.standard_normal((2, hidden)) * 0.5).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w2": (rng.standard_normal((hidden, 1)) / np.sqrt(hidden)).astype(np.float32),
            "b2": np.zeros(1, np.float32)}


def build(graph, hidden):
    """The model, the py_function loss and its gradients; returns the tensors by name."""
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        y = tf.compat.v1.placeholder(tf.float32, [None, 1], name="y")
        params = {"w1": tf.compat.v1.placeholder(tf.float32, [2, hidden], name="w1"),
                  "b1": tf.compat.v1.placeholder(tf.float32, [hidden], name="b1"),
                  "w2": tf.compat.v1.placeholder(tf.float32, [hidden, 1], name="w2"),
                  "b2": tf.compat.v1.placeholder(tf.float32, [1], name="b2")}
        with tf.name_scope("model"):
            h = tf.tanh(tf.matmul(x, params["w1"]) + params["b1"], name="hidden")
            pred = tf.add(tf.matmul(h, params["w2"]), params["b2"], name="pred")
        with tf.name_scope("loss"):
            loss = tf.py_function(huber, [pred, y], tf.float32, name="huber")
        names = sorted(params)
        grads = dict(zip(names, tf.gradients(loss, [params[k] for k in names])))
    return x, y, params, loss, grads


def main(steps=300, lr=0.5, hidden=32, every=50):
    x_data, y_data = make_data()
    values = init_params(hidden)
    g = tf.Graph()
    x, y, params, loss, grads = build(g, hidden)
    losses = []
    with tf.compat.v1.Session(graph=g) as sess:
        for step in range(steps + 1):
            feed = {x: x_data, y: y_data, **{params[k]: v for k, v in values.items()}}
            loss_value, grad_values = sess.run([loss, grads], feed_dict=feed)
            losses.append(float(loss_value))
            if step % every == 0 or step == steps:
                print(f"step {step:4d}  huber loss {loss_value:.5f}")
            if step < steps:
                for k in values:
                    values[k] = values[k] - lr * grad_values[k]
    print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f} "
          f"({losses[0] / losses[-1]:.0f}x lower) after {steps} steps")
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()
    main(steps=args.steps, lr=args.lr)
