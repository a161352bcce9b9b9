"""Training our Transformer on a generated corpus (`train`), and scoring any engine on a test split
(`evaluate`: BLEU, chrF, exact match, teacher-forced accuracy)."""
