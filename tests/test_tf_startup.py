"""TensorFlow's C++ start-up lines are held back at import (``--tf``, replay), whatever
the CPU; every other line written to stderr meanwhile still reaches it, in order."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from pyfunc_debug.tf_startup import chatter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# as TensorFlow 2.21 prints them on an AVX-512 CPU, whatever TF_CPP_MIN_LOG_LEVEL says
PREAMBLE = (b"WARNING: All log messages before absl::InitializeLog() is called are written "
            b"to STDERR")
ONEDNN = (b"I0000 00:00:1795870992.767837    6686 port.cc:153] oneDNN custom operations are "
          b"on. You may see slightly different numerical results")
WARN = b"W1128 13:02:11.123456    6686 cuda_executor.cc:1228] could not open file"
ERROR = b"E0000 00:00:1795870992.806259    6686 cuda_dnn.cc:8310] Unable to register cuDNN"


def test_lines_below_the_level_are_chatter_and_others_are_not():
    assert chatter(PREAMBLE, 2) and chatter(ONEDNN, 2) and chatter(WARN, 2)
    assert not chatter(ERROR, 2) and chatter(ERROR, 3)
    assert chatter(ONEDNN, 1) and not chatter(WARN, 1)
    assert not any(chatter(line, 0) for line in (PREAMBLE, ONEDNN, WARN, ERROR))
    assert not chatter(b"UserWarning: something of the user's", 3)
    assert not chatter(b"F0000 00:00:1.5 1 x.cc:1] fatal", 3)


NOISY = f"""
    import os, sys
    os.write(2, {PREAMBLE!r} + b"\\n" + {ONEDNN!r} + b"\\n")
    print("a line of the user's", file=sys.stderr, flush=True)
    os.write(2, {ERROR!r} + b"\\n" + {PREAMBLE!r} + b"\\n" + {ONEDNN!r} + b"\\nlast")
"""


def _import_noisy(tmp_path, level):
    (tmp_path / "noisy.py").write_text(textwrap.dedent(NOISY))
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    if level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = level
    code = ("from pyfunc_debug.tf_startup import import_quietly; import sys; "
            "import_quietly('noisy'); print('after', file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stderr.decode().splitlines()


@pytest.mark.parametrize("level", [None, "2"])   # unset: --tf's default, 2
def test_an_import_at_level_2_keeps_every_line_but_the_chatter(tmp_path, level):
    assert _import_noisy(tmp_path, level) == ["a line of the user's", ERROR.decode(),
                                              "lastafter"]   # an unended line kept as it was


def test_an_import_at_level_0_keeps_everything(tmp_path):
    lines = _import_noisy(tmp_path, "0")
    assert lines == [PREAMBLE.decode(), ONEDNN.decode(), "a line of the user's",
                     ERROR.decode(), PREAMBLE.decode(), ONEDNN.decode(), "lastafter"]
