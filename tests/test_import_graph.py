"""No import cycle in the package: every module's imports (at module level or inside a function, where the cycle
between ``cli`` and ``tune`` once hid) form a graph without cycles, and every module imports in a fresh interpreter
in any order."""

import ast
import os
import subprocess
import sys
from typing import Dict, List, Set

PACKAGE = "skrl_like"
ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), PACKAGE)


def package_modules() -> Dict[str, str]:
    """``{dotted module name: file path}`` of every module of the package (a package by its ``__init__``)."""
    modules = {}
    for folder, _, files in os.walk(ROOT):
        for file in files:
            if not file.endswith(".py"):
                continue
            parts = os.path.relpath(os.path.join(folder, file), os.path.dirname(ROOT))[: -len(".py")].split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = os.path.join(folder, file)
    return modules


def imported_modules(name: str, path: str, modules: Dict[str, str]) -> Set[str]:
    """The package's modules that module ``name`` imports anywhere in its file (``from a.b import c`` names the
    module ``a.b.c`` when there is one, else ``a.b``)."""
    is_package = path.endswith("__init__.py")
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        found.update(target for target in targets if target in modules and target != name)
    return found


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_and_nothing_else():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycle():
    modules = package_modules()
    assert f"{PACKAGE}.cli" in modules and f"{PACKAGE}.core.trainer" in modules
    graph = {name: imported_modules(name, path, modules) for name, path in modules.items()}
    assert f"{PACKAGE}.run_description" in graph[f"{PACKAGE}.cli"]  # the graph sees imports inside functions too
    assert cycles(graph) == []


def test_core_does_not_import_utils():
    """Seeding lives in core (re-exported at ``skrl_like.utils.set_seed``): ``core`` never imports ``utils``."""
    modules = package_modules()
    for name, path in modules.items():
        if name.startswith(f"{PACKAGE}.core"):
            imported = imported_modules(name, path, modules)
            assert not [module for module in imported if module.startswith(f"{PACKAGE}.utils")], name


def test_the_command_line_modules_import_first_in_a_fresh_interpreter():
    for first in ("skrl_like.run_description", "skrl_like.cli", "skrl_like.core.trainer", "skrl_like.core.seeding"):
        result = subprocess.run(
            [sys.executable, "-c", f"import {first}; import skrl_like.utils; assert skrl_like.utils.set_seed"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr[-2000:]
