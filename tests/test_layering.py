"""The core never imports Textual or the TUI (STYLE habit 1)."""
from __future__ import annotations

import subprocess
import sys


def test_core_import_does_not_load_textual():
    code = ("import sys, pyfunc_debug, pyfunc_debug.cli, pyfunc_debug.demo; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'tui')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
