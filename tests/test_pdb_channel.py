"""pdb in one place, its terminal in another (``remote.pdb_channel``): what a Dask worker
and its caller use, here between two threads of one process."""
from __future__ import annotations

import io
import threading
from contextlib import closing

from pyfunc_debug.debug.pdb_bridge import PdbQuit, PdbRunner
from pyfunc_debug.remote.pdb_channel import PdbPort, connect, relay
from pyfunc_debug.remote.wire import Channel


def target(x):
    y = x * 2
    return y + 1


def _serve(port, token, outcome, timeout=10.0):
    """The target side on a thread: accept, run ``target(20)`` under pdb, note the result."""
    def run():
        streams = port.accept(token, timeout)
        if streams is None:
            outcome.append("nobody")
            return
        try:
            outcome.append(PdbRunner(streams.stdin, streams.stdout).step_into(target, (20,)))
        except PdbQuit as e:
            outcome.append(e)
        finally:
            streams.close()
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_session_is_relayed_line_by_line_and_ends_when_pdb_does():
    outcome: list = []
    with closing(PdbPort()) as port:
        thread = _serve(port, "secret", outcome)
        typed = io.StringIO("p x\nn\np y\nc\nnot read by anyone\n")
        out = io.StringIO()
        relay(connect(port.address, "secret"), typed, out)
        thread.join(10)
    assert outcome == [41]
    text = out.getvalue()
    assert "target()" in text and "20" in text and "40" in text
    assert typed.readline() == "not read by anyone\n"   # asked for only what pdb read


def test_a_wrong_token_is_turned_away_and_the_right_one_still_gets_in():
    outcome: list = []
    with closing(PdbPort()) as port:
        thread = _serve(port, "secret", outcome)
        wrong = connect(port.address, "guess")
        msg, _ = wrong.receive()
        assert msg == {"t": "refused", "reason": "wrong token"}
        wrong.close()
        relay(connect(port.address, "secret"), io.StringIO("c\n"), io.StringIO())
        thread.join(10)
    assert outcome == [41]


def test_a_caller_that_goes_away_quits_pdb_in_the_target():
    outcome: list = []
    with closing(PdbPort()) as port:
        thread = _serve(port, "secret", outcome)
        ch = connect(port.address, "secret")
        assert ch.receive()[0]["t"] == "pdb_out"   # pdb showed where it stopped ...
        ch.close()                                  # ... and the caller left
        thread.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], PdbQuit)


def test_nobody_connecting_gives_up_after_the_timeout():
    outcome: list = []
    with closing(PdbPort()) as port:
        _serve(port, "secret", outcome, timeout=0.2).join(10)
    assert outcome == ["nobody"]


def test_a_relay_whose_peer_is_gone_returns():
    left, right = __import__("socket").socketpair()
    calls = []

    def alive():
        calls.append(1)
        return False
    relay(Channel(left), io.StringIO(), io.StringIO(), alive=alive)   # no message ever comes
    assert calls
    right.close()


def test_end_of_input_quits_pdb_like_a_local_ctrl_d():
    outcome: list = []
    with closing(PdbPort()) as port:
        thread = _serve(port, "secret", outcome)
        relay(connect(port.address, "secret"), io.StringIO(""), io.StringIO())
        thread.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], PdbQuit)
