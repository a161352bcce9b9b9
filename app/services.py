"""The app's one caller of model/'s engines: cached engines and traces, and the analyses the pages show.

Every page and figure reaches models through this module only: engines through the engine contract
(model.engine.Engine), results as Traces and the analyses' own result objects. Cached results are shared by
every session of the server and never mutated. An uploaded file of pairs is read and checked by app.uploads;
what a model makes of it (its alignment, its heads' ranking) is here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st
from attention_lens.app import registry, timing_files
from attention_lens.app.uploads import CheckedUpload, check_upload, upload_digest
from attention_lens.model.analysis import alignment, bug_meters, exposure, kv_cache
from attention_lens.model.analysis.ablation import rank_heads
from attention_lens.model.analysis.bug_meters import row_sums, sharpness, swap_meter
from attention_lens.model.analysis.card_pages import own_test_examples
from attention_lens.model.analysis.compare import difference
from attention_lens.model.analysis.head_roles import head_roles
from attention_lens.model.analysis.kv_cache import Measured, expected_rows, generation_macs, step_macs
from attention_lens.model.analysis.leakage import (
    CARD_SAMPLE,
    LeakageMeter,
    SampleReport,
    measure,
    repetition,
    sample_report,
)
from attention_lens.model.analysis.probe import ProbeResult, probe
from attention_lens.model.audio import Audio, AudioError, read_audio
from attention_lens.model.corpora import PAIRS, Example, read_tsv
from attention_lens.model.engine import CheckpointError, DecodeOptions, Engine, ModelInputError, Trace, load_engine
from attention_lens.model.engine.bugs import EXPLAIN as BUG_EXPLAIN
from attention_lens.model.engine.device import DeviceError
from attention_lens.model.engine.heads import CODE_OF, KIND_CODES, every_head
from attention_lens.model.engine.options import MODES
from attention_lens.model.engine.text import UNKNOWN_WORDS
from attention_lens.model.engine.trace import KINDS

__all__ = ["Audio", "AudioError", "get_audio_trace", "is_speech", "read_clip",
           "BUG_EXPLAIN", "CODE_OF", "KIND_CODES", "MODES", "difference", "equal_length_target", "head_names",
           "row_sums", "sharpness", "swap_meter",
           "expected_rows", "generation_macs", "kv_dims", "kv_measure", "side_by_side", "step_macs",
           "KINDS", "UNKNOWN_WORDS", "CheckpointError", "DecodeOptions", "Engine", "LeakageMeter", "ModelInputError",
           "Trace", "alignment", "alignment_report", "get_engine", "get_trace", "measure",
           "head_ranking", "probe_sentence", "repetition", "sample_measures", "train_log",
           "uploaded_alignment", "uploaded_sentence", "uploaded_links", "upload_head_ranking",
           "CheckedUpload", "check_upload"]  # app.uploads' check, which upload_head_ranking takes


ENV_DEVICE, ENV_DTYPE = "LENS_DEVICE", "LENS_DTYPE"  # where the server's models run, and their float type


# ---- models ---------------------------------------------------------------------------------------------
@st.cache_resource(max_entries=8, show_spinner="Loading the model…")
def get_engine(key: str) -> Engine:
    """One engine per registry key per server, shared by every session and never changed."""
    try:
        entry = registry.resolve(key)
    except KeyError:
        raise CheckpointError(f"{key!r} is not one of the models this server offers") from None
    if entry.hub_id and not registry.hub_allowed():
        raise CheckpointError(f"{entry.hub_id} is a Hugging Face hub id, and downloads from the hub are switched off "
                              f"on this server (its operator can allow them with {registry.ENV_HUB}=1, or save "
                              f"the model into a folder and name that folder in {registry.ENV_HF}).")
    try:  # LENS_DEVICE: auto (the GPU when the server has one, else the CPU), cpu, cuda[:N], mps; LENS_DTYPE
        return load_engine(entry.spec, allow_hub=registry.hub_allowed(), device=os.environ.get(ENV_DEVICE, "auto"),
                           dtype=os.environ.get(ENV_DTYPE) or None)
    except DeviceError as exc:  # the operator's setting names a device this server lacks: said on the page
        raise CheckpointError(f"{ENV_DEVICE} / {ENV_DTYPE}: {exc}") from exc


@st.cache_resource(max_entries=128, ttl=3600, show_spinner="Decoding…")
def get_trace(model_key: str, source: str, target: str | None, options: DecodeOptions) -> Trace:
    """One decoding run per (model, input, options), shared by all sessions. A step click reads this cache
    and never re-encodes or re-decodes. Traces are frozen and never mutated, so sharing them is safe. The
    options are a cache key as they are (a frozen dataclass: Streamlit hashes its fields)."""
    return get_engine(model_key).trace(source, target=target, options=options)


# ---- speech models: a clip in, through the one audio reader (model.audio) ------------------------------------------
def is_speech(engine: Engine) -> bool:
    """Whether the model reads a clip rather than text (a Whisper model: Engine.source_kind)."""
    return engine.source_kind == "audio"


@st.cache_data(max_entries=16, show_spinner="Reading the clip…")
def read_clip(data: bytes, name: str) -> Audio:
    """An upload, a recording or a shipped clip's bytes as 16 kHz mono samples (model.audio.read_audio); raises
    AudioError, one line naming the clip and what is wrong with it."""
    return read_audio(data, name=name)


@st.cache_resource(max_entries=64, ttl=3600, show_spinner="Listening…")
def get_audio_trace(model_key: str, digest: str, target: str | None, options: DecodeOptions, _audio: Audio) -> Trace:
    """One run of a clip per (model, clip digest, reference, options), shared by all sessions like get_trace; the
    clip itself is named by its digest (its samples are not hashed again)."""
    return get_engine(model_key).trace(audio=_audio, target=target, options=options)


def head_names(engine: Engine) -> set[str]:
    """Every head's name in this model, `kind:layer:head` (1-based: model.engine.heads)."""
    return {f"{k}:{la}:{h}" for k, la, h in every_head(engine.n_encoder_layers, engine.n_decoder_layers,
                                                       engine.n_heads)}


