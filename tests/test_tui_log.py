"""What the script prints shows in the UI's event log."""
from __future__ import annotations

import asyncio
import contextlib
import sys
import time

import pytest

from pyfunc_debug.tui.app import PfdApp


@pytest.mark.asyncio
async def test_script_output_appears_in_the_log():
    def target():
        print("hello from the script")
        print("to stderr", file=sys.stderr)
        return 0
    app = PfdApp(target, break_on=(), suspend=contextlib.nullcontext, show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        end = time.monotonic() + 10
        log = app.query_one("#log")
        while not any("to stderr" in line for line in log.lines):
            assert time.monotonic() < end, list(log.lines)
            await pilot.pause(0.05)
        assert "  [stdout] hello from the script" in log.lines
        assert "  [stderr] to stderr" in log.lines
        app.stop_ticking()
    await asyncio.to_thread(app.worker_thread.join, 5)
