"""Building and running the app for each command: ``demo``, ``run``, ``view``."""
from __future__ import annotations

import os
import sys

from pyfunc_debug import demo
from pyfunc_debug.errors import OpError
from pyfunc_debug.runtime.session import Session
from pyfunc_debug.script import run_script

from .app import PfdApp

__all__ = ["demo_app", "script_app", "view_app", "run_app"]


def demo_target() -> int:
    """The demo's three runs; op errors are shown in the UI, not raised."""
    d = demo.build()
    with Session(graph=d.graph) as sess:
        for feed in demo.batches():
            try:
                sess.run(d.fetches, {d.batch: feed})
            except OpError:
                pass
    return 0


def demo_app(**kw) -> PfdApp:
    kw.setdefault("breaks", ("normalize",))
    kw.setdefault("break_on", ("error", "nan"))
    return PfdApp(demo_target, title="demo: validate → normalize → log_features → scale → loss",
                  **kw)


def script_app(path: str, args: list, breaks=(), break_on=("error",), **kw) -> PfdApp:
    return PfdApp(lambda: run_script(path, args), title=" ".join([path, *args]),
                  breaks=breaks, break_on=break_on, **kw)


def view_app(path: str, **kw):
    from .replay import ReplayApp
    return ReplayApp(path, **kw)


def run_app(app) -> int:
    """Run the app; its exit status. A worker still busy in user code is abandoned."""
    app.run()
    status = app.return_code or 0
    worker = getattr(app, "worker_thread", None)
    if worker is not None and worker.is_alive():
        worker.join(timeout=2)
        if worker.is_alive():  # stuck outside any graph run: we cannot stop it politely
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    return status