LANGUAGES = {"en": "English", "fr": "French", "de": "German"}


def language_hint(engine: Engine, source: str) -> str | None:
    """A one-line hint when the typed text looks like another language than the model reads: fewer than half
    its words known here, at least four in five known by another shipped model of the same kind of text
    (German typed into the English model, say), which the hint names. None otherwise."""
    normalised = engine.normalise(source)
    if len(normalised.split()) < 2 or engine.known_share(normalised) >= 0.5:
        return None
    mine = engine.card.get("text")
    for entry in registry.shipped_entries():
        try:
            other = get_engine(entry.key)
        except (CheckpointError, OSError):
            continue
        if other is engine or other.card.get("text") != mine or other.card.get("variant") != "healthy":
            continue
        if other.known_share(other.normalise(source)) >= 0.8:
            src = str(other.card.get("pair", "?")).split("-")[0]
            here = str(engine.card.get("pair", "?")).split("-")[0]
            return (f"This looks like {LANGUAGES.get(src, src)}, and this model reads {LANGUAGES.get(here, here)}: "
                    f"choose {entry.title} in the sidebar to translate it.")
    return None


# ---- analyses (cached like traces) ------------------------------------------------------------------------
NO_TEST_SPLIT = ("No test split ships for this model: its card names neither a built-in language pair ({pairs}) "
                 "nor a training file, and its heads would be measured on another language's sentences. Use your "
                 "own pairs instead (a file of source<TAB>target lines).")


def examples_of_test_split(engine: Engine, n: int) -> list[Example]:
    """The first n pairs of the model's own test split: for a model trained on a file (the everyday models),
    the split `train --data` made of it; for a built-in pair, its generated test split. A model with neither
    (a Hugging Face model, whose card names no built-in pair) raises ModelInputError (NO_TEST_SPLIT)."""
    examples = own_test_examples(engine.card, n)
    if examples is None:
        raise ModelInputError(NO_TEST_SPLIT.format(pairs=", ".join(PAIRS)))
    return examples


