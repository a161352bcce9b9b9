"""The tree's descriptions name every module: each package's docstring (model/, app/ and their subpackages)
names each of its modules and subpackages, and docs/architecture.md's "Packages and modules" names each module
under its package, so that a module added or renamed without its description fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(p.parent for top in ("model", "app") for p in (ROOT / top).rglob("__init__.py"))


def members(package: Path) -> list[str]:
    """The modules (without .py) and subpackages of a package, __init__ and __main__ left out."""
    modules = [p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")]
    return sorted(modules + [p.parent.name for p in package.glob("*/__init__.py")])


def named(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text) is not None


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_package_docstring_names_each_of_its_modules(package):
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    missing = [m for m in members(package) if not named(doc, m)]
    assert not missing, f"{package.relative_to(ROOT)}/__init__.py does not name {missing}"


def tree_entry(listing: str, package: Path) -> str:
    """The lines of docs/architecture.md's tree that describe a package: its own line and the more indented or
    continuation lines after it, up to the next entry at its depth or above. A subpackage described inside its
    parent's entry (`alignment/ (links, words, ...)`) is the parenthesis after its name there."""
    parts = package.relative_to(ROOT).parts
    lines = listing.splitlines()
    depth = len(parts) - 1
    start = next((i for i, line in enumerate(lines) if line.startswith("  " * depth + parts[-1] + "/")), None)
    if start is None:
        parent = " ".join(tree_entry(listing, package.parent).split())
        return parent.split(f"{parts[-1]}/ (", 1)[1].split(")", 1)[0]
    end = next((i for i in range(start + 1, len(lines))
                if re.match(rf"^(  ){{0,{depth}}}\S", lines[i])), len(lines))
    return "\n".join(lines[start:end])


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_architecture_tree_names_each_module_under_its_package(package):
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listing = text.split("## Packages and modules", 1)[1].split("```")[1]
    entry = tree_entry(listing, package)
    missing = [m for m in members(package) if not named(entry, m)]
    assert not missing, f"docs/architecture.md does not name {missing} under {package.relative_to(ROOT)}/"
