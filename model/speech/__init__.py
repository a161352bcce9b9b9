"""The spoken grammar: speech of our own for a small Whisper, with exact word timings.

`synthesis`: libespeak-ng through ctypes, a sentence's samples and each word's start and end.
`corpus`: the train / valid / test clips (voices and rates held out per split), their list, CTM and log-mels.
`processor`: a Whisper processor and config of our own vocabulary (byte-level BPE with Whisper's special tokens).
`scoring`: a clip list transcribed and scored by word error rate (jiwer).
"""
