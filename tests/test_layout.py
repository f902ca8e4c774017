"""The code's layout is its architecture: one package per part, imports in one direction only,
no import circles, no file over 500 lines (see bookmarks/__init__.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lowest first: a module may import its own part and the parts below it, never above.
PARTS = [
    ("bookmarks.errors", "bookmarks.memory"),
    ("bookmarks.config",),
    ("bookmarks.stories",),
    ("bookmarks.store",),
    ("bookmarks.models",),
    ("bookmarks.engine",),
    ("bookmarks.scenes",),
    ("bookmarks.evaluation",),
    ("bookmarks.services",),
    ("bookmarks.model_settings",),
    ("ui",),
    ("bookmarks.cli", "bookmarks.commands", "app"),
]
MAX_LINES = 500
MAX_TOP_MODULES = 8


def source_files() -> list[Path]:
    return sorted([*ROOT.glob("bookmarks/**/*.py"), *ROOT.glob("ui/**/*.py"), ROOT / "app.py"])


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module of the project that `path` imports, at any depth of its code."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    known = {module_name(p) for p in source_files()}
    return {m for m in found if m in known and m != name}


def rank(module: str) -> int:
    if module == "bookmarks":  # the package's own __init__: its version, nothing else
        return 0
    for i, prefixes in enumerate(PARTS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    raise AssertionError(f"{module} belongs to no part of the layout; add it to PARTS")


def part(module: str) -> str:
    if module == "bookmarks":
        return module
    prefixes = PARTS[rank(module)]
    return next(p for p in prefixes if module == p or module.startswith(p + "."))


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in source_files()}


def test_every_module_belongs_to_a_part():
    for module in graph():
        rank(module)


def test_imports_run_one_way():
    upward = [f"{a} imports {b}" for a, targets in graph().items() for b in sorted(targets)
              if part(a) != part(b) and rank(b) > rank(a)]
    assert not upward, "imports against the layout's direction:\n" + "\n".join(upward)


def find_circle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circles():
    edges = graph()
    # a package's __init__ handing names on is not a circle with the modules it names
    circle = find_circle({a: {b for b in t if not a.startswith(b + ".")} for a, t in edges.items()})
    assert circle is None, "import circle: " + " -> ".join(circle)


def test_the_circle_finder_finds_circles():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None


def test_no_file_over_500_lines():
    files = [*source_files(), *sorted(ROOT.glob("tests/**/*.py")), *sorted(ROOT.glob("benchmarks/*.py"))]
    big = [f"{p.relative_to(ROOT)}: {n} lines" for p in files
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not big, "split these by noun:\n" + "\n".join(big)


def test_the_top_package_holds_only_entry_points_and_shared_types():
    top = sorted(p.name for p in (ROOT / "bookmarks").glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
