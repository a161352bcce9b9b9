"""A speech model's input, where a text model has its sentence box: a shipped clip (the presets), an upload or the
microphone, and the model's language and task in the sidebar. Every clip goes through the one audio reader
(services.read_clip: model.audio.read_audio); a clip it refuses is said in one line and the page goes on.

The chosen clip is kept in session state (`current_clip`), so a fragment (Explore's stepper) reads the same clip as
the page's run. A shipped clip is named in a link (`clip`); an upload or a recording cannot be, and a link made
from one opens on the first shipped clip.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st
from attention_lens.app import registry, services, state
from attention_lens.app.services import Audio, AudioError, Engine, Trace

SPEECH_DIR = registry.ROOT / "assets" / "speech"
ENV_CLIPS = "LENS_SPEECH_CLIPS"  # the operator's list of clips to offer as examples, instead of the shipped ones
PRESETS = 6  # shipped clips offered as examples (the first of the list)
UPLOAD, MICROPHONE = "upload", "microphone"
FORMATS = ("wav", "flac", "ogg", "mp3")
K_CLIP = "clip"  # a preset's id, UPLOAD or MICROPHONE
K_UPLOAD, K_MIC = "clip_upload", "clip_mic"
K_HEARD = "clip_heard"  # the Clip the page's run reads ({"clip": Clip, "model": key})
K_LANGUAGE, K_TASK = "language", "task"
TASKS = {"transcribe": "Transcribe (same language)", "translate": "Translate into English"}
CLIP_LABEL = "clip:"  # the start of a speech run's source name (its key in run keys and caches)


@dataclass(frozen=True)
class Clip:
    """A clip read for a run: its name, the digest of its bytes (its cache key), the samples, and the transcript
    that ships with it (a preset) or ""."""

    name: str
    digest: str
    audio: Audio
    transcript: str = ""
    preset: str | None = None

    @property
    def label(self) -> str:
        """The run's source name: what run keys and caches hold in place of a sentence."""
        return f"{CLIP_LABEL}{self.name}:{self.digest[:16]}"


# ---- the shipped clips ---------------------------------------------------------------------------------------------
def clip_lists() -> list[Path]:
    """The clip lists the presets come from: the operator's (LENS_SPEECH_CLIPS, one TSV file), else the shipped
    ones (assets/speech/*/list.tsv: the test split first)."""
    named = os.environ.get(ENV_CLIPS, "").strip()
    if named:
        return [Path(named).expanduser().resolve()]
    return sorted(SPEECH_DIR.glob("*/list.tsv")) if SPEECH_DIR.is_dir() else []


def speech_presets() -> list[dict[str, Any]]:
    """The first PRESETS clips of the clip lists (`clip path<TAB>transcript` per line, paths relative to the list,
    each inside the list's folder): {"id", "title", "path", "transcript"}, only those whose file is there."""
    return _presets(tuple(str(p) for p in clip_lists()))


