"""The subpackages of model/ import each other without a cycle: engine is the seam, the families (builtin, hf)
and the analyses above it, the CLI and training on top. Edges are the imports a module makes when it is loaded
(its top level, `if TYPE_CHECKING:` blocks included); an import inside a function runs when it is called, as
load_engine's choice of family does, and is not a dependency of loading."""

from __future__ import annotations

import ast
from pathlib import Path

MODEL = Path(__file__).resolve().parents[2] / "model"
SUBPACKAGES = sorted(p.name for p in MODEL.iterdir() if (p / "__init__.py").is_file())
# Edges still to be removed (importing subpackage, imported subpackage) -> "file -> module" of each import. The
# last ones (the engine contract imported the logit lens and gradient saliency from model.analysis) went when
# those moved to the seam, as model.engine.contributions did; the test fails when the list is stale either way.
PENDING: dict[tuple[str, str], set[str]] = {}


def top_level_imports(tree: ast.Module) -> list[str]:
    """Modules imported at load time: statements of the module body and of the if / try blocks in it."""
    out, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append(node.module)
        elif isinstance(node, (ast.If, ast.Try)):
            todo += node.body + node.orelse + getattr(node, "handlers", []) + getattr(node, "finalbody", [])
        elif isinstance(node, ast.ExceptHandler):
            todo += node.body
    return out


def edges() -> dict[tuple[str, str], set[str]]:
    """(importing subpackage, imported subpackage) -> "importing file -> imported module" of each import."""
    out: dict[tuple[str, str], set[str]] = {}
    for package in SUBPACKAGES:
        for path in sorted((MODEL / package).rglob("*.py")):
            for name in top_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
                parts = name.removeprefix("attention_lens.").split(".")
                if parts[0] == "model" and len(parts) > 1 and parts[1] in SUBPACKAGES and parts[1] != package:
                    out.setdefault((package, parts[1]), set()).add(f"{path.relative_to(MODEL.parent)} -> {name}")
    return out


def cycles(graph: set[tuple[str, str]]) -> list[list[str]]:
    """Every elementary cycle's nodes, found by a depth-first walk from each node (the graph is small)."""
    found: list[list[str]] = []

    def walk(path: list[str]) -> None:
        for a, b in sorted(graph):
            if a != path[-1]:
                continue
            if b == path[0]:
                if min(path) == path[0]:  # each cycle once, from its smallest node
                    found.append(path + [b])
            elif b not in path:
                walk(path + [b])

    for node in sorted({a for a, _ in graph}):
        walk([node])
    return found


def test_the_walk_finds_a_cycle_when_there_is_one():
    assert cycles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c", "a"]]
    assert cycles({("a", "b"), ("b", "c")}) == []


def test_no_import_cycle_between_the_subpackages_of_model():
    found = edges()
    assert {"engine", "builtin", "hf", "analysis"} <= set(SUBPACKAGES)
    assert ("analysis", "engine") in found and ("builtin", "engine") in found  # the walk sees real imports
    pending = {edge: files for edge, files in found.items() if edge in PENDING}
    assert pending == PENDING, f"the pending edges changed: now {pending}; update PENDING"
    assert cycles(set(found) - set(PENDING)) == [], {e: sorted(f) for e, f in found.items()}


def test_what_a_trace_carries_is_computed_at_the_seam():
    """The contributions, the logit lens and gradient saliency are Trace keys the contract computes: their
    mathematics lives in model.engine, and engine imports nothing from analysis."""
    for name in ("contributions", "lens", "saliency"):
        assert (MODEL / "engine" / f"{name}.py").is_file()
        assert not (MODEL / "analysis" / f"{name}.py").exists()
    assert ("engine", "analysis") not in edges()
