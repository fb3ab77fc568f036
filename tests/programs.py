"""Small user programs the tests run, and the runner of the benchmarks' tiny runs (shared,
so each exists once)."""

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


def odd_values() -> dict:
    """Arrays real callbacks receive, including what makes numpy warn (complex, NaN/Inf,
    sums that overflow, float16 beyond its range, integer extremes, empty): the adapters'
    no-warning tests give each framework these plus the kinds it supports."""
    import numpy as np
    f32_max = np.finfo(np.float32).max
    return {
        "complex64": np.array([1 + 2j, 3 - 4j, np.nan + 0j], np.complex64),
        "non-finite": np.array([np.nan, np.inf, -np.inf, 1.0], np.float32),
        "overflowing sum": np.full(4, f32_max, np.float32),
        "float16 big": np.array([6e4, 6e4, -6e4], np.float16),
        "bool": np.array([True, False]),
        "int8 extremes": np.array([-128, 127], np.int8),
        "empty": np.zeros((0, 3), np.float32),
    }


def step_chain(n: int):
    """A graph of ``n`` ``numpy_function`` ops ``step0..`` each adding 1 to a float32
    placeholder ``x``: (graph, x, last output). The UI tests' running program."""
    import numpy as np

    import pyfunc_debug as pfd
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = x
        for i in range(n):
            y = pfd.numpy_function(lambda v: v + np.float32(1), [y], pfd.float32,
                                   name=f"step{i}")
    return g, x, y


def run_benchmark(script: str, *args: str, timeout: float = 300):
    """``benchmarks/<script>`` with ``args`` in a fresh interpreter (the smoke tests'
    tiny runs): its completed process, once it exited 0 without a traceback."""
    import os
    import subprocess
    import sys
    path = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", script)
    result = subprocess.run([sys.executable, path, *args], capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result


def quoted_alone_and_traced(folder, program: str, flag: str, start: str, end: str,
                            env: dict | None = None) -> tuple:
    """The stderr text from ``start`` to ``end`` when ``program`` (written to
    ``folder/prog.py``) runs as ``python prog.py``, then as ``pyfunc-debug trace FLAG``:
    what a framework's error quotes, which must read the same under our command."""
    import os
    import subprocess
    import sys
    (folder / "prog.py").write_text(program)
    env = dict(os.environ, PYTHONWARNINGS="ignore", **(env or {}))

    def quoted(*command) -> str:
        r = subprocess.run([sys.executable, *command], cwd=folder, env=env,
                           capture_output=True, text=True, timeout=300)
        text = r.stderr[r.stderr.index(start):]
        return text[:text.index(end)]
    return (quoted("prog.py"),
            quoted("-m", "pyfunc_debug", "trace", flag, "-o", "t.jsonl", "prog.py"))
