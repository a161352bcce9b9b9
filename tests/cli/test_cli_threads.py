"""Commands run in the same process as other work (tests, a notebook) leave torch's CPU thread count as they
found it: `align` runs on its own count (--threads, or the idle cores) and `train` on TrainConfig.threads, each
restored when it ends, also when it ends on an error."""

from __future__ import annotations

import pytest
import torch
from attention_lens.model.cli import main as cli_main

from tests.fixtures.checkpoints import ROOT

MODEL = ROOT / "checkpoints" / "en-fr"
DATA = ROOT / "assets" / "data" / "en-fr.test.tsv"


@pytest.fixture
def three_threads():
    """torch on 3 threads, a count neither command picks here (--threads 1; at most the 2 cores otherwise)."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(before)


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.tsv"
    path.write_text("".join(DATA.read_text(encoding="utf-8").splitlines(True)[:4]), encoding="utf-8")
    return path


@pytest.mark.parametrize("threads", [["--threads", "1"], []], ids=["asked", "idle-cores"])
def test_align_leaves_the_thread_count_as_it_found_it(three_threads, small, threads, capsys):
    assert cli_main(["align", "--model", str(MODEL), "--data", str(small), "--device", "cpu", "--quiet", "--json",
                     *threads]) == 0
    assert '"aer"' in capsys.readouterr().out
    assert torch.get_num_threads() == three_threads


def test_align_ending_on_an_error_leaves_the_thread_count_too(three_threads, small, capsys):
    assert cli_main(["align", "--model", str(MODEL), "--data", str(small), "--device", "cpu", "--quiet",
                     "--threads", "1", "--method", "argmax-shift-L9H1"]) != 0
    assert "error" in capsys.readouterr().err
    assert torch.get_num_threads() == three_threads
