"""`show(trace)`: the app's attention picture as one self-contained HTML view, for a notebook or a file.

The view carries the whole Trace's attention (every kind, layer, head and step) as JSON and a small script of
its own (view_script.js, inlined): no server, no CDN, no network. In Jupyter it draws itself (`_repr_html_`);
`View.save("view.html")` writes a page that opens in any browser. What is shown at a step, and which decoder
keys are masked, comes from the app's own slicing (attention_lens.app.render.views.at_step).
A speech model's run is drawn as the app draws it (app/render/spectrogram.py, stepper/audio.js): the clip's
log-mel strip and its seconds under the source axis, the padding one labelled band, players for the whole clip and
the stretch the step attends to (`show(trace, audio=clip)`).
"""

from __future__ import annotations

import base64
import html
import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from attention_lens.model.engine import Trace

KINDS = {"cross": "cross_attention", "cross_attention": "cross_attention",
         "dec": "decoder_self_attention", "decoder": "decoder_self_attention",
         "decoder_self_attention": "decoder_self_attention",
         "enc": "encoder_self_attention", "encoder": "encoder_self_attention",
         "encoder_self_attention": "encoder_self_attention"}
VIEWS = ("grid", "head", "mean")
READINGS = ("weights", "norm_weighted", "rollout")
# The grid of every layer x head opens when a kind has at most this many panels, else the mean over heads
# (the app's Explore page opens the same way).
GRID_PANELS = 24
SCRIPT = Path(__file__).with_name("view_script.js")
_ids = itertools.count(1)

STYLE = """
.al-view { font: 13px/1.4 Inter, 'DejaVu Sans', Arial, sans-serif; color: #1f2933; position: relative;
           outline: none; max-width: 100%; }
.al-view .al-bar { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 4px 0 6px; }
.al-view select, .al-view button { font: inherit; padding: 2px 6px; border: 1px solid #c8ced6; border-radius: 4px;
           background: #fff; color: inherit; cursor: pointer; }
.al-view input[type=range] { width: 220px; }
.al-view .al-count { min-width: 90px; font-variant-numeric: tabular-nums; }
.al-view .al-info { margin: 0 0 6px; color: #3e4c59; }
.al-view .al-title { font-weight: 600; }
.al-view .al-scroll { overflow-x: auto; }
.al-view .al-audio button:disabled { color: #9aa5b1; cursor: default; }
.al-view .al-stretch-text { color: #3e4c59; font-variant-numeric: tabular-nums; }
.al-view .al-tip { position: absolute; display: none; pointer-events: none; white-space: pre; background: #1f2933;
           color: #fff; padding: 4px 6px; border-radius: 4px; font-size: 12px; z-index: 10; }
"""


def show(trace: Trace, kind: str = "cross", layer: int | None = None, head: int | None = None,
         step: int | None = None, view: str | None = None, reading: str = "weights", audio: Any = None) -> View:
    """The interactive attention picture of a Trace, as the app's Explore page draws it.

    kind: "cross" (cross-attention), "dec" (decoder self-attention) or "enc" (encoder self-attention).
    layer, head: 1-based; giving either opens on that one head ("head" view).
    step: how many decoder rows exist (1 .. number of target tokens; default: all of them).
    view: "grid" (every layer x head), "head" or "mean" (over heads); default: "head" when layer or head is
        given, else the grid (the mean for models of more than 24 heads per kind).
    reading: "weights", or with a Trace traced with contributions=True "norm_weighted" or "rollout".
    audio: a speech model's run only: its clip (a path, a file's bytes or (samples, rate), as `Model.trace`
        takes it), for the view's two players (the whole clip, the stretch the step attends to). A clip's run
        is drawn as the app draws it either way: the log-mel spectrogram under the source axis with its time in
        seconds, the padding as one labelled band.

    Every choice stays changeable in the view itself (select boxes, a step slider, first / back / next / last /
    play, and the arrow keys, Home, End and space once the view has focus). In Jupyter the returned View draws
    itself; `View.save(path)` writes it as an HTML page; `View.html` is the markup.

    >>> attention_lens.show(trace, kind="cross", layer=3, head=2, step=4)
    """
    name = KINDS.get(kind)
    if name is None:
        raise ValueError(f"kind must be one of {', '.join(sorted(KINDS))}, got {kind!r}")
    readings = available_readings(trace)
    if reading not in readings:
        raise ValueError(f"reading {reading!r} is not in this trace (it holds {', '.join(readings)}; "
                         f"norm_weighted and rollout need trace(..., contributions=True))")
    w = getattr(trace, name)
    n_layers, n_heads = w.shape[:2]
    if view is None:
        view = "head" if layer is not None or head is not None else (
            "grid" if n_layers * n_heads <= GRID_PANELS else "mean")
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    layer, head = layer or 1, head or 1
    if not 1 <= layer <= n_layers or not 1 <= head <= n_heads:
        raise ValueError(f"layer must be in 1..{n_layers} and head in 1..{n_heads} (1-based), got {layer}, {head}")
    step = trace.m if step is None else step
    if not 1 <= step <= trace.m:
        raise ValueError(f"step must be in 1..{trace.m}, got {step}")
    if audio is not None and (getattr(trace, "source", None) or {}).get("kind") != "audio":
        raise ValueError("audio= goes with a speech model's Trace (one with an audio source); this one read text")
    return View(trace, name, view, layer - 1, head - 1, step, reading, audio=audio)


