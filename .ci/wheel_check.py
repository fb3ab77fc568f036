"""Run from a venv where only the built wheel is installed (no extras, no checkout on
sys.path): the command answers, and the UI opens headless on the demo and pauses.

A plain ``pip install .`` must give a working UI: this fails if a runtime file
(a style sheet) is not package data.
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time


def main() -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    os.chdir(os.path.dirname(here))  # not the checkout: imports come from the wheel
    import pyfunc_debug.tui as tui
    import pyfunc_debug
    for mod in (tui, pyfunc_debug):
        assert "site-packages" in mod.__file__, f"{mod.__name__} imported from {mod.__file__}"
    exe = os.path.join(os.path.dirname(sys.executable), "pyfunc-debug")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("pyfunc-debug "), out
    asyncio.run(_demo_pauses())
    print("wheel check: CLI and headless UI work from the installed wheel")
    return 0


async def _demo_pauses() -> None:
    from pyfunc_debug.tui.launch import demo_app
    from pyfunc_debug.tui.widgets.status_bar import StatusBar
    app = demo_app(show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 30
        while app.pause is None and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert app.pause is not None and app.pause.op_name == "normalize", "no pause"
        status = str(app.query_one(StatusBar).render())
        assert "PAUSED" in status, status
        await pilot.press("q")
        await pilot.pause(0.2)


if __name__ == "__main__":
    sys.exit(main())
