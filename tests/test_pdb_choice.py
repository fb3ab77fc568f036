"""Which pdb a session gets: pdbpp where it works, the standard pdb otherwise, said once.

Installing pyfunc-debug must never break ``pdb`` for other code; a broken pdb
replacement (pdbpp 0.12 on Python 3.13) must not break us either.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from pdb_prompts import PDBPP

# One pdb session in a fresh process; prints what it saw on its last line.
SESSION = textwrap.dedent("""
    import io, sys
    from pyfunc_debug.debug import pdb_choice
    from pyfunc_debug.debug.pdb_bridge import PdbRunner

    def double(x):
        return x * 2

    outs = []
    for _ in range(2):
        out = io.StringIO()
        result = PdbRunner(stdin=io.StringIO("p x\\nc\\n"), stdout=out).step_into(double, (21,))
        outs.append(out.getvalue())
    import pdb
    print(repr(outs))
    print(result, pdb_choice.pdb_class().__module__, pdb.__file__.endswith(("pdb.py",)),
          type(pdb.Pdb).__name__)
""")


def _session(tmp_path, env_extra=None, fakes=None):
    """Run SESSION with ``fakes`` ({module file name: source}) first on sys.path."""
    fake_dir = tmp_path / "fakes"
    fake_dir.mkdir(exist_ok=True)
    for name, source in (fakes or {}).items():
        (fake_dir / name).write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(fake_dir)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.update(env_extra or {})
    result = subprocess.run([sys.executable, "-c", SESSION], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    *_, outs, last = result.stdout.strip().splitlines()
    return eval(outs), last.split()  # noqa: S307 (our own repr)


def test_a_broken_pdb_replacement_falls_back_to_the_standard_pdb_and_says_so_once(tmp_path):
    # what pdbpp 0.12's hijack does on Python 3.13: `import pdb` itself raises
    broken = "raise AttributeError(\"module 'pdb' has no attribute 'itertools'\")\n"
    outs, (result, module, _, meta) = _session(tmp_path, env_extra={"PDBPP_HIJACK_PDB": "0"},
                                               fakes={"pdb.py": broken})
    assert result == "42" and module == "pdb" and meta == "type"
    assert "21" in outs[0] and "21" in outs[1]        # `p x` answered in both sessions
    first, second = outs
    assert "using the standard pdb" in first and "AttributeError" in first
    assert "itertools" in first
    assert "using the standard pdb" not in second     # said once per process


def test_without_pdbpp_the_standard_pdb_is_used_and_the_extra_is_named(tmp_path):
    no_pdbpp = "raise ImportError('No module named pdbpp')\n"
    outs, (result, module, _, _) = _session(tmp_path, env_extra={"PDBPP_HIJACK_PDB": "0"},
                                            fakes={"pdbpp.py": no_pdbpp})
    assert result == "42" and module == "pdb"
    assert "pip install 'pyfunc-debug[pdbpp]'" in outs[0]
    assert "standard pdb" not in outs[1]


@pytest.mark.skipif(not PDBPP, reason="pdbpp is not installed (the [pdbpp] extra)")
def test_pdbpp_with_its_hijack_off_serves_our_sessions_and_leaves_pdb_alone(tmp_path):
    outs, (result, module, _, meta) = _session(tmp_path, env_extra={"PDBPP_HIJACK_PDB": "0"})
    assert result == "42" and module == "pdbpp"
    assert meta == "type"                      # everyone else's pdb is the standard one
    assert "standard pdb" not in outs[0] and "21" in outs[0]


def test_importing_pyfunc_debug_leaves_pdb_as_it_was(tmp_path):
    code = ("import pdb; before = pdb.Pdb; import pyfunc_debug, pyfunc_debug.debug; "
            "import pdb as again; print(again.Pdb is before)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr
