"""``s`` and ``r`` in ``pyfunc-debug view``: replay the selected op's captured faulty call.

Both run ``pyfunc-debug replay`` in another process, so the user's module is
imported there (an explicit key press), never in the viewer: ``s`` suspends
the UI and runs it with ``--pdb`` in the real terminal, as the live app
suspends for pdb, and comes back when pdb ends; ``r`` runs it in the
background with the current source and shows its verdict ("fixed: 0 NaN, was
64") and the comparison in the log. The call is the selected op's captured
call in the run at the cursor (or its latest one before it).
"""
from __future__ import annotations

import os
import subprocess
import sys

from pyfunc_debug import events as ev
from pyfunc_debug.trace.faults import load_faults

__all__ = ["CapturedCalls", "captured_note", "replay_under_pdb", "rerun"]


class CapturedCalls:
    """The trace's captured calls (read once, when first asked for)."""

    def __init__(self, path: str):
        self.path = path
        self._calls = None

    @property
    def calls(self) -> list:
        if self._calls is None:
            try:
                self._calls = load_faults(self.path)[1]
            except ValueError:
                self._calls = []
        return self._calls

    def command(self, op, run_id, *extra):
        """(argv of the replay of ``op``'s call in run ``run_id``, None) or (None, why not)."""
        if not op:
            return None, "select an op first"
        mine = [c for c in self.calls if c["op"] == op]
        if not mine:
            why = ("this trace holds no captured inputs: record with --capture fault"
                   if not self.calls else f"op '{op}' has no captured call: its calls ran "
                   "clean (only faulty calls are captured)")
            return None, why
        before = [c for c in mine if run_id is None or c["run_id"] <= run_id]
        record = (before or mine)[-1]
        same = [c for c in mine if c["run_id"] == record["run_id"]]
        k = next(i for i, c in enumerate(same, start=1) if c is record)
        return [sys.executable, "-m", "pyfunc_debug", "replay", self.path, "--op", op,
                "--run", str(record["run_id"]), "--call", str(k), *extra], None


def _target(app):
    """(selected op, id of the run at the cursor) of a ``ReplayApp``."""
    from .widgets.op_list import OpList
    run_id = None
    for e in reversed(app.events[:app.position]):
        if type(e) is ev.RunStart:
            run_id = e.run_id
            break
    if run_id is None:
        run_id = next((e.run_id for e in app.events[app.position:] if getattr(e, "run_id", None)),
                      None)
    return app.query_one(OpList).selected, run_id


def _calls(app) -> CapturedCalls:
    calls = getattr(app, "_pfd_captured", None)
    if calls is None:
        calls = app._pfd_captured = CapturedCalls(app.path)
    return calls


def captured_note(app, op: str) -> str:
    """What the inspector says of ``op`` when the trace captured a faulty call of it in the
    run at the cursor (its values are in the trace's fault files, not in its events)."""
    run_id = _target(app)[1]
    if not any(c["op"] == op and c["run_id"] == run_id for c in _calls(app).calls):
        return ""
    return ("this faulty call's inputs were captured: s replays it under pdb, r re-runs it "
            "with the current source")


def replay_under_pdb(app) -> None:
    """``s``: the call under pdb in the real terminal; the view comes back afterwards."""
    argv, why = _calls(app).command(*_target(app), "--pdb")
    if argv is None:
        app.notify(why)
        return
    try:
        with app.suspend():
            print(f"pyfunc-debug view: {' '.join(argv[3:])} (the view comes back when it "
                  "ends)", flush=True)
            subprocess.run(argv)
    except Exception as e:  # noqa: BLE001 - Textual's SuspendNotSupported (no terminal)
        app.notify(f"cannot open pdb here ({type(e).__name__}): run "
                   f"pyfunc-debug {' '.join(argv[3:])} in a terminal")
        return
    app.refresh()


def rerun(app) -> None:
    """``r``: the call again with the current source, its verdict beside the recording."""
    argv, why = _calls(app).command(*_target(app))
    if argv is None:
        app.notify(why)
        return
    app.notify(f"re-running op '{argv[6]}' of run {argv[8]}…", timeout=3)
    from .widgets.event_log import EventLog
    columns = app.query_one(EventLog).scrollable_content_region.width   # the table fits
    app.run_worker(lambda: _rerun(app, argv, columns), thread=True, exclusive=True,
                   group="rerun")


def _rerun(app, argv, columns: int) -> None:
    try:
        env = dict(os.environ, COLUMNS=str(max(columns, 40)))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL, env=env)
        lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
        verdict = next((ln for ln in reversed(done.stdout.splitlines()) if ln.strip()),
                       lines[-1] if lines else f"replay exited with status {done.returncode}")
        if done.returncode == 2:   # it could not replay: its one line says why
            verdict = lines[-1] if lines else verdict
    except (OSError, subprocess.TimeoutExpired) as e:
        lines, verdict = [], f"replay failed: {e}"
    app.call_from_thread(_show, app, argv, lines, verdict)


def _show(app, argv, lines, verdict) -> None:
    from .widgets.event_log import EventLog
    app.query_one(EventLog).add([f"── re-run of op '{argv[6]}' (run {argv[8]}) with the current "
                                 "source ──", *lines])
    app.last_rerun = verdict
    app.notify(verdict, timeout=10)
