"""Load a recorded script's definitions without running the program it is.

A script run as ``__main__`` often has no ``if __name__ == "__main__":`` guard:
its top level *is* the program (build a graph, train for hours). Importing it to
find one function would run all of that again. So the script's source is parsed
and only what the replayed function can need is executed, in source order:

- every ``import``, ``def`` and ``class`` (cheap, and what functions refer to);
- an assignment (``=``, ``+=``, annotated) only when it binds a name the function
  reads, directly or through the functions, classes and values it reads in turn;
- ``if``/``try``/``with`` blocks keep the same rule inside them (their test and
  context expressions run only if something inside is kept);
  ``if __name__ == "__main__":`` is skipped whole.

Everything else (calls, loops, ``with Session() as s: s.run(...)``) is skipped,
and ``skipped`` says where, so the user knows what did not run. A global the
function needs that only a skipped statement makes is a ``NameError`` in the
replay, which names it.
"""
from __future__ import annotations

import ast
import sys
import types

__all__ = ["load_definitions"]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)
_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


def _reads(node) -> set:
    """Every name ``node`` reads (an over-approximation: nested scopes included)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)} | {
        name for n in ast.walk(node) if isinstance(n, (ast.Global, ast.Nonlocal))
        for name in n.names}


def _binds(stmt) -> set:
    if isinstance(stmt, _DEFS):
        return {stmt.name}
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    else:
        return set()
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _is_main_guard(stmt) -> bool:
    if not isinstance(stmt, ast.If):
        return False
    names = {n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}
    consts = {n.value for n in ast.walk(stmt.test) if isinstance(n, ast.Constant)}
    return "__name__" in names and "__main__" in consts


def _flat(body):
    """Top-level statements, looking into if/try/with blocks (not the main guard)."""
    for stmt in body:
        if _is_main_guard(stmt):
            continue
        if isinstance(stmt, (ast.If, ast.Try, ast.With)):
            for part in ("body", "orelse", "finalbody"):
                yield from _flat(getattr(stmt, part, []))
            for handler in getattr(stmt, "handlers", []):
                yield from _flat(handler.body)
        else:
            yield stmt


def _needed(tree, qualname: str) -> set:
    """The top-level names the function ``qualname`` needs, transitively."""
    stmts = list(_flat(tree.body))
    first = qualname.split(".")[0]
    need, todo = set(), [first]
    while todo:
        name = todo.pop()
        if name in need:
            continue
        need.add(name)
        for stmt in stmts:
            if name in _binds(stmt):
                todo.extend(_reads(stmt) - need)
    return need


def _keep(body, need: set, skipped: list) -> list:
    kept = []
    for stmt in body:
        if _is_main_guard(stmt):
            skipped.append(stmt.lineno)
        elif isinstance(stmt, _IMPORTS + _DEFS):
            kept.append(stmt)
        elif isinstance(stmt, _ASSIGNS):
            if _binds(stmt) & need:
                kept.append(stmt)
            else:
                skipped.append(stmt.lineno)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            inner = _block(stmt, need, skipped)
            if inner is not None:
                kept.append(inner)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            kept.append(stmt)   # a docstring
        elif not isinstance(stmt, ast.Pass):
            skipped.append(stmt.lineno)
    return kept


def _block(stmt, need: set, skipped: list):
    """``stmt`` (if/try/with) with its bodies filtered, or None when nothing is kept."""
    mark = len(skipped)
    parts = {}
    for part in ("body", "orelse", "finalbody"):
        if hasattr(stmt, part):
            parts[part] = _keep(getattr(stmt, part), need, skipped)
    handlers = [ast.ExceptHandler(type=h.type, name=h.name,
                                  body=_keep(h.body, need, skipped) or [ast.Pass()])
                for h in getattr(stmt, "handlers", [])]
    if not any(parts.values()) and not any(
            not isinstance(b, ast.Pass) for h in handlers for b in h.body):
        del skipped[mark:]
        skipped.append(stmt.lineno)
        return None
    new = type(stmt)(**{f: getattr(stmt, f) for f in stmt._fields})
    for part, kept in parts.items():
        setattr(new, part, kept or ([ast.Pass()] if part == "body" else []))
    if handlers:
        new.handlers = handlers
    return ast.copy_location(new, stmt)


def load_definitions(file: str, qualname: str, module_name: str):
    """The script at ``file`` as module ``module_name``, with only the statements that
    ``qualname`` can need executed; returns ``(module, skipped_lines)``."""
    with open(file, "rb") as f:
        source = f.read()
    tree = ast.parse(source, filename=file)
    skipped: list = []
    tree.body = _keep(tree.body, _needed(tree, qualname), skipped)
    ast.fix_missing_locations(tree)
    mod = types.ModuleType(module_name)
    mod.__file__ = file
    sys.modules[module_name] = mod
    try:
        exec(compile(tree, file, "exec"), mod.__dict__)   # line numbers stay the file's
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return mod, sorted(set(skipped))
