"""Runnable example programs, installed as ``pyfunc_debug.examples``.

``pyfunc-debug demo --list`` names them; ``pyfunc-debug demo --example NAME`` runs one
under the debugger. Each is a plain script: ``python examples/nan_hunt.py`` works too.
"""
