"""A Trace to and from the Hugging Face / bertviz world.

- `trace_to_bertviz(trace)`: the keyword arguments of bertviz's `model_view` / `head_view` for an
  encoder-decoder model, attention as Hugging Face returns it (a tuple per layer of (batch, heads, queries, keys)).
- `trace_from_generate(outputs, tokenizer, input_ids)`: a Trace from `model.generate(...,
  output_attentions=True, return_dict_in_generate=True, output_scores=True)`, so a run made outside this project
  can be shown (`attention_lens.show`), saved and loaded like any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from attention_lens.model.engine import Trace


def trace_to_bertviz(trace: Trace) -> dict[str, Any]:
    """bertviz's encoder-decoder arguments for one Trace:

    >>> from bertviz import model_view
    >>> model_view(**attention_lens.trace_to_bertviz(trace))

    encoder_attention, decoder_attention, cross_attention: tuples with one torch tensor per layer, shaped
    (1, heads, queries, keys) like a Hugging Face model's `output_attentions`; encoder_tokens: the source tokens,
    decoder_tokens: the tokens each decoder position read (the decoder's input, as bertviz expects)."""
    import torch

    def per_layer(a: np.ndarray) -> tuple[torch.Tensor, ...]:
        return tuple(torch.from_numpy(np.array(layer, dtype=np.float32))[None] for layer in a)

    return {"encoder_attention": per_layer(trace.encoder_self_attention),
            "decoder_attention": per_layer(trace.decoder_self_attention),
            "cross_attention": per_layer(trace.cross_attention),
            "encoder_tokens": list(trace.source_tokens), "decoder_tokens": list(trace.decoder_input_tokens)}


class _TokenizerPieces:
    """What the Trace builder (model.engine.to_trace) asks of an engine, answered by a Hugging Face tokenizer."""

    def __init__(self, tokenizer: Any, info: dict[str, Any]) -> None:
        self.tokenizer, self.info = tokenizer, info

    def piece(self, token_id: int) -> str:
        token = self.tokenizer.convert_ids_to_tokens(int(token_id))
        return token if isinstance(token, str) else f"<id {token_id}>"

    source_piece = piece

    def model_info(self) -> dict[str, Any]:
        return dict(self.info)


def trace_from_generate(outputs: Any, tokenizer: Any, input_ids: Any, index: int = 0, name: str = "",
                        mode: str = "greedy", report_top_k: int = 5) -> Trace:
    """A Trace of one sequence of a Hugging Face `generate` output.

    outputs: what `model.generate(input_ids, output_attentions=True, return_dict_in_generate=True,
        output_scores=True)` returned (greedy or sampling, num_beams=1); `output_logits=True` instead of
        output_scores gives the raw logits' probabilities.
    tokenizer: the model's tokenizer (reads the ids as tokens). input_ids: the encoder input given to generate.
    index: which sequence of the batch. name: the model's name in the Trace. mode: "greedy" or "sample", as run.

    >>> out = hf_model.generate(**batch, output_attentions=True, return_dict_in_generate=True, output_scores=True)
    >>> trace = attention_lens.trace_from_generate(out, tokenizer, batch["input_ids"])
    """
    from attention_lens.model.engine import DecodeOptions
    from attention_lens.model.engine.runs import RawRun
    from attention_lens.model.engine.to_trace import to_trace

    missing = [k for k in ("encoder_attentions", "decoder_attentions", "cross_attentions")
               if getattr(outputs, k, None) is None]
    if missing or getattr(outputs, "sequences", None) is None:
        raise ValueError("trace_from_generate needs generate(..., output_attentions=True, "
                         f"return_dict_in_generate=True) of an encoder-decoder model (missing: {', '.join(missing)})")
    if getattr(outputs, "beam_indices", None) is not None:
        raise ValueError("trace_from_generate reads greedy or sampled generation (num_beams=1); for beam search "
                         "trace the model with attention_lens.load(folder).trace(text, decode='beam')")
    logits = getattr(outputs, "logits", None) or getattr(outputs, "scores", None)
    if logits is None:
        raise ValueError("trace_from_generate needs each step's scores: call generate with output_scores=True "
                         "(or output_logits=True)")
    src = [int(i) for i in np.asarray(_numpy(input_ids)).reshape(-1, np.shape(_numpy(input_ids))[-1])[index]]
    pad = getattr(tokenizer, "pad_token_id", None)
    n = len(src)
    while n > 1 and pad is not None and src[n - 1] == pad:  # right padding of a batch
        n -= 1
    sequence = [int(i) for i in _numpy(outputs.sequences)[index]]
    steps = len(outputs.decoder_attentions)
    prompt = len(sequence) - steps
    if prompt != 1:
        raise ValueError(f"trace_from_generate reads generation from the decoder start token alone; this output "
                         f"began with {prompt} decoder tokens")
    eos = _eos_ids(tokenizer)
    m = steps
    for t in range(steps):  # a finished sequence of a batch is padded after its end
        if sequence[1 + t] in eos:
            m = t + 1
            break
    enc = np.stack([_numpy(layer)[index, :, :n, :n] for layer in outputs.encoder_attentions])
    L, heads = len(outputs.decoder_attentions[0]), enc.shape[1]
    dec = np.zeros((L, heads, m, m), dtype=np.float32)
    cross = np.zeros((L, heads, m, n), dtype=np.float32)
    for t in range(m):
        for layer in range(L):
            dec[layer, :, t, :t + 1] = _numpy(outputs.decoder_attentions[t][layer])[index, :, -1, :t + 1]
            cross[layer, :, t] = _numpy(outputs.cross_attentions[t][layer])[index, :, -1, :n]
    rows = np.stack([_numpy(logits[t])[index] for t in range(m)]).astype(np.float64)
    run = RawRun(src_ids=src[:n], dec_in_ids=sequence[:m], out_ids=sequence[1:m + 1], logits=rows,
                 enc_attn=enc.astype(np.float32), dec_attn=dec, cross_attn=cross)
    info = {"name": name or str(getattr(tokenizer, "name_or_path", "") or "generate"), "family": "hf-generate",
            "encoder_layers": int(enc.shape[0]), "decoder_layers": L, "heads": int(heads)}
    options = DecodeOptions(mode=mode, report_top_k=report_top_k)
    source_text = tokenizer.decode(src[:n], skip_special_tokens=True)
    return to_trace(_TokenizerPieces(tokenizer, info), run, options, source_text, [])


def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        return x.detach().float().cpu().numpy() if x.is_floating_point() else x.detach().cpu().numpy()
    return np.asarray(x)


def _eos_ids(tokenizer: Any) -> set[int]:
    eos = getattr(tokenizer, "eos_token_id", None)
    return set() if eos is None else {int(eos)}
