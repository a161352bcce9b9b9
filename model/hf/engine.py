"""The engine for Hugging Face encoder-decoder checkpoints (Marian, T5 / mT5, BART / mBART, Pegasus, M2M-100...).

Attention weights are the model's own return values (`output_attentions=True`: `encoder_attentions`,
`decoder_attentions`, `cross_attentions`, one (B, h, Tq, Tk) tensor per layer). Only the eager attention
implementation computes them, so the model is always loaded with `attn_implementation="eager"`
(model.hf.load). Free-running decoding goes one position per call through the model's own key-value cache
(`cache=`, an `EncoderDecoderCache`) in the shared loop of model.engine. The loaded model is never changed:
options are arguments, masks are tensors passed in. Head ablation (`DecodeOptions.ablate`) is a dormant pre-hook
on each output projection, installed once at construction and woken only by the calling thread's context
around its own forward passes (model.hf.ablation): other sessions on the same model run plainly meanwhile.
"""

from __future__ import annotations

import copy
import functools
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np
import torch
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.errors import CheckpointError, ModelInputError
from attention_lens.model.engine.gradients import EmbeddedRun
from attention_lens.model.engine.masks import full_mask
from attention_lens.model.engine.runs import ContributionParts, DecodeOptions, RawRun, Stepper
from attention_lens.model.engine.tensors import pad_batch, to_numpy
from attention_lens.model.engine.text import MAX_INPUT_CHARS, clean
from attention_lens.model.hf import lens
from attention_lens.model.hf.ablation import IGNORE, ablating, install
from attention_lens.model.hf.ablation import MARK as ABLATION_MARK
from attention_lens.model.hf.ablation import head_off_nll as batched_head_off_nll
from attention_lens.model.hf.contributions import contribution_parts, parts_of
from attention_lens.model.hf.load import load_feature_extractor, load_folder
from attention_lens.model.hf.probes import additive_mask, forward, probe_structure
from attention_lens.model.hf.weights import SPEECH_FAMILIES

# Why the three bug switches cannot be arguments here: each lives inside the library's attention modules
# (the eager softmax and its `scaling` attribute, the decoder layer's call of its cross-attention); changing
# them would change the loaded model, which every session shares.
BUG_NOTES = {
    "mask_after_softmax": "Not possible for this model family: Hugging Face's attention applies the mask to the "
                          "scores inside its own softmax; moving it after the softmax would mean patching the loaded "
                          "model, which every session shares.",
    "swap_cross": "Not possible for this model family: the decoder layer calls its cross-attention itself, with "
                  "the decoder states as queries; swapping the arguments would mean patching the loaded model.",
    "unscaled": "Not possible for this model family: the 1/sqrt(d_k) factor is an attribute of each attention "
                "module (or, in T5, folded into the trained weights); changing it would change the shared model.",
}
# NLLB's language codes (`fra_Latn`): its tokenizer lists them among its extra special tokens.
NLLB_CODE = re.compile(r"[a-z]{3}_[A-Z][a-z]{3}")
T5_CAP = 512  # T5 has relative positions, hence no hard limit; 512 is the length it was pre-trained on.


def _ids(value: Any) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, (list, tuple, set)):
        return {int(v) for v in value}
    return {int(value)}


