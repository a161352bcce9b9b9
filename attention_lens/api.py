"""Load a model and run it: `load(...)` gives a `Model`, and `Model.trace(...)` gives the Trace of one run.

The options of `Model.trace` are the options of the command line's `trace`, spelled as Python keywords
(`--no-causal-mask` is `no_causal_mask=True`, `--beam 5` is `beam=5`); they become the engine's `DecodeOptions`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attention_lens.model.engine import DecodeOptions, Engine, Trace

# The command line's names for the options whose DecodeOptions field is named otherwise.
CLI_NAMES = {"beam": "beam_size", "no_scaling": "unscaled"}


def load(path: str | Path, device: str = "auto", dtype: str | None = None, allow_hub: bool = False) -> Model:
    """Open a model: a shipped model's name ("everyday-en-fr", from any folder: model.engine.loader.find_named), a
    checkpoint folder of this project (`checkpoints/everyday-en-fr`) or a Hugging Face encoder-decoder folder
    written by `save_pretrained` (Marian, T5/mT5, BART/mBART, Pegasus, M2M-100, NLLB…).

    device: "auto" (a GPU when there is one, else the CPU), "cpu", "cuda", "cuda:1" or "mps".
    dtype: the weights' float type, "float32" (None: float32), "float16" or "bfloat16".
    allow_hub: let a Hugging Face hub id such as "Helsinki-NLP/opus-mt-en-de" be downloaded (needs the network).

    A folder that cannot be opened raises `CheckpointError` with a one-line reason.

    >>> model = load("everyday-en-fr")
    >>> model.trace("I love you.").target_tokens
    """
    from attention_lens.model.engine.loader import load_engine

    return Model(load_engine(path, allow_hub=allow_hub, device=device, dtype=dtype))


def options_from(target: str | None = None, *, decode: str = "greedy", beam: int = 4, temperature: float = 1.0,
                 top_k: int = 0, seed: int = 0, max_len: int | None = None, no_causal_mask: bool = False,
                 no_shift: bool = False, mask_after_softmax: bool = False, swap_cross: bool = False,
                 no_scaling: bool = False, ablate: str | Iterable[str] = (), contributions: bool = False,
                 lens: bool = False, saliency: bool = False, **fields: Any) -> DecodeOptions:
    """The engine's DecodeOptions from the command line's option names (see `Model.trace`). Any other keyword
    must be a DecodeOptions field (`report_top_k=10`) and is passed on as it is."""
    from attention_lens.model.engine import DecodeOptions

    known = {f.name for f in dataclasses.fields(DecodeOptions)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise TypeError(f"trace() got unknown option(s) {', '.join(unknown)}; the options are those of "
                        f"`attention-lens trace --help`, as keywords")
    if decode not in ("greedy", "beam", "sample"):
        raise ValueError(f"decode must be 'greedy', 'beam' or 'sample', got {decode!r}")
    heads = (ablate,) if isinstance(ablate, str) else tuple(ablate)
    values = dict(mode="teacher_forced" if target is not None else decode, causal=not no_causal_mask,
                  shift=not no_shift, beam_size=beam, temperature=temperature, top_k=top_k, seed=seed,
                  max_len=max_len, ablate=heads, contributions=contributions, lens=lens, saliency=saliency,
                  mask_after_softmax=mask_after_softmax, swap_cross=swap_cross, unscaled=no_scaling)
    values.update(fields)
    return DecodeOptions(**values)


class Model:
    """A loaded model (`load`): `trace` runs it. The engine underneath is `.engine` (model.engine.Engine), and
    its other members are reachable here too (`model.n_heads`, `model.lexicon()`)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def __repr__(self) -> str:
        e = self.engine
        return (f"<attention_lens.Model {e.name!r}: {e.family}, {e.n_encoder_layers} + {e.n_decoder_layers} layers "
                f"x {e.n_heads} heads>")

    def __getattr__(self, name: str) -> Any:
        if name == "engine":  # not set yet (unpickling): never recurse
            raise AttributeError(name)
        return getattr(self.engine, name)

    def trace(self, text: str | None = None, target: str | None = None, *, audio: Any = None,
              decode: str = "greedy", beam: int = 4,
              temperature: float = 1.0, top_k: int = 0, seed: int = 0, max_len: int | None = None,
              no_causal_mask: bool = False, no_shift: bool = False, mask_after_softmax: bool = False,
              swap_cross: bool = False, no_scaling: bool = False, ablate: str | Iterable[str] = (),
              contributions: bool = False, lens: bool = False, saliency: bool = False,
              out: str | Path | None = None, **fields: Any) -> Trace:
        """Translate `text` (a speech model: transcribe `audio`) and return the Trace: every attention weight of
        every layer and head at every step, the tokens, and each step's top next-token probabilities
        (docs/formats.md).

        audio: a speech model's clip instead of a text: a path (WAV, FLAC, OGG, MP3), the bytes of such a file, or
            (samples, rate) with samples shaped (n,) or (n, channels); read at 16 kHz mono (docs/speech.md). The
            Trace's source axis is then the clip's time (its `source` object). `language="de"`, `task="translate"`
            choose Whisper's forced prefix.
        target: a reference translation (a speech model: the transcript): one teacher-forced pass over it instead
            of decoding.
        decode: "greedy", "beam" (`beam` hypotheses; the Trace is the best, `.beams` all of them) or "sample"
            (`temperature`, `top_k` (0 = all tokens), `seed`). max_len: the most tokens to write.
        no_causal_mask / no_shift: teacher forcing with the decoder's causal mask off / the target not shifted
            right (the label-leakage bugs; free-running decoding cannot see the future anyway).
        mask_after_softmax / swap_cross / no_scaling: three more silent bugs, on for this run only (models of
            this project only; a Hugging Face model refuses them with the reason).
        ablate: heads switched off, "KIND:LAYER:HEAD" (KIND enc|dec|cross, 1-based, * = all), e.g. "cross:3:1".
        contributions / lens / saliency: add norm-weighted attention and rollout, the logit lens, or integrated
            gradients to the Trace.
        out: also write the Trace to this .json or .npz file.

        The loaded model is never changed: every option holds for this run only.

        >>> trace = model.trace("Where is the train station?", decode="beam", beam=5)
        >>> trace.target_tokens, trace.cross_attention.shape   # (layers, heads, target rows, source tokens)
        """
        options = options_from(target, decode=decode, beam=beam, temperature=temperature, top_k=top_k, seed=seed,
                               max_len=max_len, no_causal_mask=no_causal_mask, no_shift=no_shift,
                               mask_after_softmax=mask_after_softmax, swap_cross=swap_cross, no_scaling=no_scaling,
                               ablate=ablate, contributions=contributions, lens=lens, saliency=saliency, **fields)
        self.engine.check_bugs(options)
        trace = self.engine.trace(text, target=target, options=options, audio=audio)
        if out is not None:
            trace.save(Path(out))
        return trace

    def trace_file(self, data: str | Path, out: str | Path, batch_size: int = 16, shard: str | None = None,
                   window: int | None = None, **options: Any) -> int:
        """`attention-lens trace --data FILE --out FOLDER`: one Trace per line of a TSV file
        (source[<TAB>target]; a line with a target is teacher-forced) written as FOLDER/0001.json, ...
        shard: "K/N" traces only the lines whose number i has (i - 1) mod N == K - 1 (the files keep the line
        numbers); window: lines read ahead and sorted by length before batching (default 2048). Takes the
        keywords of `trace`; returns 0, or 1 when some lines failed (each named on stderr)."""
        from attention_lens.model.cli.trace_data import trace_data
        from attention_lens.model.engine.stream import WINDOW, Shard

        decode_options = options_from(None, **options)
        self.engine.check_bugs(decode_options)
        return trace_data(self.engine, str(data), Path(out), decode_options, batch_size, Shard.parse(shard),
                          WINDOW if window is None else window)

    def folder(self) -> str:
        """The folder the model was opened from (a shipped model's name resolved to its folder)."""
        from attention_lens.model.engine.loader import find_named

        source = str(self.engine.card.get("source", self.engine.name))
        return str(find_named(source) or source)

    def word_timings(self, trace: Trace | None = None, alignment_heads: Iterable[tuple[int, int]] | None = None, *,
                     audio: Any = None, target: str | None = None, token_rows: str = "reading") -> list[Any]:
        """A speech model's words with their DTW start and end (s), Whisper's recipe over `alignment_heads`
        ((layer, head) pairs, 0-based; default: the model folder's generation_config.json), read off `trace` or
        off a run of `audio` (a path, bytes or (samples, rate); teacher-forced when `target` is given).
        token_rows: "reading" (transformers' rule: the row that reads a token times it) or "predicting"
        (openai/whisper's: the row that predicts it).
        model.analysis.timing.trace_times.word_timings; a list of WordTiming(word, start, end, first, last).

        >>> whisper = load("checkpoints/spoken-grammar")
        >>> [(w.word, w.start) for w in whisper.word_timings(audio="clip.wav")]
        """
        from attention_lens.model.analysis.timing.config import read_generation_config
        from attention_lens.model.analysis.timing.trace_times import word_timings

        if trace is None:
            if audio is None:
                raise ValueError("word_timings needs a Trace or audio=...")
            trace = self.engine.trace(audio=audio, target=target,
                                      options=options_from(target))
        heads = list(alignment_heads) if alignment_heads is not None else \
            read_generation_config(self.folder()).get("alignment_heads")
        if not heads:
            raise ValueError("give alignment_heads=[(layer, head), ...]: the model's generation config has none")
        return word_timings(trace, [tuple(h) for h in heads], token_rows=token_rows)

    def rank_alignment_heads(self, audio_data: str | Path, timings: str | Path | None = None, *,
                             alignment_heads: Iterable[tuple[int, int]] | None = None,
                             select_on: str | Path | None = None, shard: str | None = None,
                             generation_config: str | Path | None = None, batch_size: int = 2,
                             progress: bool = False, token_rows: str = "reading") -> dict[str, Any]:
        """`attention-lens align --audio-data LIST --timings GOLD --json`: every cross-attention head of a speech
        model ranked as a word timer against gold timings (CTM, a folder of TextGrids, or the list's third column),
        the best set chosen greedily (on `select_on`, else the list's first half) or `alignment_heads` scored; the
        report as a dict (`heads` best first, `alignment_heads`, `clips` worst first, `breakdown`).
        generation_config: also write the model's generation_config.json with those alignment_heads there.
        token_rows: which decoder row times a token, "reading" (transformers') or "predicting" (openai/whisper's)."""
        from attention_lens.model.analysis.timing.config import write_generation_config
        from attention_lens.model.analysis.timing.run import rank_clips
        from attention_lens.model.engine.stream import Shard

        heads = [tuple(h) for h in alignment_heads] if alignment_heads is not None else None
        report = rank_clips(self.engine, str(audio_data), None if timings is None else str(timings), heads=heads,
                            select_on=None if select_on is None else str(select_on), shard=Shard.parse(shard),
                            batch_size=batch_size, progress=progress, token_rows=token_rows)
        if generation_config is not None:
            write_generation_config(self.folder(), report["alignment_heads"], str(generation_config))
        return report


def load_trace(path: str | Path) -> Trace:
    """A Trace written by `trace(..., out=...)`, `attention-lens trace` or the app's export (.json or .npz)."""
    from attention_lens.model.engine.trace import Trace

    return Trace.load(Path(path))
