"""The project's import graph: no cycles, no private names across modules, a dialect that does not
depend on the cost model.

Every module of the installed package (spatial_dialect/ and the folders pyproject maps into it:
passes/, targets/, tools/) is parsed with `ast`; every import counts, function-local ones
included, except those under `if TYPE_CHECKING:`, which never run (a module may name the class of
a module above it in an annotation).
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "spatial_dialect"


def package_roots() -> dict[str, Path]:
    """Each package name and its folder: the package itself and pyproject's package-dir."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir = config["tool"]["setuptools"].get("package-dir", {})
    roots = {PACKAGE: ROOT / PACKAGE}
    roots.update({name: ROOT / folder for name, folder in package_dir.items()})
    return roots


def project_modules() -> dict[str, Path]:
    """Every module of the project by its dotted name (a package by its __init__.py)."""
    modules: dict[str, Path] = {}
    for package, folder in package_roots().items():
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


@dataclass(frozen=True)
class Import:
    module: str  # the module the statement names (absolute)
    names: tuple[str, ...]  # the names a `from` import takes; () for `import x`
    line: int


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str, path: Path, runtime_only: bool = True) -> Iterator[Import]:
    """The imports of a module, anywhere in it (function bodies too)."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]

    def visit(node: ast.AST) -> Iterator[Import]:
        if runtime_only and isinstance(node, ast.If) and _type_checking(node.test):
            yield from (i for child in node.orelse for i in visit(child))
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield Import(module, tuple(a.name for a in node.names), node.lineno)
        for child in ast.iter_child_nodes(node):
            yield from visit(child)

    yield from visit(tree)


def import_graph(
    modules: Mapping[str, Path], runtime_only: bool = True
) -> dict[str, dict[str, int]]:
    """module -> {project module it imports: line}. `from pkg import sub` imports pkg.sub when
    that is a module, else pkg."""
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges: dict[str, int] = {}
        for imp in imports_of(name, path, runtime_only):
            targets = [f"{imp.module}.{n}" for n in imp.names if f"{imp.module}.{n}" in modules]
            if not targets or len(targets) < len(imp.names):
                targets.append(imp.module)
            for target in targets:
                if target in modules and target != name:
                    edges.setdefault(target, imp.line)
        graph[name] = edges
    return graph


def find_cycle(graph: Mapping[str, Mapping[str, object]]) -> list[str] | None:
    """One cycle of the graph as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for succ in sorted(graph.get(node, {})):
            if state.get(succ) == 1:
                return [*path[path.index(succ) :], succ]
            if succ not in state and (cycle := dfs(succ)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := dfs(node)) is not None:
            return cycle
    return None


# ── The checker's own tests ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("graph", "cycle"),
    [
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {}}, None),
        ({"a": {"b": 1, "c": 1}, "b": {"c": 1}, "c": {}}, None),  # a diamond is no cycle
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}, ["a", "b", "c", "a"]),
        ({"a": {"b": 1}, "b": {"b": 1}}, ["b", "b"]),
        ({"x": {}, "a": {"b": 1}, "b": {"c": 1}, "c": {"b": 1}}, ["b", "c", "b"]),
    ],
)
def test_find_cycle(graph, cycle):
    assert find_cycle(graph) == cycle


