"""The project installs as `attention_lens` only: `app/` and `model/` stay at the top of the repository, but an
environment it is installed into gains no top-level `model` or `app` that would shadow a user's own."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_package_list_names_every_package_folder():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {
        "attention_lens." + str(p.parent.relative_to(ROOT)).replace("/", ".")
        for top in ("app", "model")
        for p in (ROOT / top).rglob("__init__.py")
    } | {"attention_lens"}
    assert set(config["packages"]) == folders
    assert config["package-dir"] == {"attention_lens": "attention_lens", "attention_lens.app": "app",
                                     "attention_lens.model": "model"}


def test_outside_the_repository_only_attention_lens_imports(tmp_path):
    code = ("import importlib.util as u; import attention_lens.model.engine, attention_lens.app.render.figures; "
            "print(u.find_spec('model'), u.find_spec('app'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "None"]
