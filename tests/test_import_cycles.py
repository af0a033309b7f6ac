"""No import cycle among gpu_dra's modules (issue 26): a module that imports another, at its top or inside a
function, is above it, and nothing below imports it back. A cycle works only in the import order that happens to
run today, and a function-local import that closes one hides the order it depends on."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from .conftest import ROOT


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom, package: str, modules: set[str]) -> Iterator[str]:
    """The modules of `modules` an import statement names: `from a import b` is module a.b where that is one, else
    a. A package's __init__ is not counted as imported by its submodules' imports: Python runs it first, and a
    package that re-exports its submodules would otherwise be a cycle with each of them."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name in modules)
        return
    base = node.module or ""
    if node.level:  # relative: from the package, up level - 1 packages
        anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    for alias in node.names:
        if f"{base}.{alias.name}" in modules:
            yield f"{base}.{alias.name}"
        elif base in modules:
            yield base


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Each module of `package` (under `root`) -> the modules of the package it imports anywhere in its text:
    module level, inside functions, under `if TYPE_CHECKING`."""
    paths = {_module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}
    modules = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        own_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {imported for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                       if isinstance(node, ast.Import | ast.ImportFrom)
                       for imported in _imported(node, own_package, modules)} - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan's algorithm, iterative), as the path
    a -> b -> ... -> a."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)
    return [_path_around(group, graph) for group in groups]


def _path_around(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """The shortest path from the group's first module back to itself, inside the group."""
    first = min(group)
    paths = {first: [first]}
    queue = [first]
    for node in queue:
        for target in sorted(graph[node] & group):
            if target == first:
                return [*paths[node], first]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    raise AssertionError(f"no cycle through {first}")  # a strongly connected group always has one


def test_gpu_dra_has_no_import_cycle() -> None:
    graph = import_graph(ROOT, "gpu_dra")
    assert len(graph) > 100 and "gpu_dra.cli.main" in graph["gpu_dra.cli"]  # function-local imports are read
    found = [" -> ".join(cycle) for cycle in cycles(graph)]
    assert found == [], "import cycles: " + "; ".join(found)


def test_a_cycle_through_a_function_local_or_relative_import_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .a import A\n")  # a re-export is no cycle
    (package / "sub" / "a.py").write_text("from pkg import b\nA = 1\n")
    (package / "b.py").write_text("def f():\n    from pkg.sub import c\n")
    (package / "sub" / "c.py").write_text("from .a import A\n")
    (package / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import d2\n")
    (package / "d2.py").write_text("import pkg.d\n")
    graph = import_graph(tmp_path, "pkg")
    assert cycles(graph) == [["pkg.b", "pkg.sub.c", "pkg.sub.a", "pkg.b"], ["pkg.d", "pkg.d2", "pkg.d"]]
