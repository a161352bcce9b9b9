"""Our Transformer, traced from the inside: config, attention, the encoder-decoder network, the SentencePiece
tokenizer, corpus-convention normalising, checkpoint folders, batching, and `BuiltinEngine` (the contract of
model.engine on this network)."""
