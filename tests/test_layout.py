"""The library's layout: llmlab's modules import each other without a cycle, and nothing from the course around it.

Imports are read from the source (every ``import`` statement, at module level or inside a function: a lazy
import that closes a loop is still a loop), except those under ``if TYPE_CHECKING:``, which never run.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import llmlab

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(llmlab.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _runtime_imports(tree: ast.AST):
    """Import nodes, skipping the bodies of ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in _runtime_imports(ast.Module([child], [])))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _runtime_imports(node)


def imported_names(name: str) -> set[str]:
    """Every module ``name`` imports, as absolute dotted names (``from . import x`` gives ``pkg.x``)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module
        for alias in node.names:
            found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target)
    return found


GRAPH = {name: {m for m in imported_names(name) if m in MODULES and m != name} for name in MODULES}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_import_reader_sees_lazy_imports_and_skips_type_checking(tmp_path):
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\ndef f():\n    import b\n")
    names = {alias.name for node in _runtime_imports(tree) for alias in node.names}
    assert names == {"TYPE_CHECKING", "b"}


def test_llmlab_imports_form_no_cycle():
    assert find_cycle(GRAPH) is None, " -> ".join(find_cycle(GRAPH))


def _repository_top_level_names() -> set[str]:
    """What could be imported from the checkout outside llmlab/: the course tools, the tests, the folders."""
    names = {"course", "tests", "benchmarks", "solutions", "labs", "site", "conftest"}
    for folder in (REPO / "course" / "tools", REPO / "tests", REPO / "benchmarks"):
        names.update(p.stem for p in folder.glob("*.py"))
        names.update(p.name for p in folder.iterdir() if (p / "__init__.py").is_file())
    return names


@pytest.mark.parametrize("name", sorted(MODULES))
def test_llmlab_imports_nothing_from_the_course_or_the_tests(name):
    outside = _repository_top_level_names() - set(sys.stdlib_module_names)
    assert "makedata" in outside and "labtools" in outside  # the check knows what it looks for
    bad = sorted(m for m in imported_names(name) if m.partition(".")[0] in outside)
    assert not bad, f"{name} imports {bad}: llmlab must import only itself and its dependencies"


def test_no_module_imports_another_modules_private_helpers():
    """``from llmlab.x import _helper`` (or ``from .x import _helper``) reaches into another module's insides."""
    bad = []
    for name, path in MODULES.items():
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("llmlab")):
                bad += [f"{name}: {alias.name} from {node.module}" for alias in node.names
                        if alias.name.startswith("_") and alias.name != "__version__"
                        and not any(m.endswith(f".{alias.name}") for m in MODULES)]  # a private module is fine
    assert not bad, bad


def test_the_course_machinery_is_not_in_the_library():
    assert not {"llmlab.corpus_writer", "llmlab.build_models", "llmlab.build_adapters", "llmlab.quality"} & set(MODULES)
    assert (REPO / "course" / "tools" / "makedata" / "models.py").is_file()


def test_the_package_docstring_maps_every_public_module():
    public = {n.split(".")[1] for n in MODULES if n.count(".") >= 1 and not n.split(".")[1].startswith("_")}
    missing = sorted(m for m in public if f"``{m}``" not in llmlab.__doc__)
    assert not missing, f"llmlab/__init__.py's module map leaves out {missing}"
