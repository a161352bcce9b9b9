"""What tests, benchmarks and reports share lives in harness/, which imports none of them: the app is started in
one place (harness/server.py), the browser tests get their servers from tests/browser/conftest.py, benchmarks/ and
reports/ never import tests/, and tests import benchmarks/ only to test the benchmarks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "harness" / "server.py"
# A process that is the app or its replicas: `streamlit run`, deploy/serve.py, `./run.sh serve`.
A_SERVER = re.compile(r"streamlit|serve\.py|run\.sh")
# The tests of the benchmarks themselves import them; nothing else in tests/ does.
TESTS_OF_BENCHMARKS = {"test_benchmarks.py", "test_load.py", "test_train_device.py"}


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


def importers(folders: tuple[str, ...], package: str) -> list[str]:
    """The sources under `folders` that import `package` or one of its modules."""
    return [str(p.relative_to(ROOT)) for p in sources(*folders)
            if any(m == package or m.startswith(package + ".") for m in imports(p))]


def test_only_the_harness_server_starts_the_app():
    assert [s for p in sources("tests", "benchmarks", "reports", "harness") if p != SERVER
            for s in server_starts(p)] == []
    assert server_starts(SERVER) == ["harness/server.py:serve", "harness/server.py:served_replicas"]


def test_benchmarks_and_reports_never_import_tests():
    assert importers(("benchmarks", "reports"), "tests") == []


def test_the_harness_imports_no_tests_benchmarks_or_reports():
    assert [f for package in ("tests", "benchmarks", "reports") for f in importers(("harness",), package)] == []


def test_tests_import_benchmarks_only_to_test_them():
    assert [f for f in importers(("tests",), "benchmarks") if Path(f).name not in TESTS_OF_BENCHMARKS] == []


def test_browser_tests_get_their_servers_from_the_conftest():
    own = [str(p.relative_to(ROOT)) for p in sources("tests/browser") if p.name != "conftest.py"
           and re.search(r"\bserved?\(", p.read_text("utf-8"))]
    assert not own