class HFStepper(Stepper):
    """The model's own cache over one encoded batch (padded with the pad id). keep: the head masks to switch
    off (model.engine.heads.keep_masks), applied to the encoder here and to the decoder at every step."""

    def __init__(self, model: Any, srcs: list[list[int]], pad: int, need_weights: bool,
                 keep: dict[str, torch.Tensor | None] | None = None) -> None:
        self.model, self.need_weights, self.head_keep = model, need_weights, keep
        ids, real = pad_batch(srcs, pad)
        self.device = model.device
        ids = ids.to(self.device)
        self.keep = real.long().to(self.device)  # Hugging Face's attention_mask: 1 real, 0 padding
        with ablating(model, keep):
            self.enc = model.get_encoder()(input_ids=ids, attention_mask=self.keep, output_attentions=need_weights)
        self.enc_attentions = list(self.enc.attentions or [])
        self.cache = None

    def step(self, last: torch.Tensor, t: int):
        enc, keep = self.enc, self.keep
        width = last.shape[0]
        if width != keep.shape[0]:  # beam search: one source, several hypotheses
            enc = type(enc)(last_hidden_state=enc.last_hidden_state.expand(width, -1, -1))
            keep = keep.expand(width, -1)
        with ablating(self.model, self.head_keep):
            out = self.model(encoder_outputs=enc, attention_mask=keep, decoder_input_ids=last.to(self.device),
                             cache=self.cache,
                             use_cache=True, output_attentions=self.need_weights)
        self.cache = out.cache
        return out.logits[:, -1], out.decoder_attentions, out.cross_attentions

    def reorder(self, index: torch.Tensor) -> None:
        self.cache.reorder_cache(index.to(self.device))

    def cache_rows(self) -> list[tuple[int, int]]:
        if self.cache is None:  # the model makes its cache, cross-attention keys and values too, at step 0
            return []
        parts = (self.cache.self_attention_cache.layers, self.cache.cross_attention_cache.layers)
        return [tuple(0 if layer.keys is None else int(layer.keys.shape[-2]) for layer in pair)
                for pair in zip(*parts)]

    def recompute(self, prefix: torch.Tensor):
        enc, keep = self.enc, self.keep
        with ablating(self.model, self.head_keep):
            out = self.model(encoder_outputs=enc, attention_mask=keep, decoder_input_ids=prefix.to(self.device),
                             use_cache=False,
                             output_attentions=True)
        return (out.logits[:, -1], [w[:, :, -1:] for w in out.decoder_attentions],
                [w[:, :, -1:] for w in out.cross_attentions])


