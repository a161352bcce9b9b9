"""Audio in: one reader for every way a clip arrives (file, upload bytes, microphone, array).

`read_audio` takes a path, bytes or an (array, rate) pair and returns an `Audio`: mono float32 samples at
16 kHz (`soundfile` reads the container, `soxr` resamples, channels are averaged). The length limit is checked
from the file's header before the samples are decoded, so a 30-minute file costs nothing to refuse.
`clips.read_clip_list` reads a list of clips (`clip path<TAB>transcript`, paths relative to the list).
"""

from attention_lens.model.audio.reader import SAMPLE_RATE, Audio, AudioError, read_audio

__all__ = ["SAMPLE_RATE", "Audio", "AudioError", "read_audio"]
