"""A text pipeline on string tensors, surviving one malformed record.

A CSV blob of ``name,age,score`` records goes through ``tf.compat.v1.py_func``
ops on ``tf.string`` tensors: string values reach the wrapped functions as
``bytes`` (scalars) or numpy object arrays of ``bytes`` (vectors), and string
results go back the same way.

- ``split_lines`` turns the blob into a vector of records (header dropped);
- per record, ``parse/parse_record`` decodes it into name (string), age
  (int32) and score (float32), ``parse/tokenize`` lower-cases the name into
  tokens and counts them, and plain ops compute ``score / (age / 10)``;
- ``vocabulary`` counts the tokens of all good records.

One record's age is ``seventy-two``: ``parse_record`` raises ``ValueError``,
which the run turns into ``tf.errors.InvalidArgumentError`` naming the op
(``err.op``) with the original exception as ``__cause__``. The script reports
it with the bad record and carries on with the rest: a failed run leaves the
session usable. ``main()`` returns the parsed records, the vocabulary and the
list of errors.

    python examples/text_pipeline.py

To stop where the record fails — ``p`` shows the record, ``pm`` opens pdb at
the ``raise`` inside ``parse_record`` with ``text`` and ``fields`` in scope
(``c`` leaves pdb; the script catches the error and goes on):

    pyfunc-debug run --break-on error --console examples/text_pipeline.py
    pyfunc-debug run --break-on error examples/text_pipeline.py
"""
import collections

import numpy as np

import pyfunc_debug as tf

CSV = b"""name,age,score
Ada Lovelace,36,9.5
Alan Turing,41,9.8
Grace Brewster Hopper,85,9.1
Edsger Dijkstra,seventy-two,8.7
Barbara Liskov,84,9.0
Donald Knuth,87,9.7
John McCarthy,84,8.9
Alan Kay,85,8.8
"""


# -- the wrapped functions (strings arrive as bytes) ----------------------------------------
def split_lines(blob):
    lines = [ln.strip() for ln in blob.decode("utf-8").splitlines()[1:] if ln.strip()]
    return np.array([ln.encode("utf-8") for ln in lines], dtype=object)


def parse_record(record):
    text = record.decode("utf-8")
    fields = text.split(",")
    if len(fields) != 3:
        raise ValueError(f"record {text!r}: expected 3 fields name,age,score, got {len(fields)}")
    name, age, score = fields
    if not age.strip().isdigit():
        raise ValueError(f"record {text!r}: age {age!r} is not a whole number")
    return name.strip().encode("utf-8"), np.int32(age), np.float32(score)


def tokenize(name):
    tokens = name.decode("utf-8").lower().split()
    return np.array([t.encode("utf-8") for t in tokens], dtype=object), np.int32(len(tokens))


def vocabulary(tokens):
    counts = collections.Counter(tokens.tolist())
    words = sorted(counts, key=lambda w: (-counts[w], w))
    return (np.array(words, dtype=object),
            np.array([counts[w] for w in words], dtype=np.int64))


# -- the graph ------------------------------------------------------------------------------
def build(graph):
    with graph.as_default():
        blob = tf.compat.v1.placeholder(tf.string, shape=[], name="blob")
        lines = tf.compat.v1.py_func(split_lines, [blob], tf.string, name="split_lines")

        record = tf.compat.v1.placeholder(tf.string, shape=[], name="record")
        with tf.name_scope("parse"):
            name, age, score = tf.compat.v1.py_func(
                parse_record, [record], [tf.string, tf.int32, tf.float32], name="parse_record")
            tokens, n_tokens = tf.compat.v1.py_func(tokenize, [name], [tf.string, tf.int32],
                                                    name="tokenize")
            per_decade = tf.divide(score, tf.cast(age, tf.float32) / 10.0, name="per_decade")

        all_tokens = tf.compat.v1.placeholder(tf.string, shape=[None], name="all_tokens")
        vocab = tf.compat.v1.py_func(vocabulary, [all_tokens], [tf.string, tf.int64],
                                     name="vocabulary")
    return {"blob": blob, "lines": lines, "record": record, "vocab_in": all_tokens,
            "parsed": {"name": name, "age": age, "score": score, "tokens": tokens,
                       "n_tokens": n_tokens, "per_decade": per_decade},
            "vocab": vocab}


def main(csv=CSV):
    g = tf.Graph()
    t = build(g)
    records, errors = [], []
    with tf.compat.v1.Session(graph=g) as sess:
        lines = sess.run(t["lines"], feed_dict={t["blob"]: csv})
        print(f"{len(lines)} records")
        for i, line in enumerate(lines):
            try:
                r = sess.run(t["parsed"], feed_dict={t["record"]: line})
            except tf.errors.InvalidArgumentError as err:
                cause = err.__cause__
                errors.append({"index": i, "record": line, "op": err.op.name,
                               "message": str(cause) if cause else err.message})
                print(f"  #{i} skipped: op '{err.op.name}' ({err.op.type}) failed on "
                      f"{line!r}: {type(cause).__name__}: {cause}")
                continue
            records.append(r)
            print(f"  #{i} {r['name'].decode():24} age {r['age']:3d}  score {r['score']:.1f}  "
                  f"tokens {[w.decode() for w in r['tokens']]}  "
                  f"score/decade {r['per_decade']:.2f}")
        tokens = np.concatenate([r["tokens"] for r in records]) if records else \
            np.array([], dtype=object)
        words, counts = sess.run(t["vocab"], feed_dict={t["vocab_in"]: tokens})
    vocab = dict(zip((w.decode() for w in words), (int(c) for c in counts)))
    print(f"parsed {len(records)} of {len(lines)} records, {len(errors)} error(s); "
          f"vocabulary: {vocab}")
    return {"records": records, "errors": errors, "vocabulary": vocab}


if __name__ == "__main__":
    main()
