"""Speech from libespeak-ng with a start and end time for every word, merged pairs split."""

import pytest
from attention_lens.model.speech import synthesis

pytestmark = pytest.mark.skipif(not synthesis.available(), reason="libespeak-ng is not installed")

SENTENCES = [
    "the cat that does not sleep in the garden is in the house of the king .",
    "a dog will not bark because the teacher opened the door .",
    "the queen found the letter on the table .",
]


@pytest.mark.parametrize("voice, rate", [("en+f3", 170), ("en-us+m3", 140), ("en-gb-x-rp", 200)])
def test_every_word_is_timed_in_order_inside_the_clip(voice, rate):
    synth = synthesis.Synthesiser()
    for text in SENTENCES:
        spoken = synth.speak(text, voice=voice, rate=rate)
        words = [w for w in text.split() if w != "."]
        assert [w.word for w in spoken.words] == words
        assert spoken.rate == 22050
        assert spoken.words[0].start >= 0
        for a, b in zip(spoken.words, spoken.words[1:]):
            assert a.start < a.end <= b.start
        assert spoken.words[-1].end <= spoken.duration_s


def test_merged_pairs_are_split_where_the_second_word_begins():
    # espeak-ng 1.51 gives "does not", "in the" and "of the" one WORD event; each half gets its own phonemes.
    spoken = synthesis.Synthesiser().speak("the cat does not sleep in the house of the king .", voice="en")
    by_word = [(w.word, w.end - w.start) for w in spoken.words]
    for _word, length in by_word:
        assert 0.03 < length < 0.6, by_word
    assert spoken.words[3].word == "not" and spoken.words[2].end == spoken.words[3].start


def test_an_unknown_voice_is_refused_by_name():
    with pytest.raises(synthesis.SynthesisError, match="no voice 'xx-nothing'"):
        synthesis.Synthesiser().speak("the cat sleeps .", voice="xx-nothing")
