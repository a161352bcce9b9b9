"""Analyses that read engines through their contract and Traces only:

- `alignment`: word alignments from cross-attention, scored against gold links (links, words, methods, scoring,
  corpus, card, uploads);
- `scores`: how well a model translates a set of pairs (exact match, chrF, BLEU, teacher-forced accuracy and
  loss; `eval`'s keys), the one place every caller scores;
- `leakage`: meters of attention on the answer; `bug_meters`: meters of the bug switches; `probe`: the causality
  probe; `exposure`: teacher forcing next to free-running decoding on one sentence;
- `ablation`: the loss with each head switched off; `head_roles`: what each head does over a corpus;
- `compare`: two runs side by side; `kv_cache`: the decoding cache counted, measured and checked;
- `card_pages`: what a built-in pair's card keeps for the app's pages, measured at training time.
- `timing`: a speech model's word timings (Whisper's DTW over a head set), every cross-attention head ranked as a
  word timer against gold timings (CTM, TextGrid), the head set chosen and written as `alignment_heads`.

(The logit lens and gradient saliency are Trace keys and live at the seam: model.engine.lens, .saliency.)
"""
