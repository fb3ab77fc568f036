"""Which pdb the debugger's sessions use: pdbpp where it works, else the standard pdb.

pdbpp is an opt-in extra (``pip install 'pyfunc-debug[pdbpp]'``): its own ``.pth``
file makes ``import pdb`` give pdbpp in the whole environment, which nobody should
get just by installing us. Three cases, decided once per process on first use:

- ``pdb`` *is* pdbpp (its hijack is on): use it, as every other caller of pdb does;
- ``pdb`` is the standard one but ``import pdbpp`` works (``PDBPP_HIJACK_PDB=0``):
  use pdbpp's class for our sessions only;
- otherwise the standard pdb, and ``note()`` says why once.

A pdb replacement that fails to import (pdbpp 0.12 on Python 3.13:
``module 'pdb' has no attribute 'itertools'``) would make ``import pdb`` raise for
everyone in the process; ``stdlib_pdb()`` then loads the standard library's own
``pdb.py`` in its place, so our package, ``breakpoint()`` and pytest keep working.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig

__all__ = ["pdb_module", "pdb_class", "is_pdbpp", "note", "take_note"]

_chosen: tuple | None = None   # (pdb module, Pdb base class, note or None)
_noted = False


def stdlib_pdb(reason: BaseException):
    """The standard library's pdb, loaded from its file, in place of a broken one."""
    path = os.path.join(sysconfig.get_path("stdlib"), "pdb.py")
    spec = importlib.util.spec_from_file_location("pdb", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["pdb"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop("pdb", None)
        raise
    module._pfd_replaced = f"{type(reason).__name__}: {reason}"
    return module


def _import_pdb():
    try:
        import pdb
        return pdb, None
    except Exception as e:  # a pdb replacement that does not work on this Python
        return stdlib_pdb(e), (f"pdbpp could not load on Python {sys.version.split()[0]} "
                               f"({type(e).__name__}: {e})")


def _choose() -> tuple:
    pdb, broken = _import_pdb()
    if is_pdbpp(pdb.Pdb):
        return pdb, pdb.Pdb, None
    if broken is None:
        try:
            import pdbpp  # installed with its hijack turned off: ours only
            return pdb, pdbpp.Pdb, None
        except ImportError:
            broken = ("pdbpp is not installed; pip install 'pyfunc-debug[pdbpp]' adds it "
                      "(Python 3.10-3.12)")
        except Exception as e:
            broken = f"pdbpp could not load ({type(e).__name__}: {e})"
    return pdb, pdb.Pdb, f"pyfunc-debug: using the standard pdb: {broken}"


def _get() -> tuple:
    global _chosen
    if _chosen is None:
        _chosen = _choose()
    return _chosen


def pdb_module():
    """The ``pdb`` module in use (the standard one when a replacement was broken)."""
    return _get()[0]


def pdb_class() -> type:
    """The Pdb class our sessions derive from: pdbpp's, or the standard one."""
    return _get()[1]


def is_pdbpp(cls) -> bool:
    return getattr(type(cls), "__name__", "") == "PdbMeta"


def note() -> str | None:
    """Why the standard pdb is used (None when pdbpp is)."""
    return _get()[2]


def take_note() -> str | None:
    """``note()`` the first time it is asked for in this process, then None: said once."""
    global _noted
    if _noted:
        return None
    _noted = True
    return note()
