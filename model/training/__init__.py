"""Training our Transformer on a generated corpus or a user's file (`train`); its scores are computed by
model.analysis.scores, as `eval`'s are.
`guided`: guided alignment training, one cross-attention head trained toward an aligner's links.
`distill`: word-level knowledge distillation toward a frozen teacher's next-token distributions.
"""
