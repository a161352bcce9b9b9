"""Opening a Hugging Face seq2seq folder (or hub id) safely, and refusing what cannot be traced, in plain words.

Never `trust_remote_code`, never pickles: safetensors weights only, the model's own tokenizer required, eager
attention (the only implementation that returns attention weights). A speech-to-text encoder-decoder (Whisper:
WhisperForConditionalGeneration) opens too, with its feature extractor (`load_feature_extractor`).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import torch
from attention_lens.model.engine.errors import CheckpointError
from attention_lens.model.engine.safety import check_folder
from attention_lens.model.hf.weights import SPEECH_FAMILIES, auto_class, check_weights
from safetensors import SafetensorError

# Files of which at least one must be present for AutoTokenizer to build the model's own tokenizer.
TOKENIZER_FILES = ("tokenizer.json", "spiece.model", "source.spm", "sentencepiece.bpe.model", "vocab.json",
                   "vocab.txt", "merges.txt", "sentencepiece.model", "spm.model")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json")


def refuse_config(config: Any, spec: str) -> None:
    """Raise CheckpointError unless the config describes a text-to-text encoder-decoder, or a speech-to-text one
    of a family this adapter reads (Whisper)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES,
    )

    kind = config.model_type
    if kind in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES and getattr(config, "is_encoder_decoder", False):
        return
    if kind in SPEECH_FAMILIES and getattr(config, "is_encoder_decoder", False):
        return
    if kind in MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES:
        raise CheckpointError(
            f"{spec} is a speech-to-text model of the {kind!r} family, which this tool does not open yet; of the "
            f"speech models it opens Whisper (WhisperForConditionalGeneration: openai/whisper-*, distil-whisper, "
            f"fine-tunes).")
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


SENTENCEPIECE_FILES = {"marian": ("source.spm", "target.spm")}  # files a family's slow tokenizer reads


def missing_sentencepiece(path: Path, config: Any) -> list[str]:
    """The SentencePiece files the family's tokenizer reads that the folder lacks (none when it ships a
    tokenizer.json, which the fast tokenizer reads instead)."""
    if (path / "tokenizer.json").is_file():
        return []
    return [f for f in SENTENCEPIECE_FILES.get(getattr(config, "model_type", ""), ()) if not (path / f).is_file()]


def load_folder(spec: str | Path, allow_hub: bool = False, device: torch.device | None = None,
                dtype: torch.dtype = torch.float32) -> tuple[Any, Any, str, dict[str, Any]]:
    """A local folder, or (allow_hub) a hub id -> (model in eval mode on `device` (None: the CPU) with weights of
    `dtype`, tokenizer, name, card). Raises CheckpointError with a plain message."""
    from transformers import AutoConfig, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # its "Loading weights" bars on stderr would surround a one-line error

    spec = str(spec)
    path = Path(spec)
    local = path.is_dir()
    if not local:
        if not allow_hub:
            raise CheckpointError(f"{spec}: no such model folder (hub ids need the hub to be allowed)")
    else:
        check_folder(path)
        if not (path / "config.json").is_file():
            raise CheckpointError(f"{spec} is not a model folder: it has no config.json")
    hub = dict(local_files_only=local)  # never trust_remote_code: a folder must not run its own code
    try:
        config = AutoConfig.from_pretrained(spec, **hub)
    except (OSError, ValueError, KeyError) as exc:
        raise CheckpointError(f"{spec}: config.json cannot be read as a Hugging Face config ({exc})") from exc
    refuse_config(config, spec)
    if local:
        if not any((path / f).is_file() for f in TOKENIZER_FILES):
            raise CheckpointError(
                f"{spec} has no tokenizer files (none of {', '.join(TOKENIZER_FILES)}): without the model's "
                f"own tokenizer its token ids cannot be read. Save the tokenizer into the folder "
                f"(tokenizer.save_pretrained(folder)).")
        if not any((path / f).is_file() for f in WEIGHT_FILES):
            raise CheckpointError(f"{spec} has no safetensors weights ({' or '.join(WEIGHT_FILES)})")
        check_weights(config, path, spec)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. Marian's "Recommended: pip install sacremoses."
            tokenizer = AutoTokenizer.from_pretrained(spec, **hub)
    except Exception as exc:  # tokenizer classes raise many types (OSError, ValueError, AssertionError, ...)
        missing = missing_sentencepiece(path, config) if local else []
        if missing:
            raise CheckpointError(f"{spec}: its tokenizer needs {' and '.join(missing)} (the SentencePiece model of "
                                  f"each vocabulary), which the folder lacks: copy the file(s) from the model's "
                                  f"original folder, or save the tokenizer there (tokenizer.save_pretrained(folder))"
                                  ) from exc
        raise CheckpointError(f"{spec}: its tokenizer cannot be loaded ({type(exc).__name__}: {exc})") from exc
    try:
        model, info = auto_class(config).from_pretrained(
            spec, attn_implementation="eager", use_safetensors=True, dtype=dtype,
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
    if device is not None and device.type != "cpu":
        try:
            model.to(device)
        except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:  # e.g. out of GPU memory: one line
            raise CheckpointError(f"{spec}: the model cannot be placed on {device} ({str(exc).splitlines()[0]})"
                                  ) from exc
    rows = model.get_input_embeddings().weight.shape[0]
    if len(tokenizer) > rows:
        raise CheckpointError(f"{spec}: the tokenizer has {len(tokenizer)} tokens but the model embeds only "
                              f"{rows}: they do not belong together")
    card = {"source": spec, "family": config.model_type, "architectures": list(config.architectures or []),
            "parameters": sum(p.numel() for p in model.parameters()), "vocab_size": rows,
            "tokenizer": type(tokenizer).__name__, "hub": not local, "device": str(model.device),
            "dtype": str(model.dtype).removeprefix("torch.")}
    return model, tokenizer, path.name if local else spec, card


def load_feature_extractor(spec: str | Path, allow_hub: bool = False) -> Any:
    """A speech model's feature extractor (Whisper's: audio -> log-mel), from preprocessor_config.json or the
    processor_config.json a WhisperProcessor writes. Raises CheckpointError when the folder has neither."""
    from transformers import AutoFeatureExtractor, AutoProcessor

    spec = str(spec)
    hub = dict(local_files_only=Path(spec).is_dir())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return AutoFeatureExtractor.from_pretrained(spec, **hub)
            except (OSError, ValueError):
                return AutoProcessor.from_pretrained(spec, **hub).feature_extractor
    except Exception as exc:  # a missing or malformed file raises many types (OSError, ValueError, KeyError...)
        raise CheckpointError(f"{spec}: its feature extractor cannot be loaded ({type(exc).__name__}: {exc}); a "
                              f"Whisper folder needs preprocessor_config.json (processor.save_pretrained(folder))"
                              ) from exc