class HFEngine(Engine):
    """One Hugging Face seq2seq model and its tokenizer. Build with `HFEngine.load(folder_or_hub_id)`."""

    def __init__(self, model: Any, tokenizer: Any, name: str, card: dict[str, Any]) -> None:
        self.model = model
        self.device, self.dtype = model.device, model.dtype
        self.tokenizer = tokenizer
        self.name = name
        self.card = card
        config = model.config
        self.family = str(config.model_type)
        gen = model.generation_config
        self.pad_id = config.pad_token_id if config.pad_token_id is not None else gen.pad_token_id
        start = gen.decoder_start_token_id
        if start is None:
            start = config.decoder_start_token_id
        if isinstance(start, (list, tuple)):
            start = start[0]
        if start is None:
            raise CheckpointError(f"{name}: the config names no decoder_start_token_id, so decoding cannot start")
        self.start_id = int(start)
        self.eos_ids = frozenset(_ids(gen.eos_token_id) | _ids(config.eos_token_id))
        if not self.eos_ids:
            raise CheckpointError(f"{name}: the config names no eos_token_id, so decoding could not stop")
        self.end_id = min(_ids(config.eos_token_id) or self.eos_ids)
        # mBART / NLLB style: the generation config forces the first generated token (e.g. a language code).
        self.forced_first = gen.forced_bos_token_id
        self.vocab_size = model.get_output_embeddings().weight.shape[0]
        positions = [getattr(config, k, None) for k in ("max_position_embeddings", "n_positions",
                                                        "max_source_positions")]
        positions = [p for p in positions if isinstance(p, int) and p > 0]
        self.max_target_tokens = min(positions, default=T5_CAP)
        tok_max = getattr(tokenizer, "model_max_length", None)  # "very large" when the tokenizer sets none
        self.max_source_tokens = min(self.max_target_tokens, tok_max if isinstance(tok_max, int) and tok_max > 0
                                     else self.max_target_tokens)
        self._source_vocab = None
        if getattr(tokenizer, "separate_vocabs", False):  # Marian with two vocabularies: pieces differ by side
            self._source_vocab = {v: k for k, v in tokenizer.encoder.items()}
        found = probe_structure(model, name, self.start_id, self.end_id, self.probe_features())
        self.n_encoder_layers, self.n_decoder_layers = found.n_encoder_layers, found.n_decoder_layers
        self.n_heads = found.n_heads
        self.supports_causal_switch, self.supports_shift_switch = found.supports_causal_switch, True
        self.switch_notes = dict(found.switch_notes)
        self.bug_notes = {k: v.replace("this model family:", f"this model family ({self.family}):", 1)
                          for k, v in BUG_NOTES.items()}  # the refusal names the family
        install(model)  # the dormant ablation hooks, once per model (a second engine on it adds none)
        self._bound: dict[tuple[str | None, str | None], HFEngine] = {}
        self._bound_lock = threading.Lock()
        self._root = self
        if self.languages():  # a multilingual model: the tokenizer's own languages, the target forced first
            self.src_lang = getattr(tokenizer, "src_lang", None)
            tgt = getattr(tokenizer, "tgt_lang", None)
            if self.forced_first is not None:
                tgt = next((c for c in self.languages() if self._lang_id(c) == int(self.forced_first)), tgt)
            if tgt is not None and tgt in self.languages():
                self.tgt_lang, self.forced_first = tgt, self._lang_id(tgt)

    @classmethod
    def load(cls, spec: str | Path, allow_hub: bool = False, device: torch.device | None = None,
             dtype: torch.dtype = torch.float32) -> HFEngine:
        """A local folder, or (allow_hub) a hub id, placed on `device` (None: the CPU) with weights of `dtype`; a
        Whisper folder opens as a WhisperEngine (model.hf.whisper). Raises CheckpointError with a plain message."""
        model, tokenizer, name, card = load_folder(spec, allow_hub, device, dtype)
        if card["family"] in SPEECH_FAMILIES:
            from attention_lens.model.hf.whisper import WhisperEngine

            return WhisperEngine(model, tokenizer, name, card, load_feature_extractor(spec, allow_hub))
        return cls(model, tokenizer, name, card)

    def probe_features(self) -> torch.Tensor | None:
        """What the structure probe runs on (model.hf.probes.probe_structure): None, two token ids; a speech family
        gives its input features."""
        return None

    def source_batch(self, srcs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The encoder's input of a batch of sources: (B, n) ids right-padded with the pad id, and Hugging Face's
        attention_mask (B, n), 1 real and 0 padding. A speech family stacks its input features (mask None)."""
        src, keep = pad_batch(srcs, self.pad_id if self.pad_id is not None else self.end_id)
        return src, keep.long()

    # ---- languages --------------------------------------------------------------------------------------------
    def languages(self) -> tuple[str, ...]:
        """mBART-50 and M2M-100 tokenizers list their codes (`lang_code_to_id`); NLLB's are the extra special
        tokens shaped `xxx_Xxxx`. Other families: none."""
        tok = self.tokenizer
        codes = getattr(tok, "lang_code_to_id", None)
        if codes:
            return tuple(str(c) for c in codes)
        if getattr(tok, "src_lang", None) is None:
            return ()
        extra = getattr(tok, "extra_special_tokens", None) or getattr(tok, "additional_special_tokens", None) or ()
        return tuple(str(t) for t in extra if NLLB_CODE.fullmatch(str(t)))

    def _lang_id(self, code: str) -> int:
        """The id of a language code's token (M2M-100: `fr` -> `__fr__`)."""
        get = getattr(self.tokenizer, "get_lang_id", None)
        return int(get(code)) if get is not None else int(self.tokenizer.convert_tokens_to_ids(code))

    def with_languages(self, src_lang: str | None, tgt_lang: str | None) -> HFEngine:
        """A copy of this engine sharing the model, with its own copy of the tokenizer set to `src_lang` (the
        source's language token) and `tgt_lang` (its target mode, and the forced first token); built once per
        pair and kept. A code the model does not have is refused in one sentence."""
        root = self._root
        codes = root.languages()
        if not codes:
            return super().with_languages(src_lang, tgt_lang)
        src, tgt = src_lang or self.src_lang, tgt_lang or self.tgt_lang
        for flag, code in (("--src-lang", src), ("--tgt-lang", tgt)):
            if code is not None and code not in codes:
                raise ModelInputError(f"{flag} {code!r} is not a language code of this {root.family} model "
                                      f"({len(codes)} codes, e.g. {', '.join(codes[:4])}).")
        if (src, tgt) == (root.src_lang, root.tgt_lang):
            return root
        with root._bound_lock:
            if (src, tgt) not in root._bound:
                bound = copy.copy(root)
                bound.tokenizer = copy.deepcopy(root.tokenizer)
                if src is not None:
                    bound.tokenizer.src_lang = src
                if tgt is not None:
                    bound.tokenizer.tgt_lang = tgt
                bound.src_lang, bound.tgt_lang = src, tgt
                bound.forced_first = root.forced_first if tgt is None else root._lang_id(tgt)
                root._bound[(src, tgt)] = bound
            return root._bound[(src, tgt)]

    # ---- text -----------------------------------------------------------------------------------------------
    def normalise(self, text: str) -> str:
        """Only control characters and runs of whitespace go: the model's tokenizer does the rest."""
        return clean(text, MAX_INPUT_CHARS)

    def encode_source(self, text: str) -> tuple[list[int], list[str]]:
        ids = [int(i) for i in self.tokenizer(text)["input_ids"]]
        return ids, [self.source_piece(i) for i in ids]

    def encode_target(self, text: str, truncate: bool = True) -> list[int]:
        ids = [int(i) for i in self.tokenizer(text_target=text)["input_ids"]]
        limit = self.max_target_tokens if truncate else len(ids) + 1
        ids = ids[:limit]
        if not ids or ids[-1] not in self.eos_ids:
            ids = [*ids[: limit - 1], self.end_id]
        return ids

    def piece(self, token_id: int) -> str:
        try:  # M2M-100's language ids lie past len(tokenizer); a model may embed more rows than its tokenizer has
            token = self.tokenizer.convert_ids_to_tokens(int(token_id)) if 0 <= token_id < self.vocab_size else None
        except (IndexError, KeyError, ValueError, OverflowError):
            token = None
        return token if isinstance(token, str) else f"<id {token_id}>"

    def piece_to_id(self, piece: str) -> int | None:
        i = self.tokenizer.convert_tokens_to_ids(piece)
        return i if isinstance(i, int) and self.piece(i) == piece else None

    def source_piece(self, token_id: int) -> str:
        if self._source_vocab is not None:
            return self._source_vocab.get(int(token_id), f"<id {token_id}>")
        return self.piece(token_id)

    def detokenize(self, ids: list[int]) -> str:
        return self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=True).strip()

    def special_ids(self) -> set[int]:
        """pad, end, decoder start, the forced first token, the tokenizer's own specials, and every language
        code's token: the model's languages (mBART-50, M2M-100, NLLB: an M2M100Tokenizer does not list its
        `__xx__` tokens among its specials) and Marian's `>>xx<<` target-language codes."""
        ids = {int(i) for i in self.tokenizer.all_special_ids} | self.eos_ids | _ids(self.pad_id)
        ids |= _ids(self.start_id) | _ids(self.forced_first)
        codes = getattr(self.tokenizer, "supported_language_codes", None) or []
        ids |= {int(i) for i in self.tokenizer.convert_tokens_to_ids(list(codes))}
        return ids | self._language_ids

    @functools.cached_property
    def _language_ids(self) -> frozenset[int]:
        return frozenset(self._lang_id(code) for code in self.languages())

    def unknown_pieces(self) -> frozenset[str]:
        unk = self.tokenizer.unk_token
        return frozenset() if unk is None else frozenset({str(unk)})

    def unknown_words(self, normalised: str) -> list[str]:
        """Words whose tokens include the tokenizer's unknown id; a tokenizer without one (byte-level BPE)
        can spell every word, so it names none."""
        unk = self.tokenizer.unk_token_id
        if unk is None:
            return []
        out: list[str] = []
        for word in normalised.split():
            if word not in out and unk in self.tokenizer(word, add_special_tokens=False)["input_ids"]:
                out.append(word)
        return out

    # ---- forward passes -------------------------------------------------------------------------------------
    def teacher_forced_batch(self, srcs: list[list[int]], labels: list[list[int]], options: DecodeOptions,
                             need_weights: bool = True) -> list[RawRun]:
        """Every pair in one padded pass. With the shift row t reads label t-1 (row 0 the decoder start token);
        without it, row t reads label t. Sources and decoder inputs are right-padded: padded source keys are
        masked (attention_mask); a decoder row never reads the padding after it under the causal mask, and with
        causal off the full mask stops at each pair's own length. Each pair's arrays are cut to its lengths;
        attention comes back only when need_weights (or contributions, which are computed from it), else the
        arrays are empty. The heads of options.ablate are off."""
        self.check_options(options)
        keep = self.head_masks(options)
        pad = self.pad_id if self.pad_id is not None else self.end_id
        dec_ins = [[self.start_id, *labs[:-1]] if options.shift else list(labs) for labs in labels]
        src, src_keep = self.source_batch(srcs)
        dec, dec_keep = pad_batch(dec_ins, pad)
        allowed = None
        if not options.causal:  # (B, 1, m, m): every query may read every real key of its own pair
            allowed = (full_mask(dec.shape[1]) & dec_keep[:, None, None, :])
        weights = need_weights or options.contributions
        with ablating(self.model, keep):
            out = forward(self.model, src, dec, allowed, hidden=options.contributions, src_keep=src_keep,
                          weights=weights)
        def cut(attentions: Any, b: int, q: int, k: int) -> np.ndarray:  # pair b's (layers, h, q, k)
            return np.stack([to_numpy(a[b, :, :q, :k]) for a in attentions]) if weights else np.zeros(0)

        runs = []
        for b, (src_ids, dec_in, labs) in enumerate(zip(srcs, dec_ins, labels)):
            n, m = len(src_ids), len(dec_in)
            runs.append(RawRun(
                extra={"parts": parts_of(self.model, out, keep, b, n, m)} if options.contributions else {},
                src_ids=list(src_ids), dec_in_ids=dec_in, out_ids=list(labs), logits=to_numpy(out.logits[b, :m]),
                enc_attn=cut(out.encoder_attentions, b, n, n), dec_attn=cut(out.decoder_attentions, b, m, m),
                cross_attn=cut(out.cross_attentions, b, m, n)))
        return runs

    def head_off_nll(self, srcs: list[list[int]], labels: list[list[int]], options: DecodeOptions,
                     heads: list[str]) -> np.ndarray:
        """Many heads per pass (model.hf.ablation.head_off_nll: a copy of the batch per head, a head mask per row,
        the encoder run once for the decoder's heads); the same sums as one teacher_forced_batch per head."""
        if options.bugs or options.contributions or not heads or not getattr(self.model, ABLATION_MARK, False):
            return super().head_off_nll(srcs, labels, options, heads)
        self.check_options(options)
        pad = self.pad_id if self.pad_id is not None else self.end_id
        dec_ins = [[self.start_id, *labs[:-1]] if options.shift else list(labs) for labs in labels]
        src, src_keep = pad_batch(srcs, pad)
        dec, dec_keep = pad_batch(dec_ins, pad)
        lab = torch.full(dec.shape, IGNORE, dtype=torch.long)
        for i, seq in enumerate(labels):
            lab[i, :len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask = None
        if not options.causal:  # as teacher_forced_batch: every query may read every real key of its own pair
            mask = additive_mask(full_mask(dec.shape[1]) & dec_keep[:, None, None, :], self.model.dtype)
        return batched_head_off_nll(self.model, src, src_keep.long(), dec, mask, lab, list(heads))

    def contribution_parts(self, run: RawRun, options: DecodeOptions) -> ContributionParts:
        """The replay runs with the same heads off as the run did (their norms 0, as in our own engine)."""
        keep = self.head_masks(options)
        with ablating(self.model, keep):
            return contribution_parts(self.model, run, options.causal_mask, keep)

    def layer_logits(self, run: RawRun, options: DecodeOptions) -> torch.Tensor:
        """The replay runs with the same heads off as the run did (model.hf.lens)."""
        return lens.layer_logits(self.model, run, options.causal_mask,
                                 self.head_masks(options))

    def embedded_run(self, run: RawRun, options: DecodeOptions, chosen: list[int]) -> EmbeddedRun:
        """Baseline: the padding id's embedding (the end id's for a model without one)."""
        return lens.embedded_run(self.model, run, chosen, options.causal_mask,
                                 self.pad_id if self.pad_id is not None else self.end_id, self.head_masks(options))

    def decoder_dims(self) -> dict[str, int]:
        """From the config: BART / Marian / M2M-100 name decoder_ffn_dim; T5 d_ff, d_kv (its heads x d_kv need
        not equal d_model) and a gated feed-forward (three matrices) in v1.1 and mT5."""
        c = self.model.config
        d_kv = getattr(c, "d_kv", None)
        return {"d_model": int(c.d_model), "d_attn": int(self.n_heads * d_kv) if d_kv else int(c.d_model),
                "d_ff": int(getattr(c, "decoder_ffn_dim", None) or c.d_ff),
                "ff_matrices": 3 if getattr(c, "is_gated_act", False) else 2, "vocab": int(self.vocab_size)}

    def start_decoding(self, srcs: list[list[int]], options: DecodeOptions, need_weights: bool) -> Stepper:
        self.check_bugs(options)
        return HFStepper(self.model, srcs, self.pad_id if self.pad_id is not None else self.end_id, need_weights,
                         self.head_masks(options))

    def forced_prefix(self, options: DecodeOptions) -> tuple[int, ...]:
        """The forced prefix: the user's, or else the model's own forced first token (mBART, NLLB...)."""
        if options.forced:
            return tuple(options.forced)
        return () if self.forced_first is None else (int(self.forced_first),)

    def restrict(self, logits: torch.Tensor, free_step: int = 0) -> torch.Tensor:
        """Free-running choices never pick the pad token (as Marian's generation config bans it:
        bad_words_ids = [[pad]]); the reported probabilities are the model's, unchanged."""
        if self.pad_id is None or self.pad_id in self.eos_ids:
            return logits
        return logits.index_fill(-1, torch.tensor([self.pad_id], device=logits.device), float("-inf"))
