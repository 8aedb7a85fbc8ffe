"""The package's rooms, checked from its imports: each room imports only the rooms below it,
no two modules import each other (directly or round a circle, at module level or inside a
function), and no two modules share a name.

The order is the pipeline's (docs/DESIGN.md draws it): the error classes at the base,
then the engine, the language, a request's stages (``request/``: what was asked and
where; ``plan/``: the computation table and its kernels; ``evaluation/``: running a plan
into results), the one executor (it names the applications in its table and imports one
when a request asks for it, as the CLI's declaration names its command bodies), the
applications (formulas, uncertainty, graph, fields), output, plot, the library's entry
points, the front ends and the demo that runs them. A lazy import (inside a function)
counts for the order too: it still makes the importer depend on the imported room.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import gradcli

PACKAGE = Path(gradcli.__file__).parent

#: bottom to top; a module may import its own room and the rooms before it
ROOMS = ["_version", "support", "errors", "engine", "lang", "request", "plan", "evaluation",
         "execute", "formulas", "uncertainty", "graph", "fields", "output", "plot", "api", "cli",
         "demo",
         "__main__", "__init__"]


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _target(name: str) -> str:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module-level imports, every import) of each module, as gradcli module names."""
    top: dict[str, set[str]] = defaultdict(set)
    every: dict[str, set[str]] = defaultdict(set)
    for module, (path, is_package) in MODULES.items():
        def visit(node: ast.AST, at_top: bool, module: str = module,
                  is_package: bool = is_package) -> None:
            for child in ast.iter_child_nodes(node):
                here = at_top and not isinstance(child, (ast.FunctionDef,
                                                         ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    continue  # annotations only: never imported at run time
                targets = []
                if isinstance(child, ast.Import):
                    targets = [a.name for a in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        parts = module.split(".")[: len(module.split(".")) - child.level
                                                  + (1 if is_package else 0)]
                        base = ".".join([*parts, *([base] if base else [])])
                    targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                               for a in child.names]
                for name in targets:
                    if name.startswith("gradcli"):
                        every[module].add(_target(name))
                        if here:
                            top[module].add(_target(name))
                visit(child, here)
        visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return top, every


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_room_has_its_place():
    rooms = {p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir()
             if p.suffix == ".py" or (p.is_dir() and any(p.glob("*.py")))}
    assert rooms == set(ROOMS)


def test_rooms_import_only_the_rooms_below():
    _, every = _imports()
    rank = {room: i for i, room in enumerate(ROOMS)}
    upward = sorted(f"{m} -> {t}" for m, targets in every.items() for t in targets
                    if rank[_room(t)] > rank[_room(m)])
    assert upward == []


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def strongly_connect(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w == v:
                continue
            if w not in index:
                strongly_connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            circle = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                circle.append(w)
                if w == v:
                    break
            if len(circle) > 1:
                circles.append(sorted(circle))

    for module in MODULES:
        if module not in index:
            strongly_connect(module)
    return circles


def test_no_import_cycle_between_modules():
    # every import counts, at module level or inside a function: the engine's halves and
    # Tensor meet through core.install, not through imports both ways
    top, every = _imports()
    assert _circles(top) == []
    assert _circles(every) == []


def test_no_two_modules_share_a_name():
    by_name: dict[str, list[str]] = defaultdict(list)
    for module in MODULES:
        if module != "gradcli":
            by_name[module.rpartition(".")[2]].append(module)
    assert {name: found for name, found in by_name.items() if len(found) > 1} == {}


def test_the_checks_see_what_they_look_for():
    # not vacuous: the engine's modules import each other, and a package and a module
    # are both found
    top, every = _imports()
    assert "gradcli.engine.core" in top["gradcli.engine.backward"]
    assert "gradcli.cli.main" in every["gradcli"]
    assert {"gradcli.lang", "gradcli.lang.parser"} <= set(MODULES)
