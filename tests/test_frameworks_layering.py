"""Only the adapters import TensorFlow or JAX (SPEC §10): not ``import pyfunc_debug``, not
the command line, not a run without ``--tf``/``--jax``; a missing framework is a usage
error (exit 2) naming the extra to install."""
from __future__ import annotations

import subprocess
import sys
import textwrap

FRAMEWORKS = ("tensorflow", "jax", "jaxlib", "keras")


def _run(code: str, cwd=None):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_core_cli_and_a_plain_run_do_not_import_the_frameworks(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("import pyfunc_debug as tf\nprint(tf.constant(1.0).numpy())\n")
    result = _run(f"""
        import sys, io
        import pyfunc_debug, pyfunc_debug.cli, pyfunc_debug.debug, pyfunc_debug.external_calls
        from pyfunc_debug.cli import main
        sys.stdin = io.StringIO("")
        status = main(["run", "--console", {str(script)!r}])
        bad = [m for m in sys.modules if m.split(".")[0] in {FRAMEWORKS!r}]
        print("loaded:", bad)
        sys.exit(status or (1 if bad else 0))
    """)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "loaded: []" in result.stdout


def test_a_missing_framework_is_a_usage_error(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("print('ran')\n")
    result = _run(f"""
        import sys
        sys.modules["tensorflow"] = None      # as if the extra were not installed
        from pyfunc_debug.cli import main
        sys.exit(main(["run", "--tf", "--console", {str(script)!r}]))
    """)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--tf needs tensorflow" in result.stderr
    assert "pip install 'pyfunc-debug[tensorflow]'" in result.stderr
    assert "ran" not in result.stdout