@st.cache_data(max_entries=256, show_spinner="Probing…")
def probe_sentence(model_key: str, source: str, target: str | None, causal: bool, shift: bool) -> ProbeResult:
    return probe(get_engine(model_key), source, target, causal=causal, shift=shift)


@st.cache_data(max_entries=16, show_spinner="Measuring on the test split…")
def sample_measures(model_key: str, n: int) -> SampleReport:
    """The model on the first n test pairs of its language pair, teacher forcing as it was trained; read from
    its card when the card holds this measure (written at training time: model.analysis.leakage.CARD_SAMPLE)."""
    engine = get_engine(model_key)
    kept = engine.card.get(CARD_SAMPLE)
    if isinstance(kept, dict) and kept.get("n") == n and (kept["causal"], kept["shift"]) == engine.trained_setting:
        return SampleReport.from_card(kept)
    examples = examples_of_test_split(engine, n)
    causal, shift = engine.trained_setting
    return sample_report(engine, [e.source for e in examples], [e.target for e in examples], causal, shift)


@st.cache_data(max_entries=16)
def train_log(path: str) -> dict[str, list[float]] | None:
    try:
        return pd.read_csv(path).to_dict(orient="list")
    except (OSError, ValueError, pd.errors.ParserError):
        return None


@st.cache_data(max_entries=16, show_spinner="Scoring every head on the test split…")
def alignment_report(model_key: str, data_file: str, n: int) -> alignment.Report:
    """Every method counted against the gold links of the first n sentences of a gold TSV; read from the
    model's card when it holds the tally of exactly these sentences (model.analysis.alignment.card)."""
    engine = get_engine(model_key)
    examples = read_tsv(data_file)[:n]
    kept = alignment.report_from_card(engine.card.get(alignment.CARD_HEADS), engine, examples)
    if kept is not None:
        return kept
    return alignment.run_alignment(engine, examples, alignment.DEFAULT_METHOD, progress=False)


@st.cache_data(max_entries=16, show_spinner="Switching every head off in turn…")
def head_ranking(model_key: str, n: int) -> dict[str, Any]:
    """Every head ranked by the teacher-forced loss increase when it alone is off, on the first n test pairs
    of the model's language pair (model.analysis.ablation)."""
    engine = get_engine(model_key)
    examples = examples_of_test_split(engine, n)
    return rank_heads(engine, [e.source for e in examples], [e.target for e in examples], progress=False)


@st.cache_data(max_entries=16, show_spinner="Measuring what every head attends to…")
def head_roles_of_test_split(model_key: str, n: int) -> dict[str, Any]:
    """Every head's attention shares and role (model.analysis.head_roles) on the first n test pairs, with their
    gold links."""
    engine = get_engine(model_key)
    return head_roles(engine, examples_of_test_split(engine, n))


@st.cache_data(max_entries=16)
def pairs_of_test_split(model_key: str, n: int) -> list[tuple[str, str]]:
    """The first n (source, target) pairs of the test split head_ranking uses, to name them on the page."""
    return [(e.source, e.target) for e in examples_of_test_split(get_engine(model_key), n)]


HEADS_BATCH = 16  # pairs per batch when an upload's heads are ranked, as `heads` (a batch's rows: a layer's heads)
HEADS_KEPT = 8  # uploads' rankings kept per server


@st.cache_resource(max_entries=1)  # one dict (no arguments), itself kept to the last HEADS_KEPT
def _upload_rankings() -> dict[tuple[str, str], dict[str, Any]]:
    """(model key, upload digest) -> its ranking, shared by the server's sessions (the last HEADS_KEPT)."""
    return {}


def kept_upload_ranking(model_key: str, digest: str) -> dict[str, Any] | None:
    """The ranking of an upload already ranked on this server (upload_head_ranking), or None."""
    return _upload_rankings().get((model_key, digest))


