"""A whole decoding run packed for the browser's stepper (stepper.js): every step's attention rows of every kind,
layer and head, the tokens, and each step's top-k, in one byte string. No Streamlit here.

The stepper draws any step, view and head from this alone, so stepping never asks the server for anything.

Layout of the bytes (little-endian): b"LENS", a uint32 header length, the header (UTF-8 JSON), zero padding to a
multiple of 4, then the weights. The header's "arrays" names, per kind, the byte offset of its block and how
many keys each row has; a block is layer-major, then head, then row, each row its keys in order.

Encodings (the header's "encoding"):
- "f16": IEEE half floats, 2 bytes a cell. Error: at most 2^-12 of the value (|w| <= 1: <= 2.5e-4).
- "u8": one byte a cell, each row scaled by its own largest weight (a float32 per row, before the row's bytes
  in a block of its own): w ~= byte / 255 * scale, error at most scale / 510 (<= 0.00196).
The header's "max_error" is the largest |decoded - Trace| over every cell shipped, measured while packing.

Which rows are shipped: cross-attention, every decoder row over every source token; decoder self-attention,
row t over the keys its mask allowed (t + 1 with the causal mask; the cells past them are drawn hatched);
encoder self-attention, every source row over every source token.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from attention_lens.app.render import figures

if TYPE_CHECKING:
    from attention_lens.app.services import Trace

HERE = Path(__file__).resolve().parent
MAGIC = b"LENS"
VERSION = 1
ENCODINGS = ("f16", "u8")
KINDS = ("cross_attention", "decoder_self_attention", "encoder_self_attention")


def forced_positions(trace: Trace, n_forced: int) -> list[int]:
    """Positions of the output a person forced: of the first n_forced tokens (the forced prefix a run was
    decoded from), the last one, and any earlier one that was not the model's own first choice there (the
    prefix repeats the model's choices up to each token forced). A token the model itself chose is never
    marked forced."""
    n = min(n_forced, trace.m)
    out = []
    for p in range(n):
        s = trace.steps[p]
        if p == n - 1 or (s.top_k and s.top_k[0][0] != s.token):
            out.append(p)
    return out


def _row_lengths(trace: Trace, kind: str) -> list[int]:
    if kind == "cross_attention":
        return [trace.n] * trace.m
    if kind == "encoder_self_attention":
        return [trace.n] * trace.n
    mask = trace.decoder_mask()
    return [int(np.nonzero(r)[0].max()) + 1 if r.any() else 0 for r in mask]


def _rows(w: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """(L, h, q, k) -> (L, h, sum of lengths): each row's first lengths[q] keys, rows in order."""
    parts = [w[:, :, q, :k] for q, k in enumerate(lengths)]
    return np.concatenate(parts, axis=-1) if parts else np.zeros(w.shape[:2] + (0,), dtype=np.float32)


