"""The Alignment page's upload: the download keeps the file's line numbers (a blank line or a sentence
that cannot be aligned is an empty line), natural text is aligned on its own words, and one method name is used
by the ranking, the download's label and its file name."""

from __future__ import annotations

from attention_lens.model.analysis.alignment import Method, align_upload, parse_pharaoh, parse_tsv
from attention_lens.model.analysis.alignment.uploads import word_map

from harness.models.tiny import SOURCES, TARGETS
from tests.fixtures.apptest import ALIGNMENT, page_on, upload

NATURAL = ("The black cat sat on the mat.", "Le chat noir s'assit sur le tapis.")  # "mat." is "mat ." normalised
FILE = (f"{SOURCES[0]}\t{TARGETS[0]}\n\n{NATURAL[0]}\t{NATURAL[1]}\n"
        f"{SOURCES[3]}\tzzzz qqqq\n{SOURCES[5]}\t{TARGETS[5]}\n")


def test_normalised_words_map_back_to_the_files_words():
    assert word_map(["the", "black", "cat", "sat", "on", "the", "mat", "."], NATURAL[0]) == [0, 1, 2, 3, 4, 5, 6, 6]
    french = ["le", "chat", "noir", "s'", "assit", "sur", "le", "tapis", "."]
    assert word_map(french, NATURAL[1]) == [0, 1, 2, 3, 3, 4, 5, 6, 6]
    assert word_map(["the", "dog"], "the cat") is None


def test_natural_text_is_aligned_on_its_own_words_and_the_download_keeps_line_numbers(tiny_engine):
    examples, problems = parse_tsv(FILE)
    assert not problems and len(examples) == 4
    report = align_upload(tiny_engine, FILE)
    assert 2 in report.aligned_lines()  # the natural-text line (line 3), once dropped ("changed its number of words")
    assert list(report.skipped) == [3]  # "zzzz qqqq" is normalised to "zzzz qqqq .": no word of the file's for "."
    wa = report.attention(tiny_engine, 2)
    assert wa.source_words == tuple(NATURAL[0].split()) and wa.target_words == tuple(NATURAL[1].split())
    assert wa.plain.shape[2:] == (len(NATURAL[1].split()), len(NATURAL[0].split()))
    method = Method("argmax", "plain", 1, 1)
    lines = report.links_by_line(tiny_engine, method).split("\n")[:-1]
    assert len(lines) == len(FILE.splitlines()) == 5
    assert lines[1] == ""  # the file's blank line
    for number, ex in ((0, examples[0]), (2, examples[1]), (4, examples[3])):
        assert lines[number], number
        parse_pharaoh(lines[number]).check(len(ex.source.split()), len(ex.target.split()))
    assert lines[3] == ""  # a sentence that could not be aligned keeps its line, empty


def test_one_method_name_on_the_ranking_and_the_download(tiny_ckpt, monkeypatch):
    at = page_on(monkeypatch, ALIGNMENT, [tiny_ckpt], preset="custom", align_extract="union")
    gold = "".join(f"{s}\t{t}\t0-0\n" for s, t in zip(SOURCES, TARGETS))
    upload(at, gold)
    assert not at.exception
    head = at.selectbox(key="align_upload_head").value
    ranking = at.dataframe(key="align_upload_rank").value
    name = ranking["method"][list(ranking["head"]).index(head)]
    assert name.startswith("union-plain-")
    download = next(b for b in at.get("download_button") if "Download the predicted links" in b.label)
    assert download.label == f"Download the predicted links (Pharaoh, {name})"


def test_the_ranking_says_which_reading_it_uses_and_can_take_the_best_methods(tiny_ckpt, monkeypatch):
    at = page_on(monkeypatch, ALIGNMENT, [tiny_ckpt], preset="custom", align_extract="union")
    upload(at, "".join(f"{s}\t{t}\t0-0\n" for s, t in zip(SOURCES, TARGETS)))
    best = Method.parse(next(m.value for m in at.success if "Best method" in m.value).split("**")[1])
    said = next(m.value for m in at.markdown if m.value.startswith("Every head ranked"))
    assert "set at the top of the page (`union`, `plain` reading)" in said  # not "the method chosen above"
    assert (best.extract, best.reading) != ("union", "plain"), best  # the tiny model's best reads otherwise
    assert f"not as the best method reads (`{best.extract}`" in said
    at.button(key="align_upload_use_best").click().run()
    assert not at.exception
    assert (at.selectbox(key="align_extract").value, at.selectbox(key="align_reading").value) == \
        (best.extract, best.reading)
    ranking = at.dataframe(key="align_upload_rank").value
    assert all(Method.parse(n).extract == best.extract for n in ranking["method"])
    said = next(m.value for m in at.markdown if m.value.startswith("Every head ranked"))
    assert said.startswith("Every head ranked by AER read as the best method reads")
    assert not [b for b in at.button if b.key == "align_upload_use_best"]
