"""An encoder-decoder Transformer whose every attention weight can be traced (see docs/architecture.md).

Subpackages: `engine` (the seam: the Engine contract, decoding loop, Trace, errors, load_engine), `builtin` (our
Transformer and its engine), `hf` (the Hugging Face adapter), `training`, `corpora` (generated parallel corpora
with gold links), `analysis` (alignment, leakage meters, causality probe), `cli` (`python -m model`).
`aligner` (a statistical word aligner and symmetrisation, the links that guided alignment trains on).
`audio` (one reader for clips: file, bytes or array to 16 kHz mono; clip lists), `speech` (the spoken grammar
corpus synthesised by espeak-ng with its word timings, and the Whisper processor of our own speech model).
"""