def _encode(flat: np.ndarray, lengths: Sequence[int], encoding: str) -> tuple[bytes, float]:
    """One kind's rows (L, h, cells) as bytes, and the largest error of the decoded values."""
    x = np.nan_to_num(np.asarray(flat, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    if encoding == "f16":
        half = x.astype("<f2")
        return half.tobytes(), float(np.abs(half.astype(np.float64) - x).max(initial=0.0))
    # u8: a scale per row (its largest |weight|), then the row's bytes; scales first for the whole kind
    bounds = np.cumsum([0, *lengths])
    L, h = x.shape[:2]
    scales = np.zeros((L, h, len(lengths)), dtype="<f4")
    codes = np.zeros(x.shape, dtype=np.uint8)
    decoded = np.zeros(x.shape)
    for q in range(len(lengths)):
        a, b = bounds[q], bounds[q + 1]
        if a == b:
            continue
        seg = np.clip(x[:, :, a:b], 0.0, None)
        scale = seg.max(axis=-1).astype("<f4")
        scales[:, :, q] = scale
        safe = np.where(scale > 0, scale, 1.0).astype(np.float64)[..., None]
        c = np.clip(np.rint(seg / safe * 255), 0, 255).astype(np.uint8)
        codes[:, :, a:b] = c
        decoded[:, :, a:b] = c / 255.0 * scale.astype(np.float64)[..., None]
    return scales.tobytes() + codes.tobytes(), float(np.abs(decoded - x).max(initial=0.0))


def finite(x: float, digits: int) -> float | None:
    """A number for the header: rounded, or None (JSON null) where it is NaN or infinite (a diverged model's
    probabilities: bare NaN is not JSON, and the browser's parser refuses the whole run)."""
    x = float(x)
    return round(x, digits) if np.isfinite(x) else None


def _json_ready(value):
    """`value` with every non-finite float (anywhere in dicts and lists) as None."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    return value


def _header_bytes(header: dict) -> bytes:
    """The header as strict JSON (no NaN / Infinity), UTF-8, padded with spaces so the body starts 4-aligned."""
    head = json.dumps(_json_ready(header), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    head = head.encode("utf-8")
    return head + b" " * ((-(len(head) + 8)) % 4)


def weights(trace: Trace, encoding: str = "f16") -> tuple[dict, bytes, float]:
    """Every kind's rows encoded: (the header's "arrays", their bytes, the largest error of a decoded cell).
    The costly part of `pack`, the same for every step and view of a run (a page caches it per run)."""
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}; one of {', '.join(ENCODINGS)}")
    blobs, arrays, offset, max_error = [], {}, 0, 0.0
    for kind in KINDS:
        w = np.asarray(getattr(trace, kind))
        lengths = _row_lengths(trace, kind)
        data, err = _encode(_rows(w, lengths), lengths, encoding)
        max_error = max(max_error, err)
        arrays[kind] = {"offset": offset, "layers": int(w.shape[0]), "heads": int(w.shape[1]), "lengths": lengths}
        pad = (-len(data)) % 4
        blobs.append(data + b"\0" * pad)
        offset += len(data) + pad
    return arrays, b"".join(blobs), max_error


def pack(trace: Trace, *, encoding: str = "f16", special: frozenset[str] = frozenset(), n_forced: int = 0,
         teacher: bool = False, extra: dict | None = None, encoded: tuple[dict, bytes, float] | None = None,
         tail: bytes = b"") -> bytes:
    """The run as the stepper reads it. extra: more header fields (what the page wants the stepper to show:
    the step to open on, the view, presenter mode...); encoded: `weights(trace, encoding)`, if already made;
    teacher: the run is teacher-forced (the steps carry the reference and its probability); tail: bytes after
    the weights, which a header field points into by offsets from the weights' start (an audio run's
    spectrogram and samples: app/render/spectrogram.audio_tail, whose offsets start at len(body))."""
    arrays, body, max_error = encoded if encoded is not None else weights(trace, encoding)
    steps = []
    for t, s in enumerate(trace.steps):
        row = {"token": s.token, "prob": finite(s.prob, 5), "top": [[tok, finite(p, 5)] for tok, p in s.top_k]}
        if teacher:
            row["reference"] = trace.target_tokens[t]
            row["target_prob"] = finite(s.extra.get("target_prob", 0.0), 5)
            row["correct"] = bool(s.extra.get("correct"))
        steps.append(row)
    header = {
        "version": VERSION, "encoding": encoding, "max_error": max_error, "m": trace.m, "n": trace.n,
        "teacher": teacher, "source": list(trace.source_tokens), "read": list(trace.decoder_input_tokens),
        "target": list(trace.target_tokens), "special": sorted(special),
        "forced": forced_positions(trace, n_forced), "steps": steps, "arrays": arrays,
        "colours": [[float(a), c] for a, c in figures.COLORSCALE], "mask_colour": figures.MASK_COLOR,
        "accent": figures.ACCENT, **(extra or {}),
    }
    head = _header_bytes(header)
    return MAGIC + struct.pack("<I", len(head)) + head + body + tail


def unpack(blob: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and, per kind, the decoded weights as (L, h, q, k) float arrays with NaN where nothing was
    shipped (past a row's keys): what stepper.js draws, for tests and benchmarks."""
    if blob[:4] != MAGIC:
        raise ValueError("not a stepper run (no LENS magic)")
    (size,) = struct.unpack("<I", blob[4:8])
    header = json.loads(blob[8:8 + size].decode("utf-8"))
    base = 8 + size
    out = {}
    for kind, a in header["arrays"].items():
        L, h, lengths = a["layers"], a["heads"], a["lengths"]
        cells, q = sum(lengths), len(lengths)
        start = base + a["offset"]
        if header["encoding"] == "f16":
            flat = np.frombuffer(blob, "<f2", L * h * cells, start).astype(np.float64).reshape(L, h, cells)
        else:
            scales = np.frombuffer(blob, "<f4", L * h * q, start).astype(np.float64).reshape(L, h, q)
            codes = np.frombuffer(blob, np.uint8, L * h * cells, start + 4 * L * h * q).reshape(L, h, cells)
            flat = codes / 255.0
            bounds = np.cumsum([0, *lengths])
            for r in range(q):
                flat[:, :, bounds[r]:bounds[r + 1]] *= scales[:, :, r:r + 1]
        keys = max(lengths, default=0)
        full = np.full((L, h, q, keys), np.nan)
        bounds = np.cumsum([0, *lengths])
        for r, k in enumerate(lengths):
            full[:, :, r, :k] = flat[:, :, bounds[r]:bounds[r + 1]]
        out[kind] = full
    return header, out


def asset(name: str) -> str:
    """stepper.js / stepper.css, as text (the component takes them inline)."""
    return (HERE / name).read_text(encoding="utf-8")


def script() -> str:
    """The component's script: stepper.js, then pair.js (two runs, one step bar; same module), then audio.js (a
    clip's spectrogram and players)."""
    return asset("stepper.js") + asset("pair.js") + asset("audio.js")


def styles() -> str:
    return asset("stepper.css") + asset("pair.css") + asset("audio.css")


