"""Random-weight models that tests and benchmarks build in seconds, with no download: a tiny checkpoint of our own
Transformer (`tiny`), tiny Hugging Face seq2seq folders (`hf_tiny`) and the families of docs/your-model.md
(`hf_families`), models of real sizes for speed checks (`hf_big`), and tiny Whisper folders (`whisper`)."""
