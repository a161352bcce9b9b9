"""Training our Transformer on a generated corpus or a user's file (`train`); its scores are computed by
model.analysis.scores, as `eval`'s are.
`guided`: guided alignment training, one cross-attention head trained toward an aligner's links.
`distill`: word-level knowledge distillation toward a frozen teacher's next-token distributions.
`speech`: training a small Whisper from scratch on the spoken grammar corpus (`train-speech`).
`start_data`: a fine-tune's start model's training sentences, kept out of the fine-tune's valid and test splits.
"""
