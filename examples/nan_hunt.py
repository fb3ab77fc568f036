"""Hunting a NaN: made far upstream, noticed only in the final loss.

A 50+ op sensor pipeline mixes plain ops (``tf.multiply``, ``tf.exp``,
``tf.sqrt``, ``tf.reduce_mean``, ...) with wrapped functions (``numpy_function``,
``compat.v1.py_func``, ``py_function``). One reading is a sensor dropout (0.0);
after the dark-current subtraction it is slightly negative, and the
``numpy_function`` named ``features/log_intensity`` takes ``np.log`` of it: a
NaN, silently. Dozens of ops later the loss is ``nan`` — which is all a
plain run tells you.

The script prints that final value, then finds the op that *made* the NaN by
re-running under a ``Debugger`` with ``break_on(when="nan_producer")`` and a
frontend that just records each pause and continues. ``main(size=...)``
returns the loss, the producer's name and where it went wrong.

    python examples/nan_hunt.py

To stop at the producer yourself (the run pauses right after
``features/log_intensity`` made the NaN, its inputs and outputs in the
inspector, or printed at the ``(pfd)`` prompt with ``p``):

    pyfunc-debug run --break-on nan examples/nan_hunt.py
    pyfunc-debug run --break-on nan --console examples/nan_hunt.py

To step into ``log_intensity`` under pdb with its real input ``x`` in scope,
pause before it and press ``s``:

    pyfunc-debug run --break 'features/log_intensity' --console examples/nan_hunt.py

(Under ``pyfunc-debug run`` the script skips its own hunt: the debugger you run it
under already stops at the producer.)
"""
import argparse

import numpy as np

import pyfunc_debug as tf


# -- the wrapped functions ------------------------------------------------------------------
def log_intensity(x):
    # The bug: assumes every corrected reading is positive. A dropout reading
    # (0.0) minus the dark current is negative, and np.log gives NaN — silently,
    # as real pipelines often run with numpy's warnings switched off.
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log(x).astype(np.float32)


def running_mean(x):
    """A 5-tap moving average (edges padded), numpy style."""
    k = np.ones(5, dtype=np.float32) / 5
    return np.convolve(np.pad(x, 2, mode="edge"), k, mode="valid").astype(np.float32)


def clip_outliers(x, lo, hi):
    return np.clip(x, lo, hi).astype(np.float32)


def soft_penalty(z):
    # py_function: z arrives as an EagerTensor and tf ops run eagerly in here.
    return tf.reduce_mean(tf.sqrt(tf.square(z) + 1.0) - 1.0)


# -- the graph ------------------------------------------------------------------------------
def build(graph):
    """The pipeline; returns (readings placeholder, loss tensor)."""
    with graph.as_default():
        readings = tf.compat.v1.placeholder(tf.float32, shape=[None], name="readings")

        with tf.name_scope("calibrate"):
            gain = tf.constant(0.8, name="gain")
            dark = tf.constant(0.05, name="dark_current")
            scaled = tf.multiply(readings, gain, name="scaled")
            corrected = tf.subtract(scaled, dark, name="corrected")

        with tf.name_scope("features"):
            logs = tf.numpy_function(log_intensity, [corrected], tf.float32,
                                     name="log_intensity")            # <- the NaN is made here
            energy = tf.square(corrected, name="energy")
            root = tf.sqrt(tf.add(energy, 1.0), name="root_energy")
            smooth = tf.compat.v1.py_func(running_mean, [logs], tf.float32, stateful=False,
                                          name="smooth")
            feat = tf.add(smooth, tf.multiply(root, 0.1), name="feature")

        with tf.name_scope("normalize"):
            mean = tf.reduce_mean(feat, name="mean")
            centered = tf.subtract(feat, mean, name="centered")
            var = tf.reduce_mean(tf.square(centered), name="variance")
            std = tf.sqrt(tf.add(var, 1e-6), name="std")
            z = tf.divide(centered, std, name="z")
            z = tf.numpy_function(clip_outliers, [z, tf.constant(-3.0), tf.constant(3.0)],
                                  tf.float32, name="clip")

        h = z
        for i in range(6):  # a small stack of fixed "layers"
            with tf.name_scope(f"layer{i}"):
                w = tf.constant(0.9 - 0.1 * i, name="w")
                b = tf.constant(0.05 * i, name="b")
                h = tf.tanh(tf.add(tf.multiply(h, w), b), name="act")

        with tf.name_scope("loss"):
            target = tf.constant(0.1, name="target")
            err = tf.subtract(h, target, name="err")
            mse = tf.reduce_mean(tf.square(err), name="mse")
            penalty = tf.py_function(soft_penalty, [err], tf.float32, name="soft_penalty")
            scale = tf.exp(tf.multiply(tf.reduce_mean(tf.abs(h)), -1.0), name="scale")
            loss = tf.add(mse, tf.multiply(penalty, scale), name="total")
    return readings, loss


def make_readings(size, seed=0):
    """Positive readings, with one sensor dropout (0.0) two thirds of the way in."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2.0, size=size).astype(np.float32)
    x[(2 * size) // 3] = 0.0
    return x


def hunt(sess, loss, feed):
    """Re-run under a Debugger that records every NaN-producing op and continues."""
    found = []

    def record(pause):
        bad = np.flatnonzero(~np.isfinite(np.asarray(pause.outputs[0])))
        found.append({"op": pause.op_name, "type": pause.op_type, "source": pause.source,
                      "parent": pause.parent, "index": int(bad[0]) if bad.size else None,
                      "input": float(np.asarray(pause.inputs[0]).reshape(-1)[bad[0]])
                      if bad.size and pause.inputs else None})
        return "continue"

    dbg = tf.debug.Debugger(on_pause=record)
    dbg.break_on(when="nan_producer")
    with dbg:
        sess.run(loss, feed_dict=feed)
    return found


def main(size=2000):
    g = tf.Graph()
    readings, loss = build(g)
    n_ops = len(g.get_operations())
    x = make_readings(size)
    with tf.compat.v1.Session(graph=g) as sess:
        value = sess.run(loss, feed_dict={readings: x})
        print(f"{n_ops} ops; final loss '{loss.name}' = {value}")
        if not np.isnan(value):
            print("no NaN this time")
            return {"loss": value, "producer": None, "found": [], "n_ops": n_ops}
        if tf.debug.attached():  # already under pyfunc-debug run: its debugger shows you
            return {"loss": value, "producer": None, "found": [], "n_ops": n_ops}
        print("the loss is NaN -- but which op made it? re-running under "
              "Debugger().break_on(when='nan_producer') ...")
        found = hunt(sess, loss, {readings: x})
    for f in found:
        print(f"  NaN produced by op '{f['op']}' ({f['type']}) created at {f['source']}: "
              f"element {f['index']} of its input was {f['input']}")
    return {"loss": value, "producer": found[0]["op"] if found else None, "found": found,
            "n_ops": n_ops}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000, help="number of readings")
    main(parser.parse_args().size)
