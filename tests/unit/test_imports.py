"""The import contract, read from the source (every import statement, also those inside a
function): ``core/`` never imports ``api/``; no two packages import each other, directly or
through others; the leaf modules import nothing of cronledger (docs/architecture.md, "Layers").

A package here is ``core.<name>`` or ``api.<name>`` (a sub-package or a module of its own);
imports inside one package do not count. A cycle is reported with one import of each of its
edges, ``file:line -> module``, so the loop can be cut where it is.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("core", "api")
# Imported by packages all over core; each imports nothing of ours.
LEAVES = ("core/coerce.py", "core/durations.py", "core/reasons.py", "core/tokens.py",
          "core/clock.py", "core/actor.py", "core/version.py", "core/job_definition.py",
          "core/rows.py")

Imports = dict[str, dict[str, list[str]]]  # package -> imported package -> ["file:line -> mod"]


def _module(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of ``core``/``api`` in ``path``, relative ones
    resolved."""
    module = _module(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = _from_names(node, package, root)
        else:
            continue
        found += [(node.lineno, name) for name in names if name.split(".")[0] in OURS]
    return found


def _from_names(node: ast.ImportFrom, package: str, root: Path) -> list[str]:
    """The modules ``from P import N`` reaches: ``P.N`` where that is a module (file or
    package) in the tree, else ``P``; a relative ``P`` is resolved by its level."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        base = ".".join([*parts[:len(parts) - node.level + 1], *([base] if base else [])])
    names = []
    for alias in node.names:
        candidate = root.joinpath(*f"{base}.{alias.name}".split("."))
        is_module = candidate.with_suffix(".py").is_file() or (candidate / "__init__.py").is_file()
        names.append(f"{base}.{alias.name}" if is_module else base)
    return list(dict.fromkeys(names))


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def package_imports(root: Path = ROOT) -> Imports:
    """Which package imports which, with the imports that do it."""
    edges: Imports = defaultdict(lambda: defaultdict(list))
    for top in OURS:
        for path in sorted((root / top).rglob("*.py")):
            source = package_of(_module(path, root))
            for line, module in imported_modules(path, root):
                target = package_of(module)
                if target != source:
                    edges[source][target].append(
                        f"{path.relative_to(root)}:{line} -> {module}")
    return edges


def cycles(edges: Imports) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _described(edges: Imports, component: list[str]) -> list[str]:
    return [f"{a} -> {b}: {edges[a][b][0]}" for a in component for b in component
            if b in edges.get(a, {})]


@cache
def _our_imports() -> Imports:
    """:func:`package_imports` of the repository, scanned once for the tests below."""
    return package_imports()


def test_core_never_imports_api() -> None:
    edges = _our_imports()
    wrong = [line for source, targets in edges.items() if source.startswith("core")
             for target, lines in targets.items() if target.startswith("api") for line in lines]
    assert wrong == []


def test_no_import_cycle_between_packages() -> None:
    edges = _our_imports()
    assert len(edges) > 30, sorted(edges)  # the scan found the packages
    assert [_described(edges, c) for c in cycles(edges)] == []


@pytest.mark.parametrize("leaf", LEAVES)
def test_leaf_modules_import_nothing_of_ours(leaf: str) -> None:
    assert imported_modules(ROOT / leaf) == []


def test_the_scan_finds_a_cycle(tmp_path: Path) -> None:
    for name, text in {"core/a/__init__.py": "", "core/a/x.py": "from core.b import y\n",
                       "core/b/__init__.py": "", "core/b/y.py": "def f():\n    from ..a import x\n",
                       "core/c.py": "import core.a.x\n", "api/__init__.py": ""}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    edges = package_imports(tmp_path)
    assert cycles(edges) == [["core.a", "core.b"]]
    assert _described(edges, ["core.a", "core.b"]) == [
        "core.a -> core.b: core/a/x.py:1 -> core.b.y",
        "core.b -> core.a: core/b/y.py:2 -> core.a.x"]


@pytest.mark.parametrize("b_imports", ["from core.a import x", "from .a import x",
                                       "from core import a", "from . import a"])
def test_the_scan_sees_a_module_imported_from_its_package(tmp_path: Path, b_imports: str) -> None:
    """``from core import b`` is an import of the module ``core.b``, not of ``core``; so is
    ``from .. import b``. Without the import back from ``core.b`` there is no cycle."""
    tree = {"core/__init__.py": "", "core/a/__init__.py": "",
            "core/a/x.py": "def f():\n    from .. import b\n", "core/b.py": b_imports + "\n",
            "api/__init__.py": ""}
    for name, text in tree.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    edges = package_imports(tmp_path)
    assert cycles(edges) == [["core.a", "core.b"]]
    assert edges["core.a"]["core.b"] == ["core/a/x.py:2 -> core.b"]
    (tmp_path / "core/b.py").write_text("from core import version\n")
    assert cycles(package_imports(tmp_path)) == []


def test_the_client_imports_nothing_of_the_server() -> None:
    """``api/client/`` (the Python client) runs in the user's job: it may import only itself,
    the standard library and httpx (docs/architecture.md, "Layers")."""
    files = sorted((ROOT / "api" / "client").rglob("*.py"))
    assert files
    outside = {str(f.relative_to(ROOT)): [(line, name) for line, name in imported_modules(f)
                                          if name.split(".")[:2] != ["api", "client"]]
               for f in files}
    assert outside == {str(f.relative_to(ROOT)): [] for f in files}