def picture(header: dict, arrays: dict[str, np.ndarray], step: int) -> dict:
    """What stepper.js draws at `step` in the header's kind and view, as a plotly-like spec: per panel a weight
    heatmap (NaN where a cell is hatched) and, where any cell is hatched, an overlay of those cells (hover text
    "masked"); a title naming the one head. Its Python twin, for tests and for what a page reports of a step."""
    kind, view = header["kind"], header["view"]
    w = arrays[kind]
    L, H = w.shape[:2]
    n, m = header["n"], header["m"]
    rows = n if kind == "encoder_self_attention" else step
    keys = (m if header["teacher"] else step) if kind == "decoder_self_attention" else n
    cut = np.full((L, H, rows, keys), np.nan)
    k = min(keys, w.shape[3])
    cut[:, :, :, :k] = w[:, :, :rows, :k]
    if view == "head":
        layer, head = min(header["layer"], L - 1), min(header["head"], H - 1)
        shown = [(layer, [head])]
    elif view == "layer_mean":
        shown = [(min(header["layer"], L - 1), list(range(H)))]
    elif view == "layer":  # one layer's heads, side by side
        shown = [(min(header["layer"], L - 1), [head]) for head in range(H)]
    elif view == "mean":
        shown = [(layer, list(range(H))) for layer in range(L)]
    else:
        shown = [(layer, [head]) for layer in range(L) for head in range(H)]
    data = []
    for layer, heads in shown:
        z = cut[layer, heads].mean(axis=0)
        data.append({"type": "heatmap", "z": z, "hovertemplate": "weight", "layer": layer, "heads": heads})
        if np.isnan(z).any():
            data.append({"type": "heatmap", "z": np.where(np.isnan(z), 1.0, np.nan), "hovertemplate": "masked"})
    titles = {"cross_attention": "Cross-attention", "decoder_self_attention": "Decoder self-attention",
              "encoder_self_attention": "Encoder self-attention"}
    title = titles[kind] + (f" · layer {shown[0][0] + 1} · head {shown[0][1][0] + 1}" if view == "head" else
                            f" · layer {shown[0][0] + 1} · mean over heads" if view == "layer_mean" else "")
    return {"data": data, "title": [{"text": title}]}


# ---- two runs, one step bar (pair.js) ----------------------------------------------------------------------------
PAIR_MAGIC = b"LENP"


def pack_pair(blobs: Sequence[bytes], header: dict) -> bytes:
    """Packed runs (`pack`) that one step bar drives: b"LENP", a uint32 header length, the header (UTF-8 JSON:
    the page's fields, and "sizes", each run's length in bytes), then the runs one after another. The header's
    fields (pair.js): run_id and seq (as one run's), step and m (the bar's range; each run shows min(step, its
    m)), titles (per run, lines), notes (per step: text, badge, tone, detail; or none), mark_row (a row marked
    once reached), diff (title and colours: A − B of the first two runs where the tokens match; or none)."""
    head = _header_bytes({**header, "sizes": [len(b) for b in blobs]})
    return PAIR_MAGIC + struct.pack("<I", len(head)) + head + b"".join(blobs)


def unpack_pair(blob: bytes) -> tuple[dict, list[bytes]]:
    """The pair's header and its runs' packed bytes (each one `unpack` reads)."""
    if blob[:4] != PAIR_MAGIC:
        raise ValueError("not a pair of stepper runs (no LENP magic)")
    (size,) = struct.unpack("<I", blob[4:8])
    header = json.loads(blob[8:8 + size].decode("utf-8"))
    out, at = [], 8 + size
    for n in header["sizes"]:
        out.append(blob[at:at + n])
        at += n
    return header, out


def _matching(a: Sequence, b: Sequence) -> list[int]:
    return [i for i in range(min(len(a), len(b))) if a[i] == b[i]]


def pair_difference(runs: Sequence[tuple[dict, dict[str, np.ndarray]]], step: int) -> tuple[list, list, np.ndarray]:
    """What pair.js draws below two runs at the bar's `step`: (rows, cols, A − B) over the rows and columns with
    the same token at the same position, each run at min(step, its m), in its header's kind and view (one head
    or one layer's mean). Cells nothing was shipped for are the Trace's zeros. Its Python twin, for tests."""
    (ha, wa), (hb, wb) = runs
    kind = ha["kind"]
    sa, sb = min(step, ha["m"]), min(step, hb["m"])

    def tokens(h, s):
        rows = h["source"] if kind == "encoder_self_attention" else h["read"][:s]
        keys = h["read"][:h["m"] if h["teacher"] else s] if kind == "decoder_self_attention" else h["source"]
        return rows, keys

    (ra, ka), (rb, kb) = tokens(ha, sa), tokens(hb, sb)
    rows, cols = _matching(ra, rb), _matching(ka, kb)
    za = np.nan_to_num(picture(ha, wa, sa)["data"][0]["z"])
    zb = np.nan_to_num(picture(hb, wb, sb)["data"][0]["z"])
    if not rows or not cols:
        return rows, cols, np.zeros((len(rows), len(cols)))
    return rows, cols, za[np.ix_(rows, cols)] - zb[np.ix_(rows, cols)]
