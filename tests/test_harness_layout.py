"""Test support lives in tests/: the app is started in one place (tests/support/server.py), the browser tests get
their servers from tests/browser/conftest.py, and tests import benchmarks/ only to test the benchmarks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "support" / "server.py"
# A process that is the app or its replicas: `streamlit run`, deploy/serve.py, `./run.sh serve`.
A_SERVER = re.compile(r"streamlit|serve\.py|run\.sh")
# The tests of the benchmarks themselves import them; nothing else in tests/ does.
TESTS_OF_BENCHMARKS = {"test_benchmarks.py", "test_benchmark_harness.py", "test_load.py", "test_train_device.py"}


def sources(*folders: str) -> list[Path]:
    return sorted(p for d in folders for p in (ROOT / d).rglob("*.py"))


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def server_starts(path: Path) -> list[str]:
    """The functions of a source that start the app or its replicas: they call subprocess.Popen, and their code
    names streamlit, deploy/serve.py or run.sh."""
    text = path.read_text(encoding="utf-8")
    return [f"{path.relative_to(ROOT)}:{fn.name}" for fn in ast.walk(ast.parse(text))
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(isinstance(c, ast.Call) and getattr(c.func, "attr", getattr(c.func, "id", "")) == "Popen"
                    for c in ast.walk(fn))
            and A_SERVER.search(ast.get_source_segment(text, fn))]


def test_only_tests_support_server_starts_the_app():
    assert [s for p in sources("tests", "benchmarks") if p != SERVER for s in server_starts(p)] == []
    assert server_starts(SERVER) == ["tests/support/server.py:serve", "tests/support/server.py:served_replicas"]


def test_tests_import_benchmarks_only_to_test_them():
    importing = [str(p.relative_to(ROOT)) for p in sources("tests") if p.name not in TESTS_OF_BENCHMARKS
                 and any(m == "benchmarks" or m.startswith("benchmarks.") for m in imports(p))]
    assert not importing


def test_browser_tests_get_their_servers_from_the_conftest():
    own = [str(p.relative_to(ROOT)) for p in sources("tests/browser") if p.name != "conftest.py"
           and re.search(r"\bserved?\(", p.read_text("utf-8"))]
    assert not own
