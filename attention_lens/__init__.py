"""Attention Lens: watch an encoder-decoder Transformer translate, every attention weight at every step.

    import attention_lens
    model = attention_lens.load("everyday-en-fr")                  # a shipped name, a folder, a Hugging Face folder
    trace = model.trace("Where is the train station?")             # the Trace of one run
    attention_lens.show(trace, kind="cross", layer=3, head=2)      # the interactive picture, offline

- `load(path, device="auto", dtype=None, allow_hub=False)` -> `Model`; `Model.trace(text, target=None,
  audio=None, **options)` -> `Trace` (options: those of `attention-lens trace`, as keywords; audio: a speech
  model's clip, a path or (samples, rate)); `Model.trace_file(data, out)`;
  `load_trace(path)` reads a saved Trace.
- `show(trace, kind=, layer=, head=, step=, view=, reading=, audio=)` -> `View`: a self-contained HTML view
  (Jupyter draws it; `.save("view.html")`).
- The figures of the app, as plotly figures: `attention_figure(trace, kind, view, step, layer, head)`, `heatmap`,
  `grid`, `at_step`, `side_figure` and `difference_figure` (Compare), `share_bar` (source vs prefix),
  `agreement_grid` (saliency against heads). Kinds here are the Trace's names ("cross_attention", ...) and
  layer / head are 0-based, as in the app's code.
- `trace_to_bertviz(trace)` -> bertviz `model_view` keyword arguments; `trace_from_generate(outputs, tokenizer,
  input_ids)` -> a Trace of a Hugging Face `generate(..., output_attentions=True, return_dict_in_generate=True,
  output_scores=True)` output.

Docs: docs/python-api.md. The model side lives in `attention_lens.model` (the repository's `model/`), the
Streamlit app in `attention_lens.app` (the repository's `app/`). Names are imported when first used, so
`import attention_lens` stays quick.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "load": "attention_lens.api", "Model": "attention_lens.api", "load_trace": "attention_lens.api",
    "options_from": "attention_lens.api",
    "show": "attention_lens.view", "View": "attention_lens.view",
    "trace_to_bertviz": "attention_lens.interop", "trace_from_generate": "attention_lens.interop",
    "Trace": "attention_lens.model.engine", "DecodeOptions": "attention_lens.model.engine",
    "CheckpointError": "attention_lens.model.engine", "ModelInputError": "attention_lens.model.engine",
    "attention_figure": "attention_lens.app.render.views", "at_step": "attention_lens.app.render.views",
    "heatmap": "attention_lens.app.render.figures", "grid": "attention_lens.app.render.figures",
    "side_figure": "attention_lens.app.render.compare", "difference_figure": "attention_lens.app.render.compare",
    "share_bar": "attention_lens.app.render.contrib", "agreement_grid": "attention_lens.app.render.why",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'attention_lens' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
