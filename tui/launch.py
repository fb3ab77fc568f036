"""Building and running the app for each command: ``demo``, ``run``, ``view``."""
from __future__ import annotations

import os
import sys

from pyfunc_debug import demo
from pyfunc_debug.errors import CancelledError, OpError
from pyfunc_debug.runtime.session import Session
from pyfunc_debug.script import run_program

from .app import PfdApp
from .exit_summary import exit_status, exit_summary

__all__ = ["demo_app", "script_app", "view_app", "run_app", "attach_app"]


def demo_target() -> int:
    """The demo's three runs; op errors are shown in the UI, not raised; an abort (q)
    ends the demo, as it ends a script."""
    d = demo.build()
    with Session(graph=d.graph) as sess:
        for feed in demo.batches():
            try:
                sess.run(d.fetches, {d.batch: feed})
            except CancelledError:
                return 0
            except OpError:
                pass
    return 0


def demo_app(**kw) -> PfdApp:
    kw.setdefault("breaks", ("normalize",))
    kw.setdefault("break_on", ("error", "nan"))
    return PfdApp(demo_target, title="demo: validate → normalize → log_features → scale → loss",
                  **kw)


def script_app(program, breaks=(), break_on=("error",), **kw) -> PfdApp:
    """The app running ``program`` (a ``pyfunc_debug.script.Program``)."""
    return PfdApp(lambda: run_program(program), title=program.title,
                  breaks=breaks, break_on=break_on, **kw)


def attach_app(link, **kw) -> PfdApp:
    """The app live against another process (``link``: a ``remote.client.RemoteLink``):
    its worker waits for that process to end; q detaches."""
    # said first, where it shows at once: no values is not a bug (the inspector says more)
    how = "" if link.streams_values else " with --capture none (no values)"
    title = (f"attached{how} to {link.address} — pid {link.pid}: "
             f"{link.program or 'a Python process'}")
    return PfdApp(link.wait, title=title, breaks=(), break_on=(), link=link, **kw)


def view_app(path: str, **kw):
    from .replay import ReplayApp
    return ReplayApp(path, **kw)


QUIT_GRACE = 2.0   # seconds a quit run gets to reach its next op and abort


def run_app(app) -> int:
    """Run the app; then print how the program ended; its exit status (the program's)."""
    app.run()
    print_again(getattr(getattr(app, "bridge", None), "printed", ()))
    worker = getattr(app, "worker_thread", None)
    if worker is not None and worker.is_alive():
        worker.join(timeout=QUIT_GRACE)
    bridge = getattr(app, "bridge", None)
    if bridge is None:                          # the replay app: nothing ran
        return app.return_code or 0
    interrupted = bridge.interrupted
    unfinished = worker is not None and worker.is_alive()
    result = app.target_status
    status = 130 if interrupted else (1 if unfinished else exit_status(result))
    if isinstance(result, BaseException):
        status = 1
    report = getattr(result, "report", "") or ""
    if isinstance(result, BaseException):
        report = f"pyfunc-debug: internal error: {type(result).__name__}: {result}"
    sys.stdout.flush()
    from pyfunc_debug.debug.breakpoints import unmatched
    notes = unmatched(bridge.link.breakpoints, app.model.types.items()) if not unfinished else ()
    target_status = getattr(bridge.link, "target_status", None)
    print(exit_summary(app.sub_title, app.model, status, report, app.exported,
                       interrupted, unfinished, target_status, notes,
                       detached=bridge.link.remote and target_status is None),
          file=sys.stderr)
    if unfinished:  # stuck outside any graph run: we cannot stop it politely
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


def print_again(printed) -> None:
    """What the script printed while the UI was up, on the terminal now, in order: the UI
    showed it in its log, and its screen is gone."""
    if printed and len(printed) == getattr(printed, "maxlen", None):
        print("pyfunc-debug: the script's earlier output was not kept; its last lines:",
              file=sys.stderr)
    for text, stderr in list(printed):
        stream = sys.stderr if stderr else sys.stdout
        stream.write(text)
        stream.flush()
