"""The engine for Hugging Face encoder-decoder checkpoints (Marian, T5 / mT5, BART / mBART, Pegasus, M2M-100...).

Attention weights are the model's own return values (`output_attentions=True`: `encoder_attentions`,
`decoder_attentions`, `cross_attentions`, one (B, h, Tq, Tk) tensor per layer). Only the eager attention
implementation computes them, so the model is always loaded with `attn_implementation="eager"`. Free-running
decoding goes one position per call through the model's own key-value cache (`cache=`, an
`EncoderDecoderCache`), and records each step's rows as computed. The loaded model is never changed: options
are arguments, masks are tensors passed in.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError

from model.beam import beam_search as shared_beam_search
from model.checkpoint import CheckpointError, refuse_pickles
from model.decoding import choose_next
from model.engine import DecodeOptions, Engine, ModelInputError, RawRun
from model.masks import causal_mask, full_mask
from model.text import MAX_INPUT_CHARS, clean

# Files of which at least one must be present for AutoTokenizer to build the model's own tokenizer.
TOKENIZER_FILES = ("tokenizer.json", "spiece.model", "source.spm", "sentencepiece.bpe.model", "vocab.json",
                   "vocab.txt", "merges.txt", "sentencepiece.model", "spm.model")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json")
T5_CAP = 512  # T5 has relative positions, hence no hard limit; 512 is the length it was pre-trained on.


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().float().numpy()


def additive_mask(allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Boolean mask (True = may attend) -> the additive float mask eager attention adds to its scores
    (0 where allowed, the dtype's minimum where not). Hugging Face's mask helpers pass a 4-D mask through
    unchanged (`masking_utils._preprocess_mask_arguments`), so this is how a custom mask reaches the model."""
    return torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)


def _ids(value: Any) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, (list, tuple, set)):
        return {int(v) for v in value}
    return {int(value)}


