"""The README's Python example runs as written from any folder (it opens the shipped model by name), and
examples/quickstart.ipynb runs top to bottom in a fresh kernel and renders the interactive view."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"


def readme_python() -> str:
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) == 1, "the README has one Python example"
    return blocks[0]


@pytest.mark.slow  # opens the everyday model in a fresh process
def test_the_readme_example_is_three_lines_and_runs_from_any_folder(tmp_path):
    code = readme_python()
    assert len(code.strip().splitlines()) == 3
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_the_quickstart_notebook_runs_and_renders_the_view():
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert not [c for c in notebook.cells if c.cell_type == "code" and c.get("outputs")], "stored without outputs"
    # Run where Jupyter runs a notebook: in its own folder (it finds the repository's root itself).
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    html = [o["data"]["text/html"] for c in notebook.cells if c.cell_type == "code" for o in c.outputs
            if "text/html" in o.get("data", {})]
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    assert len(html) == 2 and all('class="al-view"' in h and "<canvas" in h for h in html)
