"""The layout of the package, as docs/architecture.md states it: modules a person can read whole
(at most 700 lines), CLIs alone at tools/'s top, the compiler (dialects, passes, targets) never
importing tools/, and no dispatch by a kind's string in tools/ (kinds are enums, ops are classes,
each looked up in one registration table: test/test_coverage.py)."""

from __future__ import annotations

import ast
import re
import tomllib

from test_import_graph import PACKAGE, ROOT, import_graph, project_modules

MOST_LINES = 700
TOOLS = f"{PACKAGE}.tools"
# tools/'s top: the CLIs, the package marker, and xdsl-opt's universe entry point (pyproject)
TOP_NOT_A_CLI = {TOOLS, f"{TOOLS}.universe"}
STRING_KIND_TEST = re.compile(r"""\bkind\s*(==|!=)\s*["']|["']\s*(==|!=)\s*\w*kind\b""")


def test_no_module_is_over_700_lines():
    long = {
        name: n
        for name, path in project_modules().items()
        if (n := len(path.read_text().splitlines())) > MOST_LINES
    }
    assert long == {}


def _top_of_tools() -> dict[str, object]:
    return {
        name: path
        for name, path in project_modules().items()
        if name.startswith(f"{TOOLS}.") and name.count(".") == 2 and path.name != "__init__.py"
    }


def test_the_top_of_tools_holds_only_clis():
    """Every module directly in tools/ (but the universe) is a command: it defines main()."""
    not_clis = []
    for name, path in _top_of_tools().items():
        if name in TOP_NOT_A_CLI:
            continue
        tree = ast.parse(path.read_text())
        if not any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body):
            not_clis.append(name)
    assert not_clis == []
    assert {f"{TOOLS}.spatial_opt", f"{TOOLS}.spatial_run", f"{TOOLS}.spatial_import"} <= set(
        _top_of_tools()
    )


def test_the_compiler_does_not_import_the_tools():
    graph = import_graph(project_modules(), runtime_only=False)
    offending = [
        f"{name} imports {target}"
        for name, edges in graph.items()
        if not (name == TOOLS or name.startswith(f"{TOOLS}."))
        for target in edges
        if target == TOOLS or target.startswith(f"{TOOLS}.")
    ]
    assert offending == []


def test_no_kind_is_tested_by_its_string_in_tools():
    found = [
        f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
        for name, path in project_modules().items()
        if name.startswith(f"{TOOLS}.")
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if STRING_KIND_TEST.search(line)
    ]
    assert found == []


def test_the_string_kind_pattern():
    for line in ('if kind == "silu":', "elif op.kind != 'full':", 'x if "gemm" == kind else y'):
        assert STRING_KIND_TEST.search(line)
    for line in ("if kind is MapKindName.SILU:", "MAP[kind](x)", 'kind = "silu"'):
        assert not STRING_KIND_TEST.search(line)


def test_no_two_test_files_share_a_name():
    """pytest imports test files by their basename (test/ has no packages): two files of one name
    in two rooms stop the whole run at collection."""
    seen: dict[str, list[str]] = {}
    for path in sorted((ROOT / "test").rglob("test_*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


def test_every_package_is_installed():
    """A folder with an __init__.py that pyproject's `packages` does not name is left out of a
    wheel (an editable install hides it: it imports from the tree), so `pip install .` would
    give a compiler missing a pass; every package of the tree is listed, and each listed one
    exists."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    in_tree = {name for name, path in project_modules().items() if path.name == "__init__.py"}
    assert sorted(in_tree - listed) == [] and sorted(listed - in_tree) == []
