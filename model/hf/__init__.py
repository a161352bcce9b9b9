"""The Hugging Face adapter:

- `load`: opening a seq2seq folder or hub id (never remote code, never pickles, eager attention), and the refusals;
- `weights`: the folder's safetensors weights checked against its config before the model is allocated;
- `probes`: layer and head counts, whether the causal switch works, the one full forward pass;
- `engine`: `HFEngine`, the contract of model.engine on a Hugging Face model, the model's own cache as its Stepper;
- `whisper`: `WhisperEngine`, Whisper checkpoints (a clip as the source, Whisper's forced prefix, generate's
  suppressed tokens);
- `contributions`, `lens`: what the Trace's contributions and logit lens need from the model's modules;
- `ablation`: the dormant head-off hooks, woken only by the calling thread's own ablated run.
"""
