"""Alignment for a speech model: which cross-attention heads time its words. Clips with gold word timings (the
model's held-out test clips, or an upload: a clip list, a CTM or TextGrid, the clips), every head ranked by its
DTW word-start error, the head set chosen (or typed), the clips worst first, the DTW view of one clip, and the
generation config with those `alignment_heads` to download.

Compute lives in model/analysis/timing (through app/services.py), the figure in app/render/timing.py; this file
only lays them out.
"""

from __future__ import annotations

import hashlib
import os

import pandas as pd
import streamlit as st
from attention_lens.app import services, timing_files
from attention_lens.app.render.timing import dtw_figure
from attention_lens.app.services import CheckpointError, ModelInputError

K_SOURCE, K_N, K_HEADS, K_CLIP = "timing_source", "timing_n", "timing_heads", "timing_clip"
K_LIST, K_GOLD, K_CLIPS, K_REPORT = "timing_list", "timing_gold", "timing_clips", "timing_report"
SHIPPED, UPLOAD = "The model's held-out test clips", "Your clips"
ERRORS = (ModelInputError, CheckpointError, ValueError, OSError)
COLUMNS = {"median_start_error_ms": "median ms", "mean_start_error_ms": "mean ms", "within_20ms": "≤ 20 ms",
           "within_50ms": "≤ 50 ms", "within_100ms": "≤ 100 ms", "n_words": "words"}


def _init(key: str, value) -> None:
    if key not in st.session_state:
        st.session_state[key] = value


def _heads(text: str, layers: int, heads: int) -> tuple[tuple[int, int], ...] | None:
    from attention_lens.model.analysis.timing.run import parse_heads

    return tuple(parse_heads(text, layers, heads)) if text.strip() else None


def _shipped_files(n: int) -> tuple[dict[str, bytes], str, str] | None:
    test = services.TIMING_TEST
    listed, ctm = test / "list.tsv", test / "timings.ctm"
    if not (listed.is_file() and ctm.is_file()):
        return None
    lines = [line for line in listed.read_text(encoding="utf-8").splitlines() if line.strip()][:n]
    wanted = {os.path.splitext(os.path.basename(line.split("\t")[0]))[0] for line in lines}
    files = timing_files.read_files([str(test / line.split("\t")[0]) for line in lines])
    files["list.tsv"] = ("\n".join(lines) + "\n").encode()
    files["timings.ctm"] = "".join(row + "\n" for row in ctm.read_text(encoding="utf-8").splitlines()
                                   if row.split()[:1] and row.split()[0] in wanted).encode()
    return files, "list.tsv", "timings.ctm"


def _uploaded_files() -> tuple[dict[str, bytes], str, str | None] | None:
    listed, gold, clips = (st.session_state.get(k) for k in (K_LIST, K_GOLD, K_CLIPS))
    if listed is None or not clips:
        return None
    files = {c.name: c.getvalue() for c in clips}
    files[listed.name] = listed.getvalue()
    if gold is not None:
        files[gold.name] = gold.getvalue()
    return files, listed.name, None if gold is None else gold.name


def data_ui() -> tuple[dict[str, bytes], str, str | None] | None:
    """The clips to rank on: the shipped test clips (the first N) or an upload."""
    _init(K_SOURCE, SHIPPED)
    _init(K_N, 20)
    source = st.radio("Clips with gold word timings", (SHIPPED, UPLOAD), key=K_SOURCE, horizontal=True)
    if source == SHIPPED:
        st.number_input("Clips (the first N of the test list; the first half chooses the heads, the second "
                        "half is reported)", min_value=2, max_value=400, step=2, key=K_N)
        found = _shipped_files(int(st.session_state[K_N]))
        if found is None:
            st.info("This server has no held-out test clips (assets/speech/test): upload your own.")
        return found
    cols = st.columns(3)
    cols[0].file_uploader("Clip list (clip<TAB>transcript[<TAB>start-end per word])", type=["tsv", "txt"],
                          key=K_LIST)
    cols[1].file_uploader("Gold timings: CTM or one TextGrid (or none: the list's third column)",
                          type=["ctm", "textgrid", "TextGrid", "txt"], key=K_GOLD)
    cols[2].file_uploader("The clips (WAV, FLAC, OGG, MP3)", type=["wav", "flac", "ogg", "mp3"],
                          accept_multiple_files=True, key=K_CLIPS)
    found = _uploaded_files()
    if found is None:
        st.caption("Upload the clip list and the clips it names to rank the heads on them (their gold timings: a "
                   "CTM, one TextGrid, or the list's third column).")
    return found


