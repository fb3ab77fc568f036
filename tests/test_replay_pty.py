"""``replay --pdb`` / ``--post-mortem`` in a real pseudo-terminal: pdb with the recorded
arguments in scope."""
from __future__ import annotations

import os
import re
import sys

import pytest

pexpect = pytest.importorskip("pexpect")

from test_replay import recorded, _cli  # noqa: E402,F401 - the recorded trace fixture
from test_tui_e2e import ANSI, Screen  # noqa: E402

PROMPT = r"\((Pdb\+\+|Pdb)\)"


def _spawn(args, cwd):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, HOME=str(cwd), TERM="xterm-256color", PDBPP_COLORS="0",
               PYTHONPATH=root, PYTHONWARNINGS="ignore", COLUMNS="120", LINES="40")
    return pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", *args], env=env, cwd=str(cwd),
                         dimensions=(40, 120), encoding="utf-8", timeout=60)


def test_replay_pdb_stops_at_the_first_line_with_the_recorded_argument(recorded):  # noqa: F811
    child = _spawn(["replay", "t.jsonl", "--op", "lookup", "--pdb"], recorded)
    screen = Screen(child)
    screen.wait_for(PROMPT)
    assert re.search(r"table = \{0: .a.\}", screen.fresh)   # the function's first line
    screen.send("p x.tolist()\r")
    screen.wait_for(r"\[0\.0, 1\.0, 2\.0\]")                   # the recorded input
    screen.send("c\r")
    screen.wait_for(r"reproduced: KeyError at prog\.py:\d+, as recorded")
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 1


def test_replay_post_mortem_opens_at_the_raising_frame(recorded):  # noqa: F811
    child = _spawn(["replay", "t.jsonl", "--op", "lookup", "--post-mortem"], recorded)
    screen = Screen(child)
    screen.wait_for(PROMPT)
    assert "KeyError: 2" in screen.fresh
    screen.send("p table, int(x[-1])\r")
    screen.wait_for(r"\(\{0: 'a'\}, 2\)")                      # the raising frame's locals
    screen.send("q\r")
    child.expect(pexpect.EOF, timeout=30)
    out = ANSI.sub("", child.before or "")
    child.close()
    assert child.exitstatus == 1 and "Traceback" not in out.split("reproduced")[-1]