@st.cache_data(max_entries=4)
def _presets(lists: tuple[str, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for listing in map(Path, lists):
        if not listing.is_file():
            continue
        folder = listing.parent.resolve()
        for line in listing.read_text(encoding="utf-8", errors="replace").splitlines():
            path, _, transcript = line.partition("\t")
            clip = (folder / path.strip()).resolve()
            if not path.strip() or not clip.is_file() or folder not in clip.parents:
                continue
            words = transcript.strip()
            out.append({"id": clip.stem, "title": words if len(words) <= 48 else words[:47] + "…",
                        "path": str(clip), "transcript": words})
            if len(out) == PRESETS:
                return out
    return out


def preset_ids() -> list[str]:
    return [p["id"] for p in speech_presets()]


def _preset(pid: str) -> dict[str, Any] | None:
    return next((p for p in speech_presets() if p["id"] == pid), None)


# ---- the clip --------------------------------------------------------------------------------------------------------
def _read(data: bytes, name: str, transcript: str = "", preset: str | None = None) -> Clip | None:
    """The clip through the audio reader, or None after one line saying why it cannot be run."""
    try:
        audio = services.read_clip(data, name)
    except AudioError as exc:
        st.error(state.text(exc), icon=":material/graphic_eq:")
        return None
    return Clip(name, hashlib.sha256(data).hexdigest(), audio, transcript, preset)


def _choice_title(choices: dict[str, str]):
    return lambda value: choices.get(value, value)


def clip_ui(model_key: str, cols) -> Clip | None:
    """The clip picker (cols[0]: a shipped clip, an upload, the microphone) and what goes with the choice (cols[1]:
    the file box, the recorder, or the clip's player). Returns the clip read, or None (nothing chosen yet, or a
    clip the reader refused, said in one line)."""
    ss = st.session_state
    presets = speech_presets()
    titles = {p["id"]: p["title"] for p in presets} | {UPLOAD: "your own clip (upload)",
                                                        MICROPHONE: "record with the microphone"}
    ids = [*[p["id"] for p in presets], UPLOAD, MICROPHONE]
    if ss.get(K_CLIP) not in ids:
        ss[K_CLIP] = ids[0]
    state.keep(K_CLIP)
    choice = cols[0].selectbox("Clip", ids, key=K_CLIP, format_func=_choice_title(titles), persist_state="session",
                               help="A shipped clip, a file of yours, or a recording: what the model listens to.")
    clip = None
    with cols[1]:
        if choice == UPLOAD:
            got = st.file_uploader(f"A clip ({', '.join(f.upper() for f in FORMATS)}; up to 30 s)",
                                   type=list(FORMATS), key=K_UPLOAD)
            if got is None:
                st.caption("Choose a file: the model hears it as 16 kHz mono, up to Whisper's 30 s window.")
            else:
                clip = _read(got.getvalue(), got.name)
        elif choice == MICROPHONE:
            got = st.audio_input("Record a clip (up to 30 s)", key=K_MIC, sample_rate=16_000)
            if got is None:
                st.caption("Press the microphone, speak, press it again: the model hears what you said.")
            else:
                clip = _read(got.getvalue(), "microphone")
        else:
            p = _preset(choice)
            if p is not None:
                clip = _read(Path(p["path"]).read_bytes(), Path(p["path"]).name, p["transcript"], p["id"])
        if clip is not None:
            st.audio(clip.audio.samples, sample_rate=clip.audio.rate)
    ss[K_HEARD] = {"clip": clip, "model": model_key} if clip is not None else None
    return clip


def current_clip(model_key: str, source: str) -> Clip | None:
    """The clip a speech run of `source` (a Clip.label) reads: the one this session's picker read."""
    heard = st.session_state.get(K_HEARD)
    if not source.startswith(CLIP_LABEL) or not heard or heard.get("model") != model_key:
        return None
    clip = heard["clip"]
    return clip if clip.label == source else None


def shown_trace(model_key: str, source: str, target: str | None, options, errors: tuple[type[Exception], ...]
                ) -> Trace | None:
    """state.shown_trace for a page that reads a clip or a sentence: the run of this session's clip when `source`
    is its label (its warnings on the clip's line, clip_note), else of the sentence; None after saying why not."""
    clip = current_clip(model_key, source)
    if clip is None:
        return state.shown_trace(model_key, source, target, options, errors)
    try:
        trace = services.get_audio_trace(model_key, clip.digest, target, options, clip.audio)
    except errors as exc:
        st.error(state.text(exc))
        return None
    st.caption(clip_note(clip, trace))
    return trace


def waiting_link(model_key: str) -> dict[str, str]:
    """The link of a page that waits for a clip (an upload or a recording not made yet): the model, its language
    and task; no clip."""
    ss = st.session_state
    return {"model": model_key, **{k: str(ss[k]) for k in (K_LANGUAGE, K_TASK) if ss.get(k)}}


def clip_note(clip: Clip, trace: Trace) -> str:
    """One line under the inputs: the clip's length, its frames, the padding, the prefix the decoder was given and
    the run's warnings (a clip resampled; shown here in place of Explore's warning boxes)."""
    from attention_lens.app.render.spectrogram import audio_source

    a, source = clip.audio, audio_source(trace)
    said = f"{state.text(clip.name)}: {a.duration_s:.2f} s"
    if a.channels != 1:
        said += f" ({a.channels} channels mixed down)"
    if source is not None:
        padding = source.get("padding")
        frames = padding["index"] if padding else trace.n
        said += f" · {frames} encoder frames of {source['frame_s'] * 1000:.0f} ms"
        if padding:
            said += f" + the padding to {padding['end_s']:.0f} s as one position"
    if trace.forced_tokens:
        said += " · forced prefix: " + " ".join(state.text(t) for t in trace.forced_tokens)
    for warning in trace.warnings:  # what the engine did to the clip (resampled, cut): said on this line
        said += f" · {state.text(warning)}"
    return said


# ---- language and task (sidebar) -------------------------------------------------------------------------------------
def speech_options_ui(sb, engine: Engine) -> dict[str, str]:
    """The language the model is told the clip is in (the model's own codes) and its task, as DecodeOptions fields
    (`language`, `task`); kept in the URL. A model with no language tokens (English-only) has neither box."""
    ss, kw = st.session_state, {}
    codes = list(engine.spoken_languages())
    if codes:
        if ss.get(K_LANGUAGE) not in codes:  # a link's code this model lacks, or another model's
            ss[K_LANGUAGE] = "en" if "en" in codes else codes[0]
        kw["language"] = sb.selectbox("Language of the clip", codes, key=K_LANGUAGE,
                                      help="Forced after <|startoftranscript|>: the language the model is told "
                                           "it hears.")
    tasks = [t for t in TASKS if t in engine.tasks()]
    if tasks:
        if ss.get(K_TASK) not in tasks:
            ss[K_TASK] = tasks[0]
        kw["task"] = sb.radio("Task", tasks, key=K_TASK, format_func=TASKS.get, horizontal=True,
                              help="Forced after the language: write what is said, or translate it into English.")
    return kw


def teacher_reference(clip: Clip | None) -> str:
    """What teacher forcing feeds a speech model when its box is empty: the clip's own transcript, if it ships one."""
    return clip.transcript if clip is not None else ""


def samples_of(clip: Clip | None) -> np.ndarray | None:
    return clip.audio.samples if clip is not None else None
