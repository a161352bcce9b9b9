"""The seam between models and everything else.

- `contract`: `Engine`, the abstract contract every model family implements (text, pieces, one teacher-forced
  batch, an incremental `Stepper`), with the shared trace / decode / beam entry points (its docstring says which
  member is for what);
- `options`: `DecodeOptions`, a run's options in the one form they keep from the page or the command line to the
  engine and in the Trace (frozen, hashable; `to_record` / `from_record`: the Trace's JSON `options`);
- `runs`: `RawRun` (one run in ids and arrays), `Stepper`, `ContributionParts`, and `Decoder` (what the decoding
  loop needs of an engine);
- `decode`, `beam`: the one incremental decoding loop (greedy, sampling, forced prefix) and beam search;
- `to_trace`, `trace`: raw runs -> `Trace`, the only thing that leaves model/ (JSON / NPZ readers and writers);
- `audio_axis`: a speech model's source axis (the clip's encoder positions and one padding band, the collapse of
  the window's attention onto it, the Trace's `source` object);
- `contributions`, `lens`, `saliency`: the Trace's optional objects (norm-weighted attention, rollout and
  source share; the logit lens; gradient saliency), computed by the contract; `gradients`: what saliency
  needs from a family (`EmbeddedRun`);
- `heads`: head names (`cross:2:3`), the kind codes and the keep masks of ablation; `bugs`: the bug switches;
- `tensors`: padding a batch, tensors to arrays, (log-)softmax; `masks`, `text`: boolean attention masks and
  input cleaning, shared by every family;
- `errors`: `CheckpointError`, `ModelInputError` (messages for the user), the pickle refusal;
- `safety`: the checks before a model is allocated (size limit, safetensors header, the folder's files);
- `loader`: `load_engine(folder or hub id, device=, dtype=)`, which picks the family;
- `device`: where a model runs and its float type (`--device`, `--dtype`, `LENS_DEVICE`), `DeviceError`.
- `stream`: corpus files read lazily, in length-bucketed batches, by shard, with a progress bar;
- `ahead`: work (a batch's pass) run ahead on worker threads, its results handed back in input order.
"""

from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.errors import CheckpointError, ModelInputError
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.engine.options import DecodeOptions
from attention_lens.model.engine.runs import RawRun, Stepper
from attention_lens.model.engine.trace import Step, Trace

__all__ = ["CheckpointError", "DecodeOptions", "Engine", "ModelInputError", "RawRun", "Step", "Stepper", "Trace",
           "load_engine"]
