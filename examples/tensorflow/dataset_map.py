"""A real TensorFlow input pipeline whose ``Dataset.map`` runs Python callbacks.

Needs TensorFlow: ``pip install -e '.[tensorflow]'`` (the ``tensorflow`` extra).
Each element is a row of numbers and a line of text; ``standardize`` (a
``numpy_function`` under the name scope ``features``) scales the row, and
``count_words`` (a ``py_function``) counts the words. Row 0 is constant, so
its standard deviation is 0 and ``standardize`` quietly makes NaNs — the bug to
find. The map runs 4 calls at a time on TensorFlow's own threads.

    python examples/tensorflow/dataset_map.py
    pyfunc-debug run --tf --break-on nan examples/tensorflow/dataset_map.py
    pyfunc-debug run --tf --console --break 'features/*' examples/tensorflow/dataset_map.py
    pyfunc-debug trace --tf -o map.jsonl examples/tensorflow/dataset_map.py
    pyfunc-debug view map.jsonl
"""
import numpy as np
import tensorflow as tf

LINES = [b"the quick brown fox", b"jumps over", b"the lazy dog", b"and runs", b"away", b"fast"]


def standardize(row):
    return ((row - row.mean()) / row.std()).astype(np.float32)


def count_words(text):
    return len(text.numpy().split())


def load(i):
    row = tf.cast(tf.range(4, dtype=tf.int64) * i, tf.float32)
    with tf.name_scope("features"):
        x = tf.numpy_function(standardize, [row], tf.float32, name="standardize")
    words = tf.py_function(count_words, [tf.gather(LINES, i)], tf.int32, name="count_words")
    return x, words


def main():
    ds = tf.data.Dataset.range(len(LINES)).map(load, num_parallel_calls=4)
    nan_rows = words = 0
    for x, n in ds:
        nan_rows += int(np.isnan(x.numpy()).any())
        words += int(n)
    print(f"{len(LINES)} rows, {words} words, {nan_rows} row(s) with NaN")
    return nan_rows, words


if __name__ == "__main__":
    main()
