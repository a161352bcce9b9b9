"""Our Transformer, traced from the inside:

- `config`: `ModelConfig` (dimensions, special ids; JSON); `attention`, `transformer`: the network, attention
  returned as values (and the three bug switches it can compute);
- `tokenizer`: SentencePiece tokenizers; `normalise`: natural input to the corpus conventions; `vocabulary`:
  which typed words the model does not know, and its lexicon; `word_counts`: how often training saw each word;
- `checkpoint`: checkpoint folders (safetensors, never pickles); `batch`: teacher forcing in one parallel pass;
- `contributions`, `lens`, `saliency`: what the Trace's contributions, logit lens and gradient saliency need
  from this network;
- `engine`: `BuiltinEngine`, the contract of model.engine on this network.
- `ablation`: many heads switched off in one batched pass (the Heads ranking).
"""
