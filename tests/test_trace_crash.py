"""capture="full" traces survive kill -9; damaged value files never hang, crash or mislead."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

import pyfunc_debug as tf
from pyfunc_debug import events as ev
from pyfunc_debug.trace.jsonl import TraceFormatError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    import pyfunc_debug as tf
    x = tf.compat.v1.placeholder(tf.float32, name="x")
    y = x
    for i in range(20):
        y = tf.numpy_function(lambda v: v + np.float32(1), [y], tf.float32, name=f"step{i}")
    with tf.trace(sys.argv[1], capture="full"), tf.Session() as sess:
        print("ready", flush=True)
        while True:
            sess.run(y, {x: np.arange(256, dtype=np.float32)})
""")


def killed_writers(script, tmp_path, trials: int, seed: int, delays=(0.0, 0.25), env=None):
    """Start ``trials`` copies of ``script`` (each writing the trace named by its argument)
    at once — their startups overlap — and once each prints "ready", kill -9 each at a
    random point; yields each trace's path after its writer is dead."""
    rng = random.Random(seed)
    env = env or dict(os.environ, PYTHONPATH=ROOT)
    procs = []
    for trial in range(trials):
        path = tmp_path / f"t{trial}.jsonl"
        procs.append((path, subprocess.Popen([sys.executable, str(script), str(path)],
                                             stdout=subprocess.PIPE, env=env)))
    for path, proc in procs:
        assert proc.stdout.readline() == b"ready\n"
    for path, proc in procs:
        time.sleep(rng.uniform(*delays))
        proc.send_signal(signal.SIGKILL)
    for path, proc in procs:
        proc.wait(timeout=10)
        proc.stdout.close()
        yield path


def test_kill_minus_9_at_random_points_leaves_a_loadable_prefix(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    for path in killed_writers(script, tmp_path, trials=5, seed=10):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = tf.load_trace(path)
        assert not [w for w in caught if "captured value" in str(w.message)], \
            "a value file named by an event was not complete"
        seqs = [e.seq for e in loaded]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        assert type(loaded[0]) is ev.RunStart
        for e in loaded:
            if type(e) is ev.OpEnd:
                assert e.outputs[0].value is not None and e.inputs[0].value is not None


def _small_full_trace(path):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        a = tf.numpy_function(lambda v: v * np.float32(2), [x], tf.float32, name="double")
        b = tf.numpy_function(lambda v: v + np.float32(1), [a], tf.float32, name="inc")
    with tf.trace(path, capture="full"), tf.Session(graph=g) as sess:
        sess.run(b, {x: np.arange(1000, dtype=np.float32)})
    folder = f"{path}.values"
    key = next(e for e in tf.load_trace(path) if type(e) is ev.OpEnd and e.op == "inc")
    return folder, f"{key.seq}-out0"


def _load_warned(path):
    """(trace, warnings about values) — loading in a thread, so a hang fails instead of hanging."""
    box = {}

    def load():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            box["trace"] = tf.load_trace(path)
        box["warnings"] = [str(w.message) for w in caught]

    t = threading.Thread(target=load, daemon=True)
    t.start()
    t.join(timeout=20)
    assert not t.is_alive(), "load_trace hung"
    return box["trace"], box["warnings"]


def _inc_value(trace):
    return next(e for e in trace if type(e) is ev.OpEnd and e.op == "inc").outputs[0].value


def _npy_header(descr: str, shape) -> bytes:
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
    text += " " * (63 - len(text) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode()


def _torn(p):
    data = open(p, "rb").read()
    open(p, "wb").write(data[: len(data) // 2])


def _missing(p):
    os.remove(p)


def _oversized(p):  # 200 bytes claiming 745 GiB
    open(p, "wb").write(_npy_header("<f8", (100_000_000_000,)).ljust(200, b"\0"))


def _object_dtype(p):
    import pickle
    payload = pickle.dumps(["would need pickle"])
    open(p, "wb").write(_npy_header("|O", (1,)) + payload)


def _garbage(p):
    open(p, "wb").write(b"not a numpy file at all")


def _fifo(p):
    os.remove(p)
    os.mkfifo(p)


def _symlink_outside(p):
    outside = os.path.join(os.path.dirname(os.path.dirname(p)), "elsewhere.npy")
    os.replace(p, outside)
    os.symlink(outside, p)


def _trailing(p):
    open(p, "ab").write(b"\0" * 16)


@pytest.mark.parametrize("damage, why", [
    (_torn, "torn"), (_missing, "missing"), (_oversized, "header claims"),
    (_object_dtype, "pickle"), (_garbage, "corrupt"), (_fifo, "not a regular file"),
    (_symlink_outside, "not a regular file"), (_trailing, "trailing data"),
])
def test_a_damaged_value_loads_as_none_with_one_warning(tmp_path, damage, why):
    path = tmp_path / "t.jsonl"
    folder, key = _small_full_trace(path)
    damage(os.path.join(folder, key + ".npy"))
    trace, warned = _load_warned(path)
    assert _inc_value(trace) is None
    assert len(warned) == 1, warned
    assert f"{key}.npy" in warned[0] and why in warned[0]
    others = [s.value for e in trace if type(e) is ev.OpEnd and e.op == "double"
              for s in e.outputs]
    assert others[0] is not None  # the rest still loads


def test_unreferenced_files_are_never_opened(tmp_path):
    path = tmp_path / "t.jsonl"
    folder, key = _small_full_trace(path)
    os.mkfifo(os.path.join(folder, "999-out0.npy"))  # opening it would block for ever
    open(os.path.join(folder, "998-out0.npy"), "wb").write(_npy_header("<f8", (10**11,)))
    open(os.path.join(folder, ".12-out0.npy.tmp"), "wb").write(b"half")
    trace, warned = _load_warned(path)
    assert warned == []
    planted = {"999-out0.npy", "998-out0.npy"}   # by name: real keys' seqs may start 99
    assert set(trace.values) == {k[:-4] for k in os.listdir(folder)
                                 if k.endswith(".npy") and k not in planted}
    np.testing.assert_array_equal(_inc_value(trace), np.arange(1000, dtype=np.float32) * 2 + 1)


def test_value_files_are_written_under_a_temporary_name_first(tmp_path, monkeypatch):
    renames = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append((a, b)), real(a, b))[1])
    path = tmp_path / "t.jsonl"
    _small_full_trace(path)
    npy = [(a, b) for a, b in renames if b.endswith(".npy")]
    assert len(npy) == 4 and all(a.endswith(".tmp") and os.path.dirname(a) == os.path.dirname(b)
                                 for a, b in npy)


def test_a_torn_last_line_is_skipped_and_the_rest_loads(tmp_path):
    path = tmp_path / "t.jsonl"
    _small_full_trace(path)
    data = path.read_bytes()
    path.write_bytes(data[:-7])
    with pytest.warns(RuntimeWarning, match=r"t.jsonl:\d+: skipped a truncated last line"):
        trace = tf.load_trace(path)
    assert type(trace[-1]) is not ev.RunEnd and _inc_value(trace) is not None


def test_a_bad_line_in_the_middle_is_an_error_naming_it(tmp_path):
    path = tmp_path / "t.jsonl"
    _small_full_trace(path)
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2][:-9] + "\n"
    path.write_text("".join(lines))
    with pytest.raises(TraceFormatError, match=r"t.jsonl:3: malformed trace line"):
        tf.load_trace(path)