def available_readings(trace: Trace) -> list[str]:
    return ["weights"] + ([r for r in READINGS[1:]] if trace.contributions is not None else [])


class View:
    """A Trace's interactive attention picture (see `show`): `_repr_html_` for notebooks, `save` for a file."""

    def __init__(self, trace: Trace, kind: str, view: str, layer: int, head: int, step: int, reading: str,
                 audio: Any = None) -> None:
        from attention_lens.app.render.spectrogram import for_browser
        from attention_lens.model.audio.reader import read_audio

        self.trace = for_browser(trace)  # a clip's run: its frames pooled to at most 180 columns, as the app sends it
        self.samples = None if audio is None else read_audio(audio).samples  # 16 kHz mono, for the players
        self.state = {"kind": kind, "view": view, "layer": layer, "head": head, "step": step, "reading": reading}

    def data(self) -> dict:
        """What the script draws: every reading's arrays (rounded to 4 decimals), the tokens, each step's top
        next tokens, the decoder mask, and the app's colour scale."""
        from attention_lens.app.render import figures
        from attention_lens.app.render.views import at_step

        t = self.trace
        kinds = ("cross_attention", "decoder_self_attention", "encoder_self_attention")
        readings = {"weights": {k: _rounded(getattr(t, k)) for k in kinds}}
        for r in available_readings(t)[1:]:
            readings[r] = {k: _rounded(t.contributions[r][k]) for k in kinds}
        full = at_step(t, "decoder_self_attention", t.m)
        mask = None if full.mask is None else full.mask.tolist()
        # Teacher forcing reads the whole reference from the first step, decoding only the rows so far.
        teacher = len(at_step(t, "decoder_self_attention", 1).k_labels) == t.m and t.m > 1
        out = {**self.state, "readings": readings, "m": t.m, "teacher": teacher, "mask": mask,
               "source": list(t.source_tokens), "read": list(t.decoder_input_tokens),
               "wrote": list(t.target_tokens), "steps": [_step(s) for s in t.steps],
               "colorscale": figures.COLORSCALE, "mask_colour": figures.MASK_COLOR, "accent": figures.ACCENT}
        audio = self._audio()
        if audio is not None:
            out["audio"] = audio
        return out

    def _audio(self) -> dict | None:
        """A clip's run: what the strip under the source axis and the players need (None for a text run). Keys:
        duration_s, frame_s (a column's length), times (each source column's start, s), padding ({index, start_s,
        end_s} or None), mel ({bins, frames, hop_s, lo, hi, codes: base64 of one byte a value, frame-major}) and
        samples ({rate, pcm: base64 of 16-bit little-endian samples} or None when no clip was given)."""
        from attention_lens.app.render.spectrogram import PLAYBACK_RATE, audio_source, mel_bytes, sample_bytes

        source = audio_source(self.trace)
        if source is None:
            return None
        mel = np.asarray(source["mel"])
        codes, lo, hi = mel_bytes(mel)
        padding = source.get("padding")
        samples = None if self.samples is None else {
            "rate": PLAYBACK_RATE, "pcm": base64.b64encode(sample_bytes(self.samples)).decode("ascii")}
        return {"duration_s": float(source["duration_s"]), "frame_s": float(source["frame_s"]),
                "times": [round(float(x), 4) for x in source["times"]],
                "padding": ({"index": int(padding["index"]), "start_s": float(padding["start_s"]),
                             "end_s": float(padding["end_s"])} if padding else None),
                "mel": {"bins": int(mel.shape[0]), "frames": int(mel.shape[1]),
                        "hop_s": float(source.get("mel_hop_s", 0.01)), "lo": lo, "hi": hi,
                        "codes": base64.b64encode(codes).decode("ascii")},
                "samples": samples}

    @property
    def html(self) -> str:
        """The view as an HTML fragment: a div, its data, its style and its script, all inline."""
        from attention_lens.model.engine.trace import strict_json

        root = f"attention-lens-view-{next(_ids)}"
        model = self.trace.model.get("name", "") if isinstance(self.trace.model, dict) else ""
        data = strict_json(self.data()).replace("</", "<\\/")  # no "</script>" inside the JSON
        script = SCRIPT.read_text(encoding="utf-8").replace("__ROOT_ID__", root)
        return f"""<div class="al-view" id="{root}" tabindex="0">
<style>{STYLE}</style>
<script type="application/json" class="al-data">{data}</script>
<div class="al-title">{html.escape(model)} · {html.escape(self._source_title())}</div>
<div class="al-bar">
  <select class="al-kind" title="attention kind"></select>
  <select class="al-mode" title="view"></select>
  <select class="al-layer" title="layer"></select>
  <select class="al-head" title="head"></select>
  <select class="al-reading" title="reading"></select>
</div>
<div class="al-bar">
  <button class="al-first" title="first step (Home)">|◀</button>
  <button class="al-prev" title="back (←)">◀</button>
  <button class="al-next" title="next (→)">▶</button>
  <button class="al-last" title="last step (End)">▶|</button>
  <button class="al-play" title="play / pause (space)">▶ play</button>
  <input class="al-step" type="range" step="1" aria-label="step">
  <span class="al-count"></span>
</div>
{self._audio_bar()}<div class="al-info"></div>
<div class="al-scroll"><canvas class="al-canvas"></canvas></div>
<div class="al-tip"></div>
<script>{script}</script>
</div>"""

    def _audio_bar(self) -> str:
        """A clip's run: the two players and the line naming the stretch the step attends to; text: nothing."""
        if (self.trace.source or {}).get("kind") != "audio":
            return ""
        off = "" if self.samples is not None else ' disabled title="show(trace, audio=CLIP) to play the clip"'
        return (f'<div class="al-bar al-audio">\n  <button class="al-play-clip"{off}>▶ Whole clip</button>\n'
                f'  <button class="al-play-stretch"{off}>▶ This step’s stretch</button>\n'
                f'  <span class="al-stretch-text"></span>\n</div>\n')

    def _source_title(self) -> str:
        """What the run read: its source tokens, or a clip's length and columns."""
        from attention_lens.app.render.spectrogram import audio_source

        source = audio_source(self.trace)
        if source is None:
            return " ".join(self.trace.source_tokens)
        return (f"a clip of {source['duration_s']:.2f} s, {self.trace.n - 1} columns of "
                f"{source['frame_s'] * 1000:.0f} ms and the padding")

    def _repr_html_(self) -> str:
        return self.html

    def save(self, path: str | Path) -> Path:
        """Write the view as a standalone HTML page (works offline, in any browser); returns the path."""
        path = Path(path)
        title = html.escape(" ".join(self.trace.target_tokens) or "attention")
        path.write_text(f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Attention Lens · "
                        f"{title}</title></head>\n<body style=\"margin:16px\">\n{self.html}\n</body></html>\n",
                        encoding="utf-8")
        return path


def _rounded(a: np.ndarray) -> list:
    return np.round(np.asarray(a, dtype=np.float64), 4).tolist()


def _step(step) -> dict:
    return {"token": step.token, "prob": step.prob, "top_k": [{"token": t, "prob": p} for t, p in step.top_k]}