def _table(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    return df.rename(columns=COLUMNS)


def report_view(model_key: str, report: dict, files: dict[str, bytes]) -> None:
    sel = report["selection"]
    chosen = report["alignment_heads"]
    cols = st.columns(4)
    cols[0].metric("Median word-start error", f"{report['median_start_error_ms']:.0f} ms"
                   if report["median_start_error_ms"] is not None else "–")
    cols[1].metric("Within 100 ms", f"{100 * report['within_100ms']:.0f} %" if report["within_100ms"] is not None
                   else "–")
    cols[2].metric("Words scored", report["n_words"])
    cols[3].metric("Head set", ", ".join(f"{layer}:{head}" for layer, head in chosen))
    st.caption(("Heads given by you; " if sel["source"] == "given" else
                f"Heads chosen greedily on {sel['chosen_on']} clips ({sel['source']}); ")
               + f"figures on the {sel['reported_on']} other clips. Layer:head, 0-based, as "
                 "generation_config.alignment_heads writes them.")
    text = services.generation_config_text(model_key, chosen)
    if text is not None:
        st.download_button("Download generation_config.json with these alignment_heads", text,
                           file_name="generation_config.json", mime="application/json", key="timing_download")
    summary = [{"what": "the head set", **{k: report[k] for k in COLUMNS}},
               {"what": "mean of all heads", **report["mean_of_heads"]},
               {"what": f"best single head {report['best_head']['layer']}:{report['best_head']['head']}",
                **report["best_head"]}]
    st.dataframe(_table([{k: r[k] for k in ["what", *COLUMNS]} for r in summary]), hide_index=True)
    with st.expander("Every head, best first"):
        st.dataframe(_table([{"head": f"{h['layer']}:{h['head']}", **{k: h[k] for k in COLUMNS}}
                             for h in report["heads"]]), hide_index=True, height=300)
    with st.expander("Where the errors are: by word length, position, silence before, frequency"):
        for group, rows in report["breakdown"].items():
            st.markdown(f"**{group.replace('_', ' ')}**")
            st.dataframe(_table([{"band": r["band"], **{k: r[k] for k in COLUMNS}} for r in rows]),
                         hide_index=True)
    clips = report["clips"]
    st.markdown("**Clips, worst first**")
    st.dataframe(pd.DataFrame([{"line": c["index"], "clip": c["clip"], "mean ms": c["mean_start_error_ms"],
                                "max ms": c["max_start_error_ms"], "words": c["n_words"]} for c in clips]),
                 hide_index=True, height=220)
    names = [c["clip"] for c in clips]
    _init(K_CLIP, names[0] if names else None)
    if st.session_state[K_CLIP] not in names:
        st.session_state[K_CLIP] = names[0] if names else None
    if names:
        name = st.selectbox("DTW view of the clip", names, key=K_CLIP)
        clip_view(model_key, next(c for c in clips if c["clip"] == name), files, chosen)


def clip_view(model_key: str, clip: dict, files: dict[str, bytes], heads: list[list[int]]) -> None:
    data = files.get(os.path.basename(clip["clip"]))
    if data is None:
        st.info(f"{clip['clip']} is not among the clips given.")
        return
    transcript = " ".join(w["word"] for w in clip["words"])
    digest = hashlib.sha256(data).hexdigest()
    try:
        view = services.timing_clip(model_key, digest, transcript, tuple(tuple(h) for h in heads), data)
    except ERRORS as exc:
        st.error(str(exc))
        return
    gold = [(w["word"], w["gold_start"], w["gold_end"]) for w in clip["words"]]
    fig = dtw_figure(view["matrix"], view["path_rows"], view["path_cols"], view["tokens"], view["mel"],
                     view["mel_hop_s"], view["frame_s"], gold, view["words"])
    st.plotly_chart(fig, key="timing_dtw", theme=None, config={"displaylogo": False})
    st.caption("Top: the rows of the transcript's tokens (each read by the decoder) over the clip's 20 ms frames, "
               "as DTW sees them; the white line is the warping path, and a token's time is where it enters the "
               "token's row. Bottom: the clip's log-mel with the gold word starts (green) and the model's (orange, "
               "dashed); the errors per word are in the table above.")
    st.dataframe(pd.DataFrame([{"word": w["word"], "gold start": w["gold_start"], "model start": w["start"],
                                "error ms": w["error_ms"]} for w in clip["words"]]), hide_index=True)


def timing_view(model_key: str, engine) -> None:
    """The Alignment page of a speech model."""
    st.subheader("Which heads time the words?")
    st.caption("Whisper times its words with a few cross-attention heads (its alignment_heads) and dynamic time "
               "warping over their weights. Here every head is ranked by how far its DTW word starts fall from "
               "gold timings, the best set is chosen, and handed back as a generation config.")
    found = data_ui()
    _init(K_HEADS, "")
    st.text_input("Head set to score (layer:head, 0-based, e.g. 2:3,3:1); empty: choose one greedily",
                  key=K_HEADS)
    if found is None:
        return
    files, list_name, timings_name = found
    wrong = timing_files.problem(files, list_name, timings_name)
    if wrong is not None:
        st.error(wrong)
        return
    try:
        heads = _heads(st.session_state[K_HEADS], engine.n_decoder_layers, engine.n_heads)
    except ValueError as exc:
        st.error(str(exc))
        return
    digest = hashlib.sha256(b"".join(hashlib.sha256(files[k]).digest() + k.encode() for k in sorted(files)))
    key = (digest.hexdigest(), heads)
    if st.button("Rank the heads", key="timing_rank", type="primary"):
        try:
            st.session_state[K_REPORT] = (key, services.timing_ranking(model_key, key[0], heads, list_name,
                                                                       timings_name, files))
        except ERRORS as exc:
            st.session_state.pop(K_REPORT, None)
            st.error(str(exc))
    kept = st.session_state.get(K_REPORT)
    if kept is not None and kept[0] == key:
        report_view(model_key, kept[1], files)
