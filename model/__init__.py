"""An encoder-decoder Transformer whose every attention weight can be traced (see docs/architecture.md).

Subpackages: `engine` (the seam: the Engine contract, decoding loop, Trace, errors, load_engine), `builtin` (our
Transformer and its engine), `hf` (the Hugging Face adapter), `training`, `corpora` (generated parallel corpora
with gold links), `analysis` (alignment, leakage meters, causality probe), `cli` (`python -m model`).
`aligner` (a statistical word aligner and symmetrisation, the links that guided alignment trains on).
"""
