"""Package layout only (metadata is in pyproject.toml).

The repository keeps ``tui/`` and ``examples/`` at its top level; the wheel installs
them under our own name, so nothing generic (``tui``) lands in a user's site-packages.
"""
from setuptools import find_namespace_packages, find_packages, setup

MOVED = {"pyfunc_debug.tui": "tui", "pyfunc_debug.examples": "examples"}

packages = find_packages(include=["pyfunc_debug", "pyfunc_debug.*"])
for name, folder in MOVED.items():   # namespace: examples/tensorflow holds scripts only
    packages += [name] + [f"{name}.{sub}" for sub in
                          find_namespace_packages(folder, exclude=["*__pycache__*"])]

# the pytest plugin's entry point: a module outside the package, so that pytest start-up in
# an unrelated project imports nothing of ours until a --pfd-* option is used
setup(packages=packages, package_dir=MOVED, py_modules=["pyfunc_debug_pytest"])