def upload_head_ranking(model_key: str, data: bytes, checked: CheckedUpload,
                        on_batch: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Every head ranked (the loss increase when it alone is off) and its role over every pair of a checked upload
    (check_upload found no problem): {"ranking": HeadLosses.result(), "roles": RoleTallies.result()}. The upload
    is read again as a stream in length-bucketed batches of HEADS_BATCH pairs (model.engine.stream.CorpusStream,
    as `heads` reads a file) and each batch only adds to per-head sums (model.analysis.ablation.FileRanking), so
    memory does not grow with the pairs. on_batch(pairs done) after each batch. Kept per (model, digest)."""
    from attention_lens.model.analysis.ablation import FileRanking
    from attention_lens.model.engine.stream import CorpusStream

    kept = kept_upload_ranking(model_key, checked.digest)
    if kept is not None:
        return kept
    ranking = FileRanking(get_engine(model_key))
    stream = CorpusStream(data, batch_size=HEADS_BATCH, strict=True, progress=False, desc="heads")
    for batch in stream:
        ranking.add(batch)
        if on_batch is not None:
            on_batch(stream.lines)
    result = {"ranking": ranking.ranking(), "roles": ranking.role_result()}
    store = _upload_rankings()
    store[(model_key, checked.digest)] = result
    for key in list(store)[:-HEADS_KEPT]:
        store.pop(key, None)
    return result


UPLOADS_KEPT = 4  # aligned uploads kept per server (each: counts, its file's bytes, a temporary file)


@st.cache_resource(max_entries=1)  # one dict (no arguments), itself kept to the last UPLOADS_KEPT
def _aligned_uploads() -> dict[tuple[str, str], alignment.UploadReport]:
    """(model key, upload digest) -> its aligned report, shared by the server's sessions (the last UPLOADS_KEPT)."""
    return {}


def uploaded_alignment(model_key: str, digest: str, data: bytes,
                       progress: Callable[[int, int], None] | None = None) -> alignment.UploadReport:
    """A user's checked file (no problem found) aligned by every method, read as a stream: kept in this process
    (never copied or pickled on a rerun) per model and file digest (upload_digest); progress(sentences done,
    sentences) after each batch while it runs (not called when the file was aligned before)."""
    store = _aligned_uploads()
    report = store.get((model_key, digest))
    if report is None:
        report = alignment.align_upload(get_engine(model_key), data, progress=progress)
        store[(model_key, digest)] = report
        for key in list(store)[:-UPLOADS_KEPT]:
            store.pop(key, None)
    return report


def uploaded_sentence(model_key: str, report: alignment.UploadReport, line: int) -> alignment.WordAttention | None:
    """The word attention of one sentence of an aligned upload (0-based line of the file), computed again."""
    return _uploaded_sentence(model_key, upload_digest(report.data), line, report)


@st.cache_data(max_entries=32, show_spinner=False)
def _uploaded_sentence(model_key: str, digest: str, line: int, _report: alignment.UploadReport
                       ) -> alignment.WordAttention | None:
    return _report.attention(get_engine(model_key), line)


def uploaded_links(model_key: str, report: alignment.UploadReport, method_name: str) -> str:
    """The predicted links of `method_name`, one Pharaoh line per line of the file (a second pass over it)."""
    return report.links_by_line(get_engine(model_key), alignment.Method.parse(method_name))


def gold_cells(engine: Engine, trace: Trace, gold: dict[str, Any]) -> dict[str, Any] | None:
    """A teacher-forced trace's cross-attention cells under gold word links ({gold, source, target, reading}:
    Pharaoh over the whitespace words of source and target; model.analysis.alignment.gold_cells); None when its
    pieces do not match those words."""
    from attention_lens.model.analysis.alignment.gold_cells import gold_cells as cells

    return cells(str(gold["gold"]), str(gold["source"]), str(gold["target"]), trace.source_tokens,
                 trace.target_tokens, str(gold.get("reading") or "plain"), trace.options.shift,
                 alignment.engine_specials(engine))


@st.cache_data(max_entries=64)
def equal_length_target(model_key: str, source: str, target: str) -> str | None:
    """The reference cut to the source's token count, for the swapped cross-attention (model.analysis.bug_meters)."""
    return bug_meters.equal_length_target(get_engine(model_key), source, target)


def kv_dims(model_key: str) -> kv_cache.Dims:
    """The decoder sizes the key-value cache counts use."""
    return kv_cache.dims_of(get_engine(model_key))


@st.cache_data(max_entries=64, show_spinner="Timing a cached step against a recompute…")
def kv_measure(model_key: str, normalised_source: str, out_ids: tuple[int, ...], step: int) -> Measured:
    """A decoded run's step `step` (0-based) cached and recomputed, median of 5 (model.analysis.kv_cache): the
    decoder reads the start token, then the run's own outputs."""
    engine = get_engine(model_key)
    src_ids = engine.prepare_source(normalised_source)[1]
    return kv_cache.measure_step(engine, src_ids, [engine.start_id, *out_ids[:-1]], step)


@st.cache_data(max_entries=64, show_spinner="Running both programs…")
def side_by_side(model_key: str, source: str, target: str, causal: bool, shift: bool) -> exposure.SideBySide:
    """Teacher forcing and free running of one sentence, row by row (model.analysis.exposure)."""
    return exposure.side_by_side(get_engine(model_key), source, target, causal, shift)


# ---- word timings of a speech model (model.analysis.timing) -------------------------------------------------------
TIMING_TEST = registry.ROOT / "assets" / "speech" / "test"  # held-out clips, list.tsv, timings.ctm


@st.cache_data(max_entries=8, ttl=3600, show_spinner="Ranking every head as a word timer…")
def timing_ranking(model_key: str, digest: str, heads: tuple[tuple[int, int], ...] | None, list_name: str,
                   timings_name: str | None, _files: dict[str, bytes]) -> dict[str, Any]:
    """align --audio-data's report (model.analysis.timing.run.rank_clips) on a clip list, its gold timings and its
    clips, given as files (name -> bytes, `digest` naming them all), written to a temporary folder as
    app/timing_files.py lays them out, and ranked."""
    import tempfile

    from attention_lens.model.analysis.timing.run import rank_clips

    with tempfile.TemporaryDirectory(prefix="timing-") as folder:
        listed, timings = timing_files.write(folder, _files, list_name, timings_name)
        return rank_clips(get_engine(model_key), listed, timings, heads=list(heads) if heads else None)


@st.cache_data(max_entries=32, ttl=3600, show_spinner="Timing the clip…")
def timing_clip(model_key: str, digest: str, transcript: str, heads: tuple[tuple[int, int], ...],
                _clip: bytes) -> dict[str, Any]:
    """The DTW view of one clip, teacher-forced on its transcript: the head set's averaged matrix, the warping
    path, the token labels, the clip's log-mel, and the model's words with their times."""
    import numpy as np
    from attention_lens.model.analysis.timing.dtw import dtw_path, head_matrices
    from attention_lens.model.analysis.timing.trace_times import trace_rows, word_timings

    trace = get_engine(model_key).trace(audio=_clip, target=transcript)
    rows, tokens = trace_rows(trace)
    picked = np.stack([rows[layer, head] for layer, head in heads])
    matrix = head_matrices(picked).mean(axis=0)
    path_rows, path_cols = dtw_path(matrix)
    words = word_timings(trace, list(heads))
    from tokenizers import decoders

    labels = [decoders.ByteLevel().decode([t]) for t in tokens[:len(matrix)]]  # byte-level pieces as text
    return {"matrix": matrix, "path_rows": path_rows, "path_cols": path_cols, "tokens": labels,
            "mel": trace.source["mel"], "mel_hop_s": float(trace.source["mel_hop_s"]),
            "frame_s": float(trace.source["frame_s"]), "words": [(w.word, w.start, w.end) for w in words]}


def generation_config_text(model_key: str, heads: list[list[int]]) -> str | None:
    """The model's generation_config.json with these alignment_heads, as text (None: the model has none)."""
    import json

    from attention_lens.model.analysis.timing.config import read_generation_config, with_alignment_heads

    try:
        config = read_generation_config(str(registry.resolve(model_key).spec))
    except (KeyError, ModelInputError):
        return None
    return json.dumps(with_alignment_heads(config, heads), indent=2, sort_keys=True) + "\n"
