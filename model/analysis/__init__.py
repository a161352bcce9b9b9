"""Analyses that read engines through their contract and Traces only: `alignment` (word alignments from
cross-attention, scored against gold links), `leakage` (meters of attention on the answer), `probe` (the
causality probe)."""
