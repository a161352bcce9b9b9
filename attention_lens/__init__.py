"""Attention Lens: watch an encoder-decoder Transformer translate, every attention weight at every step.

The library's front door. The model side lives in `attention_lens.model` (the repository's `model/`), the
Streamlit app in `attention_lens.app` (the repository's `app/`).
"""