def _refuse_config(config: Any, spec: str) -> None:
    """Raise CheckpointError unless the config describes a text-to-text encoder-decoder."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    kind = config.model_type
    if kind in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES and getattr(config, "is_encoder_decoder", False):
        return
    if kind in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        raise CheckpointError(
            f"{spec} is an encoder-only model ({kind}): it reads text but has no decoder, so it cannot translate "
            f"and has no decoder or cross-attention to show. Open an encoder-decoder (seq2seq) model such as "
            f"Marian, T5 or BART.")
    if kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise CheckpointError(
            f"{spec} is a decoder-only model ({kind}): it has no encoder, hence no cross-attention from target "
            f"to source. Open an encoder-decoder (seq2seq) model such as Marian, T5 or BART.")
    raise CheckpointError(f"{spec} is a {kind!r} model, not a text-to-text encoder-decoder (seq2seq) model; "
                          f"this tool opens models such as Marian, T5, BART, Pegasus or M2M-100.")


class HFEngine(Engine):
    """One Hugging Face seq2seq model and its tokenizer. Build with `HFEngine.load(folder_or_hub_id)`."""

    def __init__(self, model: Any, tokenizer: Any, name: str, card: dict[str, Any]) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.card = card
        config = model.config
        self.family = str(config.model_type)
        gen = model.generation_config
        self.pad_id = config.pad_token_id if config.pad_token_id is not None else gen.pad_token_id
        self.start_id = gen.decoder_start_token_id
        if self.start_id is None:
            self.start_id = config.decoder_start_token_id
        if isinstance(self.start_id, (list, tuple)):
            self.start_id = self.start_id[0]
        if self.start_id is None:
            raise CheckpointError(f"{name}: the config names no decoder_start_token_id, so decoding cannot start")
        self.eos_ids = _ids(gen.eos_token_id) | _ids(config.eos_token_id)
        if not self.eos_ids:
            raise CheckpointError(f"{name}: the config names no eos_token_id, so decoding could not stop")
        self.eos_id = min(_ids(config.eos_token_id) or self.eos_ids)
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
        self._probe_structure()

    # ---- loading --------------------------------------------------------------------------------------------
    @classmethod
    def load(cls, spec: str | Path, allow_hub: bool = False) -> HFEngine:
        """A local folder, or (allow_hub) a hub id. Raises CheckpointError with a plain message."""
        from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer

        spec = str(spec)
        path = Path(spec)
        local = path.is_dir()
        if not local:
            if not allow_hub:
                raise CheckpointError(f"{spec}: no such model folder (hub ids need the hub to be allowed)")
        else:
            if not any(path.iterdir()):
                raise CheckpointError(f"{spec} is an empty folder, not a model")
            if not (path / "config.json").is_file():
                raise CheckpointError(f"{spec} is not a model folder: it has no config.json")
            refuse_pickles(path)
        hub = dict(local_files_only=local)  # never trust_remote_code: a folder must not run its own code
        try:
            config = AutoConfig.from_pretrained(spec, **hub)
        except (OSError, ValueError, KeyError) as exc:
            raise CheckpointError(f"{spec}: config.json cannot be read as a Hugging Face config ({exc})") from exc
        _refuse_config(config, spec)
        if local:
            if not any((path / f).is_file() for f in TOKENIZER_FILES):
                raise CheckpointError(
                    f"{spec} has no tokenizer files (none of {', '.join(TOKENIZER_FILES)}): without the model's "
                    f"own tokenizer its token ids cannot be read. Save the tokenizer into the folder "
                    f"(tokenizer.save_pretrained(folder)).")
            if not any((path / f).is_file() for f in WEIGHT_FILES):
                raise CheckpointError(f"{spec} has no safetensors weights ({' or '.join(WEIGHT_FILES)})")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. Marian's "Recommended: pip install sacremoses."
                tokenizer = AutoTokenizer.from_pretrained(spec, **hub)
        except Exception as exc:  # tokenizer classes raise many types (OSError, ValueError, AssertionError, ...)
            raise CheckpointError(f"{spec}: its tokenizer cannot be loaded ({type(exc).__name__}: {exc})") from exc
        try:
            model, info = AutoModelForSeq2SeqLM.from_pretrained(
                spec, attn_implementation="eager", use_safetensors=True, dtype=torch.float32,
                output_loading_info=True, **hub)
        except SafetensorError as exc:
            raise CheckpointError(f"{spec}: its safetensors weights are corrupt or truncated ({exc})") from exc
        except (OSError, ValueError, RuntimeError) as exc:
            if "mismatched_sizes" in str(exc):  # transformers logs the table of shapes; say it in one sentence
                raise CheckpointError(f"{spec}: config.json disagrees with the weights: some weights have other "
                                      f"shapes than the config implies (e.g. a changed d_model or vocab_size)"
                                      ) from exc
            raise CheckpointError(f"{spec}: the model cannot be loaded ({exc})") from exc
        missing = sorted(info.get("missing_keys", []))
        if missing:
            raise CheckpointError(f"{spec}: the weights file lacks {len(missing)} weights the config needs "
                                  f"(e.g. {missing[:3]}); they would be random")
        if model.config._attn_implementation != "eager":
            raise CheckpointError(f"{spec}: eager attention could not be set, so no attention weights come back")
        model.eval()
        model.requires_grad_(False)
        rows = model.get_input_embeddings().weight.shape[0]
        if len(tokenizer) > rows:
            raise CheckpointError(f"{spec}: the tokenizer has {len(tokenizer)} tokens but the model embeds only "
                                  f"{rows}: they do not belong together")
        card = {"source": spec, "family": config.model_type, "architectures": list(config.architectures or []),
                "parameters": sum(p.numel() for p in model.parameters()), "vocab_size": rows,
                "tokenizer": type(tokenizer).__name__, "hub": not local}
        return cls(model, tokenizer, path.name if local else spec, card)

    def _probe_structure(self) -> None:
        """One tiny forward pass: read the layer and head counts from the attentions the model returns, and
        check whether a custom 4-D decoder mask is honoured (the causal switch)."""
        src = torch.tensor([[self.eos_id, self.eos_id]])
        dec = torch.tensor([[self.start_id, self.eos_id, self.eos_id, self.eos_id]])
        try:
            out = self._forward(src, dec, None)
        except Exception as exc:  # any family-specific failure means we cannot trace this model
            raise CheckpointError(f"{self.name}: a test forward pass failed ({type(exc).__name__}: {exc})") from exc
        kinds = {"encoder": out.encoder_attentions, "decoder": out.decoder_attentions, "cross": out.cross_attentions}
        absent = [k for k, v in kinds.items() if not v or any(a is None for a in v)]
        if absent:
            raise CheckpointError(f"{self.name}: this {self.family} implementation returns no "
                                  f"{' / '.join(absent)} attention weights, so there is nothing to trace")
        n, m = src.shape[1], dec.shape[1]
        expected = {"encoder": (n, n), "decoder": (m, m), "cross": (m, n)}
        for kind, arrays in kinds.items():
            shapes = {tuple(a.shape[2:]) for a in arrays}
            if shapes != {expected[kind]}:
                raise CheckpointError(
                    f"{self.name}: this {self.family} implementation returns {kind} attention shaped "
                    f"{sorted(shapes)} for {n} source and {m} target tokens, not one (queries, keys) matrix per "
                    f"head (e.g. local / n-gram-stream attention), so it cannot be traced")
        heads = {a.shape[1] for v in kinds.values() for a in v}
        if len(heads) != 1:
            raise CheckpointError(f"{self.name}: encoder and decoder have different head counts {sorted(heads)}; "
                                  f"a trace needs one head count")
        self.n_encoder_layers = len(out.encoder_attentions)
        self.n_decoder_layers = len(out.decoder_attentions)
        self.n_heads = heads.pop()
        self.supports_shift_switch = True
        self.switch_notes = {"shift": "Without the shift the decoder reads the labels themselves "
                                      "(decoder_input_ids = labels)."}
        self.supports_causal_switch, self.switch_notes["causal"] = self._check_causal_switch(src, dec, out)

    def _check_causal_switch(self, src: torch.Tensor, dec: torch.Tensor, default: Any) -> tuple[bool, str]:
        """The switch works iff the model applies a 4-D decoder mask exactly as given: (a) an explicit causal
        mask reproduces the model's own attention, (b) a mask allowing only the LAST key (a future key for
        every earlier query) gives weight exactly 1 there. Both hold whatever the weights are."""
        m = dec.shape[1]
        last_only = torch.zeros(1, 1, m, m, dtype=torch.bool)
        last_only[..., -1] = True
        try:
            explicit = self._forward(src, dec, causal_mask(m))
            future = self._forward(src, dec, last_only)
        except Exception as exc:  # the family rejects a 4-D decoder mask
            return False, (f"{self.family} does not accept a custom decoder self-attention mask "
                           f"({type(exc).__name__}: {exc}), so the causal mask cannot be switched off.")
        same = all(torch.allclose(a, b, rtol=0, atol=1e-6)
                   for a, b in zip(explicit.decoder_attentions, default.decoder_attentions))
        follows = all(bool((a[0, :, :, -1] == 1).all()) for a in future.decoder_attentions)
        if not (same and follows):
            return False, (f"{self.family} ignores or alters a custom decoder self-attention mask (passed as a 4-D "
                           f"decoder_attention_mask), so the causal mask cannot be switched off reliably.")
        note = ("The mask is passed as a 4-D decoder_attention_mask, which Hugging Face applies as given.")
        if getattr(self.model.config, "relative_attention_num_buckets", None):
            note += (" T5-style decoders use unidirectional relative-position buckets: every future key falls in "
                     "the same bucket as the query's own position, so with the mask off the model sees future "
                     "tokens but not how far ahead they are.")
        return True, note

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
            ids = [*ids[: limit - 1], self.eos_id]
        return ids

    def piece(self, token_id: int) -> str:
        token = self.tokenizer.convert_ids_to_tokens(int(token_id)) if token_id < len(self.tokenizer) else None
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
        """pad, end, decoder start, the forced first token, and the tokenizer's own specials (language codes
        of mBART / M2M-100 / NLLB among them; Marian's `>>xx<<` target-language codes added explicitly)."""
        ids = {int(i) for i in self.tokenizer.all_special_ids} | self.eos_ids | _ids(self.pad_id)
        ids |= _ids(self.start_id) | _ids(self.forced_first)
        codes = getattr(self.tokenizer, "supported_language_codes", None) or []
        ids |= {int(i) for i in self.tokenizer.convert_tokens_to_ids(list(codes))}
        return ids

    def _to_trace(self, run, options, normalised, warnings):
        trace = super()._to_trace(run, options, normalised, warnings)
        src = tuple(self.source_piece(i) for i in run.src_ids)
        return type(trace)(**{**trace.__dict__, "source_tokens": src})

    # ---- forward passes -------------------------------------------------------------------------------------
    def _forward(self, src: torch.Tensor, dec: torch.Tensor, allowed: torch.Tensor | None) -> Any:
        """src (1, n), dec (1, m); allowed: None (the model's own causal mask) or bool (1, 1, m, m)."""
        extra = {}
        if allowed is not None:
            extra["decoder_attention_mask"] = additive_mask(allowed, self.model.dtype)
        with torch.no_grad():
            return self.model(input_ids=src, attention_mask=torch.ones_like(src), decoder_input_ids=dec,
                              output_attentions=True, use_cache=False, **extra)

    def run_teacher_forced(self, src_ids: list[int], labels: list[int], causal: bool, shift: bool) -> RawRun:
        """One parallel pass. With the shift row t reads label t-1 (row 0 the decoder start token); without it,
        row t reads label t. With causal off, a full mask replaces the model's causal one."""
        if not causal and not self.supports_causal_switch:
            raise ModelInputError(self.switch_notes["causal"])
        dec_in = [self.start_id, *labels[:-1]] if shift else list(labels)
        m = len(dec_in)
        out = self._forward(torch.tensor([src_ids]), torch.tensor([dec_in]), None if causal else full_mask(m))
        return RawRun(
            src_ids=list(src_ids), dec_in_ids=dec_in, out_ids=list(labels), logits=_np(out.logits[0]),
            enc_attn=np.stack([_np(a[0]) for a in out.encoder_attentions]),
            dec_attn=np.stack([_np(a[0]) for a in out.decoder_attentions]),
            cross_attn=np.stack([_np(a[0]) for a in out.cross_attentions]))

    def _encode(self, srcs: list[list[int]], need_weights: bool) -> tuple[Any, torch.Tensor]:
        """Ragged source ids -> (encoder outputs, keep (B, n) long), padded with the pad id."""
        width = max(len(s) for s in srcs)
        pad = self.pad_id if self.pad_id is not None else self.eos_id
        ids = torch.full((len(srcs), width), pad, dtype=torch.long)
        keep = torch.zeros((len(srcs), width), dtype=torch.long)
        for i, s in enumerate(srcs):
            ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
            keep[i, : len(s)] = 1
        enc = self.model.get_encoder()(input_ids=ids, attention_mask=keep, output_attentions=need_weights)
        return enc, keep

    def _step(self, enc: Any, keep: torch.Tensor, last: torch.Tensor, cache: Any, need_weights: bool) -> Any:
        """One decoder position for every row: last (B, 1) -> output with logits (B, 1, V) and the cache."""
        return self.model(encoder_outputs=enc, attention_mask=keep, decoder_input_ids=last, cache=cache,
                          use_cache=True, output_attentions=need_weights)

    def _max_len(self, options: DecodeOptions, n: int) -> int:
        return min(options.max_len or 2 * n + 10, self.max_target_tokens)

    def _forced(self, options: DecodeOptions) -> tuple[int, ...]:
        """The forced prefix: the user's, or else the model's own forced first token (mBART, NLLB...)."""
        if options.forced:
            return tuple(options.forced)
        return () if self.forced_first is None else (int(self.forced_first),)

    def _free(self, logits: torch.Tensor) -> torch.Tensor:
        """Free-running choices never pick the pad token (as Marian's generation config bans it:
        bad_words_ids = [[pad]]); the reported probabilities are the model's, unchanged."""
        if self.pad_id is None or self.pad_id in self.eos_ids:
            return logits
        return logits.index_fill(-1, torch.tensor([self.pad_id]), float("-inf"))

    def _choose(self, logits: torch.Tensor, options: DecodeOptions, gen: torch.Generator) -> torch.Tensor:
        """logits (B, V) -> next ids (B,), as the builtin engine chooses, padding excluded."""
        return choose_next(self._free(logits), options, gen)

    @torch.no_grad()
    def _decode(self, srcs: list[list[int]], options: DecodeOptions, need_weights: bool = True) -> list[RawRun]:
        """Incremental decoding of a batch, one position per call, with the model's own cache. Row t of every
        attention is recorded at step t as computed; decoder self-attention row t has t+1 keys (the rest 0)."""
        enc, keep = self._encode(srcs, need_weights)
        batch = len(srcs)
        max_len = self._max_len(options, keep.shape[1])
        forced = self._forced(options)
        gen = torch.Generator().manual_seed(options.seed)
        last = torch.full((batch, 1), self.start_id, dtype=torch.long)
        filler = self.pad_id if self.pad_id is not None else self.eos_id
        eos = torch.tensor(sorted(self.eos_ids))
        cache, done = None, torch.zeros(batch, dtype=torch.bool)
        dec_in, out_ids, logits_rows, self_rows, cross_rows = [], [], [], [], []
        for t in range(max_len):
            out = self._step(enc, keep, last, cache, need_weights)
            cache = out.cache
            logits = out.logits[:, -1]  # (B, V)
            if t < len(forced):
                nxt = torch.full((batch,), forced[t], dtype=torch.long)
            else:
                nxt = self._choose(logits, options, gen)
            nxt = nxt.masked_fill(done, filler)
            dec_in.append(last[:, 0])
            out_ids.append(nxt)
            logits_rows.append(logits)
            if need_weights:
                self_rows.append([a[:, :, 0] for a in out.decoder_attentions])  # per layer (B, h, t+1)
                cross_rows.append([a[:, :, 0] for a in out.cross_attentions])  # per layer (B, h, n)
            done |= torch.isin(nxt, eos)
            last = nxt[:, None]
            if bool(done.all()):
                break
        outs, ins, all_logits = torch.stack(out_ids, 1), torch.stack(dec_in, 1), torch.stack(logits_rows, 1)
        runs = []
        for b, src in enumerate(srcs):
            n, row = len(src), outs[b].tolist()
            m = next((i + 1 for i, x in enumerate(row) if x in self.eos_ids), len(row))
            enc_attn = dec = cross = np.zeros(0)
            if need_weights:
                layers = len(self_rows[0])
                dec = np.zeros((layers, self.n_heads, m, m), dtype=np.float32)
                cross = np.zeros((layers, self.n_heads, m, n), dtype=np.float32)
                for t in range(m):
                    for layer in range(layers):
                        dec[layer, :, t, : t + 1] = _np(self_rows[t][layer][b])
                        cross[layer, :, t] = _np(cross_rows[t][layer][b, :, :n])
                enc_attn = np.stack([_np(a[b, :, :n, :n]) for a in enc.attentions])
            runs.append(RawRun(list(src), ins[b, :m].tolist(), row[:m], _np(all_logits[b, :m]), enc_attn, dec,
                               cross))
        return runs

    def run_generate(self, src_ids: list[int], options: DecodeOptions) -> RawRun:
        return self._decode([src_ids], options)[0]

    @torch.no_grad()
    def run_beam(self, src_ids: list[int], options: DecodeOptions) -> tuple[list[RawRun], list[list[dict]]]:
        """Beam search of width K (model.beam, shared with the builtin engine), stepping with the model's own
        cache, which `reorder_cache` makes follow the kept hypotheses."""
        enc, keep = self._encode([src_ids], True)
        state: dict[str, Any] = {"cache": None}

        def step(last: torch.Tensor, t: int):
            width = last.shape[0]
            enc_b = type(enc)(last_hidden_state=enc.last_hidden_state.expand(width, -1, -1))
            out = self._step(enc_b, keep.expand(width, -1), last, state["cache"], True)
            state["cache"] = out.cache
            return out.logits[:, -1], out.decoder_attentions, out.cross_attentions

        def reorder(index: torch.Tensor) -> None:
            state["cache"].reorder_cache(index)

        runs, steps = shared_beam_search(
            step, reorder, src_ids=list(src_ids), enc_attn=np.stack([_np(a[0]) for a in enc.attentions]),
            n_heads=self.n_heads, start_id=self.start_id, eos_ids=set(self.eos_ids), k_beams=options.beam_size,
            max_len=self._max_len(options, len(src_ids)), forced=self._forced(options), restrict=self._free)
        return runs, [[{"tokens": [self.piece(i) for i in b["tokens"]], "score": b["score"]} for b in s]
                      for s in steps]

    def translate_batch(self, sources: list[str], max_len: int | None = None) -> list[str]:
        """Greedy, batched, no attention captured: the same decoding loop as `run_generate`."""
        srcs = [self.fit_source(self.encode_source(self.normalise(s))[0]) for s in sources]
        runs = self._decode(srcs, DecodeOptions(max_len=max_len), need_weights=False)
        return [self.detokenize(r.out_ids) for r in runs]
