"""Gold word timings: CTM, TextGrid (praatio) and the list's own column read alike, words matched to a Whisper
tokenizer's pieces by one key, and every bad input refused in one line that names the file and line."""

from __future__ import annotations

import pytest
from attention_lens.model.analysis.timing.clips import Timings, count_clips, read_clip_list, survey
from attention_lens.model.analysis.timing.gold import (
    ClipGold,
    GoldWord,
    TimingError,
    check_duration,
    read_ctm,
    read_textgrid,
)
from attention_lens.model.analysis.timing.words import match, token_words, word_key

TEXTGRID = """File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = 1.5
tiers? <exists>
size = 1
item []:
    item [1]:
        class = "IntervalTier"
        name = "{tier}"
        xmin = 0
        xmax = 1.5
        intervals: size = 4
        intervals [1]:
            xmin = 0
            xmax = 0.2
            text = ""
        intervals [2]:
            xmin = 0.2
            xmax = 0.6
            text = "the"
        intervals [3]:
            xmin = 0.6
            xmax = 1.1
            text = "cat"
        intervals [4]:
            xmin = 1.1
            xmax = 1.5
            text = "sat"
"""


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_ctm_textgrid_and_own_column_give_the_same_words(tmp_path):
    ctm = read_ctm(write(tmp_path / "g.ctm", ";; comment\na 1 0.20 0.40 the\na 1 0.60 0.50 cat\n"
                                                  "a 1 1.10 0.40 sat\na 1 1.50 0.00 <sil>\n"))
    grid = read_textgrid(write(tmp_path / "a.TextGrid", TEXTGRID.format(tier="words")))
    (tmp_path / "a.wav").touch()
    lst = write(tmp_path / "list.tsv", "a.wav\tThe cat sat.\t0.2-0.6 0.6-1.1 1.1-1.5\n")
    own = next(read_clip_list(lst, Timings(None))).gold
    for gold in (ctm["a"], grid, own):
        assert [(w.word.lower().strip("."), round(w.start, 3), round(w.end, 3)) for w in gold.words] == \
            [("the", 0.2, 0.6), ("cat", 0.6, 1.1), ("sat", 1.1, 1.5)]


def test_word_key_and_whisper_pieces():
    assert [word_key(w) for w in ["Hello,", "don’t", "well-known", "—", "Café."]] == \
        ["hello", "don't", "wellknown", "", "café"]
    words = token_words(["Ġthe", "Ġcat", "s", "'", "Ġsat", ".", "Ġ-", "<|endoftext|>"])
    assert [(w.text, w.first, w.last) for w in words] == [("the", 0, 0), ("cats'", 1, 3), ("sat.", 4, 5)]
    assert token_words(["Ġcaf", "Ã©"])[0].text == "café"  # byte-level pieces decoded


@pytest.mark.parametrize("ctm,expect", [
    ("a 1 0.5 0.2 the\na 1 0.2 0.2 cat\n", "g.ctm, line 2: 'cat' at 0.2 s comes after 'the'"),
    ("a 1 0.2 0.5 the\na 1 0.5 0.2 cat\n", "g.ctm, line 2: 'cat' starts at 0.5 s, before 'the' ends at 0.7 s"),
    ("a 1 0.2 x the\n", "g.ctm, line 1: the duration 'x' is not a number"),
    ("a 1 -1 0.2 the\n", "g.ctm, line 1: the start '-1' is not a time"),
    ("a 1 0.2\n", "g.ctm, line 1: a CTM line is"),
    ("", "g.ctm: no word timings (the file is empty"),
    (";; a comment\na 1 0.2 0.5 <sil>\n", "g.ctm: no word timings"),
])
def test_bad_ctm_lines_are_named(tmp_path, ctm, expect):
    with pytest.raises(TimingError) as exc:
        read_ctm(write(tmp_path / "g.ctm", ctm))
    assert one_line(exc).startswith(expect)


def test_timings_past_the_clip_end_are_named(tmp_path):
    gold = read_ctm(write(tmp_path / "g.ctm", "a 1 0.2 0.5 the\na 1 0.9 0.4 cat\n"))["a"]
    with pytest.raises(TimingError) as exc:
        check_duration(gold, 1.0, "a.wav")
    assert one_line(exc) == "g.ctm, line 2: 'cat' ends at 1.3 s, past the end of a.wav (1.000 s)"


def test_a_textgrid_without_a_word_tier_is_named(tmp_path):
    with pytest.raises(TimingError) as exc:
        read_textgrid(write(tmp_path / "b.TextGrid", TEXTGRID.format(tier="phones")))
    assert one_line(exc) == "b.TextGrid: no word tier (a tier named 'words'); its tiers: phones"


def test_list_checks_name_file_and_line(tmp_path):
    ctm = write(tmp_path / "g.ctm", "a 1 0.2 0.4 the\na 1 0.6 0.5 cat\nzz 1 0.1 0.2 dog\n")
    lst = write(tmp_path / "list.tsv", "a.wav\tthe cat\n")
    with pytest.raises(TimingError) as exc:  # an utterance of the CTM that is no clip of the list
        survey(lst, Timings(ctm))
    assert one_line(exc) == "g.ctm, line 3: utterance 'zz' matches no clip of the list (1 such utterances)"
    lst = write(tmp_path / "list.tsv", "a.wav\tthe cat\n\nzz.wav\tthe dog\n")
    with pytest.raises(TimingError) as exc:  # the transcript is not the timings' words
        count_clips(lst, Timings(ctm))
    assert one_line(exc).startswith("list.tsv, line 3: the transcript does not match the timings' words "
                                    "(g.ctm (zz)): word 1: 'the' against 'dog'")
    lst = write(tmp_path / "list.tsv", "b.wav\tthe cat\n")
    with pytest.raises(TimingError) as exc:
        count_clips(lst, Timings(ctm))
    assert one_line(exc).startswith("list.tsv, line 1: clip 'b.wav' has no utterance in g.ctm")
    lst = write(tmp_path / "list.tsv", "a.wav\tthe cat\t0.1-0.3\n")
    with pytest.raises(TimingError) as exc:
        count_clips(lst, Timings(None))
    assert one_line(exc) == "list.tsv, line 1: 1 start-end pairs for the transcript's 2 words"


def test_tokens_that_make_other_words_are_refused():
    gold = ClipGold(tuple(GoldWord(w, k, k + 0.5, f"g.ctm, line {k}") for k, w in enumerate(["the", "cat"])),
                    "g.ctm (a)")
    assert [w.key for w in match(["Ġthe", "Ġcat", "<|endoftext|>"], gold, "x")] == ["the", "cat"]
    with pytest.raises(TimingError) as exc:
        match(["Ġthe", "Ġca", "Ġt"], gold, "a.wav (line 1)")
    assert one_line(exc) == ("a.wav (line 1): the model's tokens make other words than the timings (g.ctm (a)): "
                             "word 2: 'ca' against 'cat'")
