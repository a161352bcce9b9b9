"""The Hugging Face adapter: `load` (opening a seq2seq folder or hub id, and the refusals), `probes` (layer and
head counts, whether the causal switch works) and `engine` (`HFEngine`, the contract of model.engine on a
Hugging Face model, with the model's own cache as its Stepper)."""