def test_imports_are_parsed_everywhere(tmp_path):
    """Function-local and relative imports count; TYPE_CHECKING ones only when asked."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg.b import g\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nfrom . import c\nif TYPE_CHECKING:\n    from .a import f\n"
    )
    (pkg / "c.py").write_text("from .a import _hidden\n")
    modules = {"pkg": pkg / "__init__.py", **{f"pkg.{m}": pkg / f"{m}.py" for m in "abc"}}
    graph = import_graph(modules)
    assert graph == {"pkg": {}, "pkg.a": {"pkg.b": 2}, "pkg.b": {"pkg.c": 2}, "pkg.c": {"pkg.a": 1}}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    assert import_graph(modules, runtime_only=False)["pkg.b"] == {"pkg.c": 2, "pkg.a": 4}
    assert private_imports(modules) == ["pkg.c:1 imports _hidden from pkg.a"]


# ── The project ───────────────────────────────────────────────────────────────────────────────


def private_imports(modules: Mapping[str, Path]) -> list[str]:
    found = []
    for name, path in modules.items():
        for imp in imports_of(name, path, runtime_only=False):
            if imp.module not in modules:
                continue
            for n in imp.names:
                if n.startswith("_") and not n.startswith("__"):
                    found.append(f"{name}:{imp.line} imports {n} from {imp.module}")
    return found


def test_the_project_is_found():
    modules = project_modules()
    for name in (
        PACKAGE,
        f"{PACKAGE}.sp",
        f"{PACKAGE}.sp.program",
        f"{PACKAGE}.passes.tile",
        f"{PACKAGE}.passes.link.matmul",
    ):
        assert name in modules
    assert any(m.startswith(f"{PACKAGE}.targets.") for m in modules)
    assert any(m.startswith(f"{PACKAGE}.tools.") for m in modules)


def test_no_import_cycles():
    cycle = find_cycle(import_graph(project_modules()))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_private_names_across_modules():
    assert private_imports(project_modules()) == []


def test_the_dialect_does_not_import_the_targets():
    modules = project_modules()
    graph = import_graph(modules, runtime_only=False)
    offending = [
        f"{name} imports {target}"
        for name, edges in graph.items()
        for dialect in ("sp", "mesh")
        if name == f"{PACKAGE}.{dialect}" or name.startswith(f"{PACKAGE}.{dialect}.")
        for target in edges
        if target.startswith(f"{PACKAGE}.targets")
    ]
    assert offending == []


# The pass order: link, tile, place, fuse-operands, size-buffers. A pass imports the dialects, the
# targets, the shared modules of passes/ and earlier passes, never a later one, and no pass imports
# the tools. A shared module (what several passes read: phases, target_choice, dram_layout,
# gemm_view, numerics, site_footprint, engine_assignment, stream_plans) imports no pass at all, so
# a pass that imports it cannot reach a later pass through it. Only the pipeline, which runs them
# all, imports every pass.
PASS_ORDER = ["link", "tile", "place", "fuse_operands", "size_buffers"]
RUNS_EVERY_PASS = f"{PACKAGE}.passes.pipeline"


def pass_of(module: str) -> str | None:
    """The pass a module belongs to (`spatial_dialect.passes.link.rows` -> `link`), or None."""
    prefix = f"{PACKAGE}.passes."
    if not module.startswith(prefix):
        return None
    head = module[len(prefix) :].split(".")[0]
    return head if head in PASS_ORDER else None


def shared_pass_modules(modules: Mapping[str, Path]) -> set[str]:
    """The modules of passes/ that belong to no pass: what several passes share (the package's
    registry and the pipeline aside)."""
    prefix = f"{PACKAGE}.passes."
    return {
        name
        for name in modules
        if name.startswith(prefix) and pass_of(name) is None and name != RUNS_EVERY_PASS
    }


def test_the_shared_modules_are_found():
    shared = shared_pass_modules(project_modules())
    for module in ("phases", "target_choice", "gemm_view", "numerics", "site_footprint"):
        assert f"{PACKAGE}.passes.{module}" in shared
    assert not any(pass_of(name) for name in shared)


def test_no_pass_imports_a_later_pass_or_the_tools():
    modules = project_modules()
    graph = import_graph(modules, runtime_only=False)
    shared = shared_pass_modules(modules)
    offending = []
    for name, edges in graph.items():
        own = pass_of(name)
        if own is None and name not in shared:
            continue
        for target in edges:
            later = pass_of(target)
            if target.startswith(f"{PACKAGE}.tools"):
                offending.append(f"{name} imports {target}")
            elif later is not None and (
                own is None or PASS_ORDER.index(later) > PASS_ORDER.index(own)
            ):
                offending.append(f"{name} imports {target}")
    assert offending == []


def test_pass_of():
    assert pass_of(f"{PACKAGE}.passes.link.rows") == "link"
    assert pass_of(f"{PACKAGE}.passes.fuse_operands") == "fuse_operands"
    assert pass_of(f"{PACKAGE}.passes.numerics") is None
    assert pass_of(f"{PACKAGE}.passes.pipeline") is None
