"""requirements.txt admits only releases the code works with: the Hugging Face adapter uses transformers 5.x's
`cache=` API (4.x has none), and app/render/preload.py reads Streamlit 1.67's internal file names (a later minor
release may rename them); each bound holds the installed release."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"


def spec(name: str) -> Requirement:
    lines = [line.strip() for line in REQUIREMENTS.read_text().splitlines()]
    return next(Requirement(line) for line in lines if line and not line.startswith(("#", "-"))
                and Requirement(line).name == name)


@pytest.mark.parametrize("name, refused", [
    ("transformers", ["4.50.0", "4.57.1", "6.0.0"]),  # 4.x: no cache= argument; 6: an unknown API
    ("streamlit", ["1.50.0", "1.66.0", "1.68.0", "2.0.0"]),  # other releases' static file names
])
def test_requirements_admit_the_installed_release_and_not_the_ones_the_code_cannot_use(name, refused):
    requirement = spec(name)
    assert requirement.specifier.contains(version(name)), (requirement, version(name))
    assert not [v for v in refused if requirement.specifier.contains(v)], requirement
