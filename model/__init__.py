"""An encoder-decoder Transformer whose every attention weight can be traced (see shared/docs/DESIGN.md)."""
