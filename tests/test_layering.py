"""The core never imports Textual or the TUI (STYLE habit 1)."""
from __future__ import annotations

import subprocess
import sys


def test_core_import_does_not_load_textual():
    code = ("import sys, pyfunc_debug, pyfunc_debug.cli, pyfunc_debug.demo; "
            "bad = [m for m in sys.modules if m.split('.')[0] == 'textual' or m.startswith('pyfunc_debug.tui')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# -- the engine's layer order ----------------------------------------------------------
# Every import inside pyfunc_debug, module-level or inside a function, counts as an arrow.

import ast  # noqa: E402
import pathlib  # noqa: E402

PKG = pathlib.Path(__file__).resolve().parent.parent / "pyfunc_debug"
BASE = {"errors", "dtypes", "nest", "events", "trace.summary", "source_text"}
# a module in the key folder may import only from these folders/modules (and its own folder)
LAYERS = {
    "graph": BASE,
    "eager": BASE | {"graph"},
    "ops": BASE | {"graph", "eager"},
    "runtime": BASE | {"graph", "eager", "ops"},
    "distributed": BASE | {"graph", "eager", "ops", "runtime", "debug", "remote"},
}


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: pathlib.Path) -> set:
    """Package-relative names of the pyfunc_debug modules ``path`` imports."""
    me = _module_name(path).split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("pyfunc_debug"):
                target = node.module[len("pyfunc_debug."):] if "." in node.module else ""
            else:
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}" if target else alias.name
                found.add(full if (PKG / (full.replace(".", "/") + ".py")).exists() or
                          (PKG / full.replace(".", "/")).is_dir() else target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pyfunc_debug."):
                    found.add(alias.name[len("pyfunc_debug."):])
    return {f for f in found if f}


def _allowed(target: str, allowed: set) -> bool:
    return any(target == a or target.startswith(a + ".") for a in allowed)


def test_lower_layers_never_import_upward():
    bad = []
    for folder, allowed in LAYERS.items():
        for path in sorted((PKG / folder).glob("*.py")):
            for target in _imports(path):
                if not _allowed(target, allowed | {folder}):
                    bad.append(f"{_module_name(path)} -> {target}")
    assert bad == [], "upward imports: " + ", ".join(bad)


def test_engine_modules_form_no_import_cycle():
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    edges = {m: {t for t in _imports(p) if t in modules and t != m} for m, p in modules.items()}
    edges = {m: {t for t in ts if t != ""} for m, ts in edges.items()}
    state: dict = {}

    def visit(m, trail):
        state[m] = 1
        for t in edges[m]:
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(trail + [m, t]))
            if t not in state:
                visit(t, trail + [m])
        state[m] = 2

    for m in sorted(modules):
        if m not in state and m:
            visit(m, [])


def test_the_core_never_imports_the_ui_package():
    """``pyfunc_debug.tui`` (the repository's tui/ folder) is only reached through the
    CLI's lazy ``importlib`` call: no ``import`` statement in the core names it."""
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [("." * node.level) + (node.module or "")]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for n in names:
                if n.startswith("pyfunc_debug.tui") or n.lstrip(".").split(".")[0] == "tui" \
                        or n.split(".")[0] in ("textual", "rich"):
                    bad.append(f"{_module_name(path)} imports {n}")
    assert bad == []
