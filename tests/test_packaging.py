"""The project installs as `attention_lens` only: `app/` and `model/` stay at the top of the repository, but an
environment it is installed into gains no top-level `model` or `app` that would shadow a user's own."""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from attention_lens.model.engine import CheckpointError

ROOT = Path(__file__).resolve().parent.parent


def test_the_package_list_names_every_package_folder():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {
        "attention_lens." + str(p.parent.relative_to(ROOT)).replace("/", ".")
        for top in ("app", "model")
        for p in (ROOT / top).rglob("__init__.py")
    } | {"attention_lens"}
    data = {"attention_lens.assets", "attention_lens.checkpoints"}  # the wheel's data: favicon, presets, a model
    assert set(config["packages"]) == folders | data
    assert config["package-dir"] == {"attention_lens": "attention_lens", "attention_lens.app": "app",
                                     "attention_lens.model": "model", "attention_lens.assets": "assets",
                                     "attention_lens.checkpoints": "checkpoints"}
    assert config["package-data"]["attention_lens.checkpoints"] == ["everyday-en-fr/*"]  # the default model only


def test_every_script_and_style_of_the_app_is_package_data():
    """A page's .js / .css files are read at run time: a folder without its package-data line ships without them
    (an installed app then fails on the first page that reads one)."""
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    missing = []
    for path in sorted((ROOT / "app").rglob("*")):
        if path.suffix in (".js", ".css"):
            package = "attention_lens." + str(path.parent.relative_to(ROOT)).replace("/", ".")
            if not any(path.match(str(path.parent / g)) for g in globs.get(package, [])):
                missing.append(str(path.relative_to(ROOT)))
    assert missing == []


def test_the_package_declares_what_requirements_txt_pins():
    """requirements.txt is the set CI installs; the package's own dependencies are the same names and bounds."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    pinned = [line for line in lines if line and not line.startswith("-")]
    assert sorted(declared) == sorted(pinned)
    assert "torch==2.13.0" in declared


def _declared_closure() -> set[str]:
    """The distributions the package's declared dependencies (its extras' included) install: each one and,
    recursively, what it requires without an extra (normalised names)."""
    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + [d for extra in project["optional-dependencies"].values() for d in extra]
    todo = [norm(re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0]) for d in declared]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [norm(re.split(r"[<>=!~;\[ (]", r, maxsplit=1)[0]) for r in requires if "extra ==" not in r]
    return seen


def test_every_module_the_package_imports_is_installed_by_its_dependencies():
    """A module that app/ or model/ imports comes from a declared dependency or one it pulls in: a module present
    only because the developer's environment has it fails on a fresh machine (scipy once did, in CI)."""
    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    closure = _declared_closure()
    owners = metadata.packages_distributions()
    undeclared = set()
    for path in [*(ROOT / "app").rglob("*.py"), *(ROOT / "model").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "attention_lens" or top not in owners:
                    continue  # the standard library, this project, or an optional module not installed here
                if not any(norm(d) in closure for d in owners[top]):
                    undeclared.add(f"{top} ({path.relative_to(ROOT)})")
    assert sorted(undeclared) == []


def test_outside_the_repository_only_attention_lens_imports(tmp_path):
    code = ("import importlib.util as u; import attention_lens.model.engine, attention_lens.app.render.figures; "
            "print(u.find_spec('model'), u.find_spec('app'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "None"]


def test_a_shipped_model_opens_by_name_from_any_folder(tmp_path):
    code = ("import attention_lens; m = attention_lens.load('en-fr', device='cpu'); "
            "print(m.trace('the cat sat .').target_tokens[0])")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip()


def test_a_name_is_looked_up_in_lens_checkpoints_first_then_the_shipped_folder(tmp_path, monkeypatch):
    from attention_lens.model.engine import loader

    mine = tmp_path / "mine"
    (mine / "en-fr").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert loader.find_named("en-fr", {}) == loader.PACKAGED / "en-fr"
    assert loader.find_named("en-fr", {loader.ENV_CHECKPOINTS: str(mine)}) == mine / "en-fr"
    assert loader.find_named("no-such-model", {}) is None
    assert loader.find_named("../en-fr", {}) is None and loader.find_named("/etc", {}) is None
    with pytest.raises(CheckpointError, match=r"no-such-model: no such model folder, nor a model of that name"):
        loader.load_engine("no-such-model")
