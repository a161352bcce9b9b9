"""Analyses that read engines through their contract and Traces only:

- `alignment`: word alignments from cross-attention, scored against gold links (links, words, methods, scoring,
  corpus, card, uploads);
- `leakage`: meters of attention on the answer; `bug_meters`: meters of the bug switches; `probe`: the causality
  probe; `exposure`: teacher forcing next to free-running decoding on one sentence;
- `ablation`: the loss with each head switched off; `head_roles`: what each head does over a corpus;
- `compare`: two runs side by side; `kv_cache`: the decoding cache counted, measured and checked;
- `lens`, `saliency`: the logit lens and gradient saliency of a run's rows.
"""
