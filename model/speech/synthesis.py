"""Speech from libespeak-ng (through ctypes) with the synthesiser's own word timings.

`Synthesiser().speak(text, voice="en+f3", rate=170, pitch=50)` returns a `Spoken`: the samples (int16 → float32
at espeak-ng's rate, 22,050 Hz) and one `TimedWord` per word of `text` (start and end in seconds), continuous
speech as espeak-ng reads it.

Where the times come from: espeak-ng reports a PHONEME event for every phoneme it speaks, with the sample where
the phoneme begins and the text position of the word it belongs to. A word starts where its first phoneme starts
and ends where the next phoneme (of the next word, or a pause) starts. espeak-ng 1.51 speaks some pairs as one
word ("in the", "of the", "does not"): their phonemes all carry the first word's position. Such a group is split
by phonemising each of its later words alone with the same voice and giving each the number of phonemes it has
alone, from the end of the group backwards (`not` → n 0 t, `the` → D @).

libespeak-ng keeps one global state, so a process holds one `Synthesiser`; it is not thread-safe.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass

import numpy as np

AUDIO_OUTPUT_SYNCHRONOUS = 2
INITIALIZE_PHONEME_EVENTS = 0x0001
INITIALIZE_DONT_EXIT = 0x8000
POS_CHARACTER = 1
CHARS_UTF8 = 1
EVENT_LIST_TERMINATED, EVENT_WORD, EVENT_END, EVENT_PHONEME = 0, 1, 5, 7
PARAM_RATE, PARAM_VOLUME, PARAM_PITCH, PARAM_RANGE = 1, 2, 3, 4
EE_OK = 0


class SynthesisError(RuntimeError):
    """espeak-ng is missing, refused a voice, or spoke a text whose words cannot be timed."""


class _Event(ctypes.Structure):
    # espeak_EVENT (speak_lib.h): the union `id` is 8 bytes (int number, const char *name, or char string[8]).
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", ctypes.c_char * 8)]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


@dataclass(frozen=True)
class TimedWord:
    word: str
    start: float  # seconds from the clip's first sample
    end: float


@dataclass(frozen=True)
class Spoken:
    samples: np.ndarray  # float32 mono in [-1, 1]
    rate: int
    words: tuple[TimedWord, ...]

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.rate


@dataclass(frozen=True)
class _Phoneme:
    name: str
    text_position: int  # 1-based character offset of the (possibly merged) word it belongs to
    sample: int


def library_path() -> str | None:
    """Where libespeak-ng is, or None when it is not installed."""
    return ctypes.util.find_library("espeak-ng")


def available() -> bool:
    return library_path() is not None


def _is_pause(name: str) -> bool:
    return name.startswith("_") or name == ""


class Synthesiser:
    """One libespeak-ng for this process, synthesising synchronously into memory."""

    _instance: Synthesiser | None = None

    def __new__(cls) -> Synthesiser:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance._start()
        return cls._instance

    def _start(self) -> None:
        path = library_path()
        if path is None:
            raise SynthesisError("libespeak-ng is not installed (Debian: apt-get install espeak-ng)")
        lib = ctypes.CDLL(path)
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
                                     ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
        rate = lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, None,
                                     INITIALIZE_PHONEME_EVENTS | INITIALIZE_DONT_EXIT)
        if rate <= 0:
            raise SynthesisError(f"espeak_Initialize failed ({rate})")
        self.lib, self.rate = lib, int(rate)
        self._chunks: list[np.ndarray] = []
        self._phonemes: list[_Phoneme] = []
        self._callback = _CALLBACK(self._receive)  # kept referenced: libespeak-ng holds only the pointer
        lib.espeak_SetSynthCallback(self._callback)
        self._voice: tuple[str, int, int, int] | None = None
        self._alone: dict[tuple[str, str], int] = {}

    def _receive(self, wav, n: int, events) -> int:
        if n > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, (n,)).copy())
        i = 0
        while events[i].type != EVENT_LIST_TERMINATED:
            e = events[i]
            if e.type == EVENT_PHONEME:
                name = bytes(e.id).split(b"\0", 1)[0].decode("ascii", "replace")
                self._phonemes.append(_Phoneme(name, int(e.text_position), int(e.sample)))
            i += 1
        return 0

    def _set_voice(self, voice: str, rate: int, pitch: int, pitch_range: int) -> None:
        if self._voice == (voice, rate, pitch, pitch_range):
            return
        if self.lib.espeak_SetVoiceByName(voice.encode()) != EE_OK:
            raise SynthesisError(f"espeak-ng has no voice {voice!r}")
        for param, value in ((PARAM_RATE, rate), (PARAM_PITCH, pitch), (PARAM_RANGE, pitch_range)):
            if self.lib.espeak_SetParameter(param, int(value), 0) != EE_OK:
                raise SynthesisError(f"espeak-ng refused parameter {param} = {value}")
        self._voice = (voice, rate, pitch, pitch_range)

    def _synth(self, text: str) -> tuple[np.ndarray, list[_Phoneme]]:
        self._chunks, self._phonemes = [], []
        data = text.encode("utf-8") + b"\0"
        err = self.lib.espeak_Synth(data, len(data), 0, POS_CHARACTER, 0, CHARS_UTF8, None, None)
        self.lib.espeak_Synchronize()
        if err != EE_OK:
            raise SynthesisError(f"espeak_Synth failed ({err}) on {text!r}")
        samples = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16)
        return samples, self._phonemes

    def _phonemes_alone(self, word: str) -> int:
        """How many phonemes `word` has spoken on its own with the current voice."""
        key = (self._voice[0] if self._voice else "", word)
        if key not in self._alone:
            _, phonemes = self._synth(word)
            self._alone[key] = sum(not _is_pause(p.name) for p in phonemes)
        return self._alone[key]

    def speak(self, text: str, voice: str = "en", rate: int = 170, pitch: int = 50,
              pitch_range: int = 50) -> Spoken:
        """`text` (words separated by spaces; a token of punctuation alone is spoken as punctuation, not timed)
        spoken by `voice` (an espeak-ng voice name with an optional variant: "en-us+m3") at `rate` words a
        minute, `pitch` and `pitch_range` 0–100. Raises SynthesisError where a word gets no phoneme."""
        tokens = text.split()
        spoken_text, starts, words = "", [], []
        for tok in tokens:
            is_word = any(ch.isalnum() for ch in tok)
            if spoken_text and is_word:
                spoken_text += " "
            if is_word:
                starts.append(len(spoken_text.encode("utf-8")) + 1)  # espeak-ng's positions are 1-based
                words.append(tok)
            spoken_text += tok
        if not words:
            raise SynthesisError(f"no word to speak in {text!r}")
        self._set_voice(voice, rate, pitch, pitch_range)
        samples, phonemes = self._synth(spoken_text)
        times = _word_times(words, starts, phonemes, self._phonemes_alone)
        audio = samples.astype(np.float32) / 32768.0
        timed = tuple(TimedWord(w, s / self.rate, e / self.rate) for w, (s, e) in zip(words, times))
        return Spoken(audio, self.rate, timed)


def _word_times(words: list[str], starts: list[int], phonemes: list[_Phoneme], alone) -> list[tuple[int, int]]:
    """(first sample, end sample) of each word from the phoneme events; see the module's docstring."""
    index_of = {pos: i for i, pos in enumerate(starts)}
    # Group the phonemes by the word (or merged words) they belong to, in the order spoken, each with its end.
    groups: dict[int, list[tuple[int, int]]] = {}
    for k, ph in enumerate(phonemes):
        if _is_pause(ph.name):
            continue
        end = phonemes[k + 1].sample if k + 1 < len(phonemes) else ph.sample
        if ph.text_position not in index_of:
            raise SynthesisError(f"a phoneme at text position {ph.text_position} is in no word of {words}")
        groups.setdefault(index_of[ph.text_position], []).append((ph.sample, end))
    heads = sorted(groups)
    if not heads or heads[0] != 0:
        raise SynthesisError(f"the first word of {' '.join(words)!r} got no phoneme")
    times: list[tuple[int, int] | None] = [None] * len(words)
    for h, head in enumerate(heads):
        last = heads[h + 1] if h + 1 < len(heads) else len(words)
        members = list(range(head, last))
        spans = groups[head]
        # Give the later words of a merged group their phonemes from the end backwards.
        cut = len(spans)
        shares: dict[int, list[tuple[int, int]]] = {}
        for w in reversed(members[1:]):
            n = alone(words[w])
            if n <= 0 or cut - n < len(members[: members.index(w)]):
                raise SynthesisError(f"cannot split the merged words {' '.join(words[i] for i in members)!r}")
            shares[w] = spans[cut - n: cut]
            cut -= n
        shares[head] = spans[:cut]
        for w in members:
            part = shares[w]
            times[w] = (part[0][0], part[-1][1])
    return [t for t in times if t is not None]
