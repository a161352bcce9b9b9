"""Compare on a speech model: a clip on each side where a text model has a sentence. Side A's clip, side B's model
and clip, from the shipped clips (audio_input's examples): one model on two clips (two sentences, two voices) or
two speech models on one clip. Each side runs greedy on its clip (services.get_audio_trace, cached like Explore's)
and goes to the pair stepper with its samples, so each side draws its spectrogram under the keys and plays its
clip or the stretch the step attends to (app/screens/pair_stepper). A side that cannot run says so in one line.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import streamlit as st
from attention_lens.app import services, state
from attention_lens.app.screens import audio_input, pair_stepper
from attention_lens.app.services import AudioError, CheckpointError, DecodeOptions, ModelInputError

K_A_CLIP, K_B_CLIP = "cmp_a_clip", "cmp_b_clip"
ERRORS = (ModelInputError, CheckpointError, AudioError, OSError)


def _titles() -> dict[str, str]:
    return {p["id"]: p["title"] for p in audio_input.speech_presets()}


def clip_inputs(model_key: str, keys: list[str], k_b_model: str) -> tuple[str, str, str] | None:
    """Side A's clip, side B's model and clip (B opens on the next shipped clip: one model, two clips); None when
    this server ships no clip (said in one line)."""
    titles = _titles()
    ids = list(titles)
    if not ids:
        st.info("This server offers no clips to compare (assets/speech/*/list.tsv or LENS_SPEECH_CLIPS): open Explore "
                "to upload one.", icon=":material/graphic_eq:")
        return None
    ss = st.session_state
    if ss.get(K_A_CLIP) not in ids:
        ss[K_A_CLIP] = ids[0]
    if ss.get(K_B_CLIP) not in ids:
        ss[K_B_CLIP] = ids[1 % len(ids)]
    left, right = st.columns(2)
    a_clip = left.selectbox(f"A: {model_key} (the sidebar's model), clip", ids, key=K_A_CLIP,
                            format_func=lambda c: titles.get(c, c))
    cols = right.columns([1, 2])
    b_model = cols[0].selectbox("B: model", keys, key=k_b_model)
    b_clip = cols[1].selectbox("B: clip", ids, key=K_B_CLIP, format_func=lambda c: titles.get(c, c))
    return a_clip, b_model, b_clip


def clip_side(model_key: str, clip_id: str, side: str) -> pair_stepper.Side | None:
    """The greedy run of a shipped clip as one side of the pair, or None with the reason shown, naming its side."""
    preset = next((p for p in audio_input.speech_presets() if p["id"] == clip_id), None)
    try:
        engine = services.get_engine(model_key)
        if not services.is_speech(engine):
            raise ModelInputError(f"{model_key} reads text, not a clip: compare a speech model with a speech model "
                                  f"(or open a text model in the sidebar)")
        if preset is None:
            raise ModelInputError(f"no shipped clip {clip_id!r}")
        data = Path(preset["path"]).read_bytes()
        audio = services.read_clip(data, Path(preset["path"]).name)
        digest = hashlib.sha256(data).hexdigest()
        trace = services.get_audio_trace(model_key, digest, None, DecodeOptions(), audio)
    except ERRORS as exc:
        st.error(f"{side}: {state.text(exc)}")
        return None
    label = f"{audio_input.CLIP_LABEL}{Path(preset['path']).name}:{digest[:16]}"
    return pair_stepper.Side(trace, ("greedy", model_key, label), special=engine.special_pieces(),
                             samples=audio.samples)
