"""The prompt of the pdb our sessions get in this environment: pdbpp's where it imports
(the ``[pdbpp]`` extra, Python 3.10-3.12), else the standard pdb's (a default install,
Python 3.13). Tests of a pdb session expect this one, so they hold on every Python."""
from __future__ import annotations

import os
import re
import subprocess
import sys


def pdbpp_works() -> bool:
    """pdbpp imports here (as the debugger's choice of pdb tries it, its hijack off)."""
    probe = subprocess.run([sys.executable, "-c", "import pdbpp"], capture_output=True,
                           env=dict(os.environ, PDBPP_HIJACK_PDB="0"))
    return probe.returncode == 0


PDBPP = pdbpp_works()
PROMPT = "(Pdb++)" if PDBPP else "(Pdb)"
PROMPT_RE = re.escape(PROMPT)
