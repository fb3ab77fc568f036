"""A wrapped function that writes into its input, and how the debugger catches it.

``numpy_function`` hands the wrapped function the *real* arrays of the run, not
copies (as TensorFlow does, TF#49): here that is the very numpy array the caller
fed. ``double`` does ``x *= 2`` in place, so

- the caller's ``data`` changes under its feet, and
- running the same ``sess.run`` on the same array twice gives two different
  answers.

Nothing fails; the numbers are just wrong. ``Debugger(guard_mutation=True)``
copies each array handed to a ``py_func``/``numpy_function`` and compares it
after the call: it emits a ``Warning`` naming the op and the input index. The
script runs the graph with such a debugger attached (its ``on_pause`` just
continues; there are no breakpoints), prints the warnings, then shows the fix
(``return x * 2``: a new array) running clean. ``main()`` returns the values
and the warnings.

    python examples/mutation_bug.py

The same check from the command line, on any script (the warnings are listed
when it ends):

    pyfunc-debug run --guard-mutation --console examples/mutation_bug.py
    pyfunc-debug run --guard-mutation examples/mutation_bug.py
"""
import numpy as np

import pyfunc_debug as tf


def double(x):
    x *= 2.0          # the bug: writes into the array it was handed
    return x


def double_fixed(x):
    return x * 2.0    # the fix: a new array (or x = x.copy() first)


def build(graph, func, name):
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[None], name="data")
        y = tf.numpy_function(func, [x], tf.float32, name=name)
        total = tf.reduce_sum(y, name="total")
    return x, y, total


def run_twice(func, name, debugger=None):
    """Feed the same float32 array twice; returns (results, the array afterwards)."""
    g = tf.Graph()
    x, y, total = build(g, func, name)
    # float32, like the placeholder: the feed is used as is, not converted (a copy)
    data = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    results = []
    with tf.compat.v1.Session(graph=g) as sess:
        for _ in range(2):
            if debugger is None:
                results.append(sess.run(total, feed_dict={x: data}))
            else:
                with debugger:
                    results.append(sess.run(total, feed_dict={x: data}))
    return results, data


def main():
    print("1. the bug: numpy_function 'double' does x *= 2 on its input")
    results, data = run_twice(double, "double")
    print(f"   fed [1. 2. 3.] twice: totals {results[0]} then {results[1]}; "
          f"the caller's array is now {data}")

    print("2. the same runs with Debugger(guard_mutation=True) attached:")
    dbg = tf.debug.Debugger(on_pause=lambda pause: "continue", guard_mutation=True)
    guarded_results, _ = run_twice(double, "double", debugger=dbg)
    for w in dbg.warnings:
        print(f"   Warning ({w.category}): {w.message}")

    print("3. the fix: return x * 2.0 (a new array)")
    fixed = tf.debug.Debugger(on_pause=lambda pause: "continue", guard_mutation=True)
    fixed_results, fixed_data = run_twice(double_fixed, "double", debugger=fixed)
    print(f"   totals {fixed_results[0]} and {fixed_results[1]}; the caller's array is still "
          f"{fixed_data}; {len(fixed.warnings)} warnings")
    return {"results": results, "data": data, "guarded_results": guarded_results,
            "warnings": list(dbg.warnings), "fixed_results": fixed_results,
            "fixed_data": fixed_data, "fixed_warnings": list(fixed.warnings)}


if __name__ == "__main__":
    main()
