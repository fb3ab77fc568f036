"""An op ended by the user's stop (q in pdb, Ctrl+C) reads as that stop in the log and the
inspector — never as the traceback of our PdbQuit, even when a framework (--tf) wrapped
it in its own error type and kept only its text."""
from __future__ import annotations

from pyfunc_debug import events as ev
from pyfunc_debug.tui.log_text import format_event
from pyfunc_debug.tui.model import RunModel

TF_WRAPPED = (
    "Traceback (most recent call last):\n"
    '  File "/x/pyfunc_debug/external_calls.py", line 180, in call\n'
    "    return func(*args)\n"
    "pyfunc_debug.debug.pdb_bridge.PdbQuit: the run was aborted from pdb (quit) in op "
    "'features/standardize'\n")


def _error(error_type, message, op="features/standardize"):
    return ev.OpError(7, 1, 0, 1, op, "EagerPyFunc", None, error_type, message)


def _shown(e):
    model = RunModel()
    model.apply(ev.RunStart(1, 1, 0, 1, "session", "", ("features/standardize",)))
    model.apply(e)
    row = model.rows[e.op]
    return format_event(e, False), row


def test_a_framework_wrapped_pdb_quit_reads_as_the_abort():
    line, row = _shown(_error("UnknownError", TF_WRAPPED))
    assert "ABORTED features/standardize" in line
    assert line.endswith("run aborted at op 'features/standardize' (q in pdb)")
    assert row.status == "aborted" and row.error == \
        "run aborted at op 'features/standardize' (q in pdb)"
    assert "PdbQuit" not in line + row.error and "Traceback" not in line + row.error


def test_a_cancelled_sibling_names_the_op_the_run_was_aborted_at():
    msg = "run aborted from the debugger at op 'features/standardize': stopped"
    line, row = _shown(_error("CancelledError", msg, op="other"))
    assert row.error == "run aborted at op 'features/standardize'" and row.status == "aborted"


def test_a_real_error_keeps_its_own_line():
    line, row = _shown(_error("KeyError", "Traceback (most recent call last):\n  x\nKeyError: 2"))
    assert "ERROR features/standardize" in line and line.endswith("KeyError: 2")
    assert row.status == "error" and "Traceback" in row.error   # the inspector shows it whole


def test_a_callbacks_whole_error_shows_the_users_frames_not_ours():
    """At a TF/JAX callback's error the inspector's "whole error" began with our wrapper's
    frame (external_calls.py, the line calling the user's function)."""
    from pyfunc_debug.debug.pdb_bridge import _call_wrapped   # ours: it calls the function
    from pyfunc_debug.tui.failure_text import error_text

    def users_function(x):
        raise ValueError(f"bad {x}")
    try:
        _call_wrapped(users_function, 3)
    except ValueError as e:
        caught = e
    text = error_text(caught)
    assert "pdb_bridge.py" not in text and "pyfunc_debug" + "/debug" not in text
    assert "in users_function" in text and text.endswith("ValueError: bad 3")
    assert caught.__traceback__.tb_next is not None   # the exception itself is untouched


def test_the_exit_summary_names_a_failed_ops_source_as_the_ui_showed_it(monkeypatch, tmp_path):
    """The UI says "created at examples/x.py:5" (relative to the working directory); the
    summary printed after it said the whole path."""
    import os

    from pyfunc_debug.tui.exit_summary import exit_summary
    monkeypatch.chdir(tmp_path)
    model = RunModel()
    source = os.path.join(str(tmp_path), "examples", "x.py") + ":5"
    model.apply(ev.RunStart(1, 1, 0, 1, "session", "", ("f",), (), (), ("PyFunc",)))
    model.apply(ev.OpStart(2, 1, 1, 1, "f", "PyFunc", None, source, ()))
    model.apply(ev.OpError(3, 1, 2, 1, "f", "PyFunc", None, "ValueError", "ValueError: bad",
                           source, 1))
    text = exit_summary("x.py", model, 1)
    assert "(PyFunc, examples/x.py:5) failed" in text, text
