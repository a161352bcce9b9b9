"""Leakage lab: break the causal mask or the right shift in teacher forcing and watch the model cheat.

Three views share the current model, sentence and switches: the switched run with its leakage meter, the
causality probe (model/analysis/probe.py), and the shipped broken models side by side. Compute lives in
model/analysis (through app/services.py), figures in app/render/leakage.py; this file only lays them out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
from attention_lens.app import registry, services, state
from attention_lens.app.render import figures, views
from attention_lens.app.render import leakage as lf
from attention_lens.app.screens import audio_input, leakage_bugs, leakage_exposure, page_url, tour, vocabulary
from attention_lens.app.screens.explore import controls as ctl
from attention_lens.app.screens.explore.panels import ask_for_reference
from attention_lens.app.services import CheckpointError, DecodeOptions, ModelInputError

TRIO = ("en-fr", "en-fr-no-causal-mask", "en-fr-no-shift")
# The same three on real language (Tatoeba), shown when the page's model reads typed text.
EVERYDAY_TRIO = ("everyday-en-fr", "everyday-en-fr-no-causal-mask", "everyday-en-fr-no-shift")
TRIO_PAIR = "en-fr"  # the language pair the three broken-model folders translate


def trio_for(engine) -> tuple[str, ...]:
    return EVERYDAY_TRIO if state.text_kind(engine.card) == "raw" else TRIO
# Shown beside the trio when installed: trained without the 1/sqrt(d_k) (train --variant no-scaling).
OPTIONAL = ("en-fr-no-scaling",)
VIEWS = {"switches": "Switches & leakage meter", "probe": "Causality probe", "broken": "Broken models",
         "bugs": "Three more bugs", "exposure": "Training vs inference"}
K_VIEW, K_CAUSAL, K_SHIFT, K_HEAD = "leak_view", "leak_causal", "leak_shift", "leak_head"
K_SHARE_OPEN = "leak_share_open"  # the Copy link popover is open
K_LABELS, K_SIGNATURE, K_SAMPLE = "leak_probe_labels", "leak_signature", "leak_sample_n"
SIGNATURES = {"next_position": "weight on the next position (t → t+1)",
              "copy_diagonal": "weight on its own position where it holds the answer"}
ERRORS = (ModelInputError, CheckpointError, ValueError, OSError)

SILENT = (
    "**Why these bugs are silent.** Nothing crashes and no shape is wrong. In teacher forcing the whole reference "
    "sits in the decoder input, so a decoder that can see the next position (no mask) or its own label (no shift) "
    "learns to copy the answer: the training loss falls fast and teacher-forced accuracy looks superb. At "
    "generation time the future does not exist yet, so the copying trick has nothing to copy and the output "
    "collapses, often into one token repeated.")
MASKING = (
    "**Why the mask goes on the scores, before the softmax.** The causal mask adds −∞ to the score of every "
    "later key; exp(−∞) = 0, and the softmax then divides by the sum over the allowed keys only, so every row "
    "still sums to 1 over the past. Zeroing the weights *after* the softmax is not the same: each row would sum "
    "to less than 1 (the future share simply vanishes), and the surviving weights were normalised with the "
    "future scores in the denominator, so information about later tokens still leaks in.")


# A switch says which way it is set: off, its track is dark grey (the default light grey on white was almost
# invisible) and its label ends in a red "off"; on, the label ends in "on".
SWITCH_CSS = """<style>
.st-key-leak_causal label > span + div, .st-key-leak_shift label > span + div {border: 1px solid #52606d}
.st-key-leak_causal label:has(input:not(:checked)) > span + div,
.st-key-leak_shift label:has(input:not(:checked)) > span + div {background-color: #7b8794}
.st-key-leak_causal label:has(input:not(:checked)) > span + div > div,
.st-key-leak_shift label:has(input:not(:checked)) > span + div > div {background-color: #ffffff}
.st-key-leak_causal [data-testid="stWidgetLabel"] p::after,
.st-key-leak_shift [data-testid="stWidgetLabel"] p::after {content: ": on"; font-weight: 600; color: #2b8a3e}
.st-key-leak_causal label:has(input:not(:checked)) [data-testid="stWidgetLabel"] p::after,
.st-key-leak_shift label:has(input:not(:checked)) [data-testid="stWidgetLabel"] p::after {content: ": off";
  color: #c92a2a}
</style>"""


def setting_text(causal: bool, shift: bool) -> str:
    return f"mask {'on' if causal else '**off**'}, shift {'on' if shift else '**off**'}"


def plain(text: str) -> str:
    return " ".join(text.split())


def short(text: str, limit: int = 120) -> str:
    """A collapsed model's output can be one endless word: cut it so that it does not overflow its column."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- widgets --------------------------------------------------------------------------------------------------
def switches_ui(engine) -> tuple[bool, bool]:
    """The two switches for the current teacher-forced run; disabled, with the engine's reason, where the
    engine cannot honour them."""
    notes = engine.switch_notes
    for key, supported in ((K_CAUSAL, engine.supports_causal_switch), (K_SHIFT, engine.supports_shift_switch)):
        if key not in st.session_state or not supported:  # an unsupported switch shows the setting in use
            st.session_state[key] = True
    st.html(SWITCH_CSS)
    cols = st.columns(3, vertical_alignment="center")
    causal = cols[0].toggle("Causal mask", key=K_CAUSAL, disabled=not engine.supports_causal_switch,
                            help=notes.get("causal") or "Off: every decoder row may attend to every position, "
                                                        "including the ones after it.")
    shift = cols[1].toggle("Right shift", key=K_SHIFT, disabled=not engine.supports_shift_switch,
                           help=notes.get("shift") or "Off: row t reads the very label it must predict "
                                                      "instead of the previous one.")
    trained = engine.trained_setting
    cols[2].caption(f"This model was trained with {setting_text(*trained)}. The switches change only this "
                    "teacher-forced run; the loaded model is never modified.")
    if not engine.supports_causal_switch:
        st.caption(f":material/block: Causal mask switch unavailable: {notes.get('causal', 'not supported')}")
    if not engine.supports_shift_switch:
        st.caption(f":material/block: Right shift switch unavailable: {notes.get('shift', 'not supported')}")
    return causal, shift


# ---- view 1: the switched run and its meter ------------------------------------------------------------------
def switches_view(model_key: str, engine, source: str, target: str, causal: bool, shift: bool) -> None:
    if not target.strip():
        ask_for_reference(model_key, source, "Teacher forcing needs a reference target: type one above (or pick an "
                          "example).", "leak_use_own")
        return
    trace = audio_input.shown_trace(model_key, source, target, DecodeOptions(mode="teacher_forced", causal=causal,
                                                                             shift=shift), ERRORS)
    if trace is None:
        return
    meter = services.measure(trace)
    # the picture and its meters side by side, right under the switches: one screen at 1366 x 768
    picture, side = st.columns([3.2, 1], gap="medium")
    cols = [side] * 4
    cols[0].metric("Max future mass", f"{meter.max_future:.1%}",
                   help="The largest total weight one row of one head puts on the positions after it.")
    cols[1].metric("Mean future mass", f"{float(meter.future.mean()) if trace.m else 0.0:.1%}",
                   help="Future mass averaged over every row, head and layer.")
    cols[2].metric("Rows reading the answer", f"{int(meter.holds_answer.sum())} / {trace.m}",
                   help="Rows whose decoder input is the token they must predict (the shift is off, or a "
                        "token repeats).")
    cols[3].metric("Max own-answer weight", f"{meter.max_own_answer:.1%}",
                   help="The largest weight a row puts on its own position when that position holds its answer.")

    heads = ["all"] + [f"{la},{h}" for la in range(engine.n_decoder_layers) for h in range(engine.n_heads)]
    if st.session_state.get(K_HEAD) not in heads:
        st.session_state[K_HEAD] = "all"
    choice = side.selectbox("Decoder self-attention heads", heads, key=K_HEAD,
                          format_func=lambda s: "every layer × head" if s == "all" else
                          f"layer {int(s.split(',')[0]) + 1} · head {int(s.split(',')[1]) + 1}")
    if choice == "all":
        fig = views.attention_figure(trace, "decoder_self_attention", "grid", trace.m)
        future_rows, own_rows = meter.future.max(axis=(0, 1)), meter.own_answer.max(axis=(0, 1))
        which = "the largest over every layer and head"
    else:
        layer, head = (int(x) for x in choice.split(","))
        fig = views.attention_figure(trace, "decoder_self_attention", "head", trace.m, layer, head)
        future_rows, own_rows = meter.future[layer, head], meter.own_answer[layer, head]
        which = f"layer {layer + 1} · head {head + 1}"
    answer_rows = [int(t) for t in np.flatnonzero(meter.holds_answer)]
    example = (f"row {answer_rows[0]} reads “{state.text(trace.decoder_input_tokens[answer_rows[0]])}” and must "
               f"predict “{state.text(trace.target_tokens[answer_rows[0]])}”") if answer_rows else ""
    if answer_rows:  # the shift's bug where a class sees it: the cells where a row reads its own answer
        lf.mark_own_answer(fig, answer_rows, engine.n_decoder_layers * engine.n_heads if choice == "all" else 1)
    picture.plotly_chart(fig, key="leak_heatmap", config={"displayModeBar": False})  # its toolbar lay over the titles
    st.caption("Rows read the token left of the arrow and predict the one on the right. With the mask on, "
               "the grey hatched upper triangle is the future the mask hides; switch it off and those cells "
               "carry weight: that is the leak. With the right shift off, each row reads the very token it must "
               f"predict ({example}): the red boxes mark where a row looks at its own answer, and weight there "
               "is copying." if answer_rows else
               "Rows read the token left of the arrow and predict the one on the right. With the mask on, "
               "the grey hatched upper triangle is the future the mask hides; switch it off and those cells "
               "carry weight: that is the leak. Switch the right shift off and each row reads its own answer.")
    left, right = st.columns([1, 1.4])
    left.plotly_chart(lf.head_heatmap(meter.mean_future, "Future mass per head (mean over rows)"),
                      key="leak_future_heads", config={"displayModeBar": False})
    right.plotly_chart(lf.row_bars(figures.row_labels(trace.decoder_input_tokens, trace.target_tokens),
                                   future_rows, own_rows if not shift else None, title=f"Per row: {which}"),
                       key="leak_rows", config={"displayModeBar": False})
    if not causal:
        zeroed = 1.0 - meter.future.max(initial=0.0)
        st.caption(f"Had the future weights been zeroed *after* the softmax instead, the worst row here would sum "
                   f"to {zeroed:.1%} instead of 100%.")
    st.markdown(MASKING)


# ---- view 2: the probe -------------------------------------------------------------------------------------------
def probe_view(model_key: str, source: str, target: str, causal: bool, shift: bool) -> None:
    if K_LABELS not in st.session_state:
        st.session_state[K_LABELS] = "reference"
    labels = st.radio("Labels to perturb", ["reference", "greedy"], key=K_LABELS, horizontal=True,
                      format_func={"reference": "the reference target", "greedy": "the model's own greedy output"}.get)
    use = target if labels == "reference" and target.strip() else None
    if labels == "reference" and use is None:
        st.caption("No reference target: the probe uses the model's own greedy output.")
    try:
        result = services.probe_sentence(model_key, source, use, causal, shift)
    except ERRORS as exc:
        st.error(str(exc))
        return
    number = f"max past logit change **{result.max_past_logit_change:.3g}**"
    if result.leaks:
        st.markdown(f":red-badge[:material/warning: LEAKS] {number} > {result.threshold:g} "
                    f"(teacher forcing, {setting_text(causal, shift)})")
    else:
        st.markdown(f":green-badge[:material/check: PASS] {number} ≤ {result.threshold:g} "
                    f"(teacher forcing, {setting_text(causal, shift)})")
    cols = st.columns([1.6, 1])
    cols[0].plotly_chart(lf.probe_bars(result.label_tokens, result.position_changes, result.threshold,
                                       "Replace the labels from position j on: how far do rows ≤ j move?"),
                         key="leak_probe_bars", config={"displayModeBar": False})
    cols[1].plotly_chart(lf.head_heatmap(np.array(result.future_weight_by_head),
                                         f"Largest weight on a later key: {result.future_attention_mass:.1%}"),
                         key="leak_probe_heads", config={"displayModeBar": False})
    st.markdown(
        "**The probe.** Row i predicts label i, so in a sound decoder it may depend only on the labels before i. "
        "For every position j the probe replaces the labels from j on with other tokens and reruns teacher "
        "forcing: rows 0..j must not move at all. A missing mask lets row i look at the next position (which "
        "holds label i); a missing shift lets row i read label i itself; either way earlier logits move. "
        "Above 1e-4 counts as a leak: float32 rounding is around 1e-6, a real leak is 1e-2 or more. "
        "`python -m model probe` runs the same probe from the command line, on any model.")


# ---- view 3: the shipped broken models -------------------------------------------------------------------------
def trio_sentence(engine, source: str, target: str) -> tuple[str, str, str | None]:
    """(source, target, why) for the en-fr trio: the page's sentence when the current model reads English,
    else the first en-fr example (never a sentence of another language: the healthy model would look broken
    on it), with the reason said."""
    if engine.card.get("pair") == TRIO_PAIR:
        return source, target, None
    kind = state.text_kind(engine.card)
    example = next(p for p in state.presets() if p["pair"] == TRIO_PAIR and p.get("text", "conventions") == kind)
    pair = state.text(engine.card.get("pair") or engine.family)
    return example["source"], example.get("target", ""), (
        f"The three models below translate English into French, and the sentence above is for {pair}: they "
        f"are shown on the en-fr example “{state.text(example['source'])}” instead.")


def broken_view(engine, source: str, target: str) -> None:
    # A shipped folder appears while it trains; it is a model once its card is written.
    available = {e.key: e for e in registry.entries() if (e.path / "card.json").is_file()}
    trio = trio_for(engine)
    missing = [k for k in trio if k not in available]
    if missing:
        st.warning(f"The shipped models this view compares are not installed: {', '.join(missing)} "
                   f"(expected in {registry.CHECKPOINTS}). Train them with `python -m model train --pair en-fr "
                   "--variant healthy|no-causal-mask|no-shift --out checkpoints/<name>`.")
        return
    keys = trio + tuple(k for k in OPTIONAL if k in available and trio == TRIO)
    engines = {}
    for key in keys:
        try:
            engines[key] = services.get_engine(key)
        except ERRORS as exc:
            st.error(f"Cannot open {key}: {exc}")
            return
    st.markdown(SILENT)

    logs = {k: log for k in keys if (log := services.train_log(str(available[k].path / "train_log.csv")))}
    if logs:
        st.plotly_chart(lf.training_curves(logs), key="leak_curves", config={"displayModeBar": False})
        st.caption("The broken models' teacher-forced curves look as good as the healthy one's, or better; "
                   "only the free-running exact match (dotted) tells the truth.")
    else:
        st.caption("No train_log.csv found next to these checkpoints, so no training curves.")

    if K_SIGNATURE not in st.session_state:
        st.session_state[K_SIGNATURE] = "next_position"
    signature = st.radio("Attention signature", list(SIGNATURES), key=K_SIGNATURE, horizontal=True,
                         format_func=SIGNATURES.get)
    source, target, why = trio_sentence(engine, source, target)
    if why:
        st.info(why, icon=":material/translate:")
    st.markdown(f"**On this sentence**, each model in teacher forcing as it was trained, then writing on its own "
                f"(greedy): “{state.text(plain(source))}”")
    cols = st.columns(len(keys))
    for col, key in zip(cols, keys):
        with col:
            sentence_column(key, engines[key], source, target, signature)

    st.divider()
    sample_section(keys)


def share(value: float) -> str:
    """A card's share as a metric: `99.8%`, and `100%` rather than `100.0%`, which four columns at 1366 px cut
    to `100.…` (seen in assets/broken-models-1366.png)."""
    return "100%" if value >= 0.9995 else f"{value:.1%}"


def sentence_column(key: str, engine, source: str, target: str, signature: str) -> None:
    causal, shift = engine.trained_setting
    st.markdown(f"#### {key}")
    unscaled = " · **no 1/√d_k scaling**" if engine.card.get("variant") == "no-scaling" else ""
    st.caption(f"trained with {setting_text(causal, shift)}{unscaled}")
    metrics = engine.card.get("test_metrics") or engine.card.get("valid_metrics") or {}
    if metrics:
        a, b = st.columns(2)
        a.metric("TF accuracy", share(metrics.get("teacher_forced_accuracy", float("nan"))),
                 help="Teacher-forced token accuracy on the test split, as trained (card.json).")
        b.metric("exact match", share(metrics.get("exact_match", float("nan"))),
                 help="Free-running (greedy) translations equal to the reference, test split (card.json).")
        if "chrf" in metrics:
            st.caption(f"free-running chrF **{metrics['chrf']:.1f}**" +
                       (f" · BLEU {metrics['bleu']:.1f}" if "bleu" in metrics else "") + " (test split, card)")
    try:
        greedy = services.get_trace(key, source, None, DecodeOptions(mode="greedy"))
        tf = (services.get_trace(key, source, target, DecodeOptions(mode="teacher_forced", causal=causal, shift=shift))
              if target.strip() else None)
    except ERRORS as exc:
        st.error(str(exc))
        return
    out = engine.detokenize([s.id for s in greedy.steps])
    rep = services.repetition([s.token for s in greedy.steps if s.id not in engine.special_ids()])
    same = target.strip() and plain(out) == plain(target)
    st.markdown(f"**greedy:** {state.text(short(out)) or '∅'}")
    st.caption(("exact match" if same else "differs from the reference") +
               (f" · writes “{rep.run_token}” {rep.longest_run}× in a row" if rep.repeats() else ""))
    if tf is None:
        st.caption("Type a reference target to see the teacher-forced run.")
        return
    correct = np.mean([bool(s.extra.get("correct")) for s in tf.steps])
    st.caption(f"teacher-forced accuracy on this sentence: **{correct:.0%}**")
    values = getattr(services.measure(tf), signature)
    st.plotly_chart(lf.head_heatmap(values, "next-position weight" if signature == "next_position"
                                    else "copying-diagonal weight"),
                    key=f"leak_sig_{key}", config={"displayModeBar": False})


def sample_section(keys: tuple[str, ...]) -> None:
    st.markdown("**On the test split.** The same measures pooled over the first test sentences: the unmasked "
                "model's strongest head puts most of its weight on the next position, the unshifted model's on "
                "the diagonal; the broken models' free-running output repeats itself.")
    if K_SAMPLE not in st.session_state:
        st.session_state[K_SAMPLE] = 32
    n = st.select_slider("Test sentences", [16, 32, 64, 128], key=K_SAMPLE)
    reports = {}
    for key in keys:
        try:
            reports[key] = services.sample_measures(key, n)
        except ERRORS as exc:
            st.error(f"{key}: {exc}")
            return
    st.dataframe(sample_table(reports), hide_index=True, key="leak_sample_table", width="stretch",
                 column_config={"measure": st.column_config.TextColumn("measure", width="medium")})


def _strongest(best: dict) -> str:
    """`97.1% (layer 2 · head 3)`, or a dash when no row of the sample had that signature to measure."""
    if best["value"] is None:
        return "— (no row to measure)"
    return f"{best['value']:.1%} (layer {best['layer']} · head {best['head']})"


def sample_table(reports: dict) -> pd.DataFrame:
    """The sample measures with one column per model and one row per measure, every cell text: three model
    columns fit the page's width (one column per measure did not), and a measure with nothing to measure says
    so instead of showing `None`."""
    rows = {"trained with": [], "teacher-forced accuracy": [], "exact match (greedy)": [],
            "next-position weight, best head": [], "copy-diagonal weight, best head": [],
            "outputs repeating a piece ≥3×": [], "example output": []}
    for key, rep in reports.items():
        d = rep.to_dict()
        unscaled = ", no 1/√d_k scaling" if key in OPTIONAL else ""
        rows["trained with"].append(setting_text(rep.causal, rep.shift).replace("**", "") + unscaled)
        rows["teacher-forced accuracy"].append(f"{rep.teacher_forced_accuracy:.1%}")
        rows["exact match (greedy)"].append(f"{rep.exact_match:.1%}")
        rows["next-position weight, best head"].append(_strongest(d["strongest_next_position"]))
        rows["copy-diagonal weight, best head"].append(_strongest(d["strongest_copy_diagonal"]))
        rows["outputs repeating a piece ≥3×"].append(f"{rep.repeat_share:.1%}")
        rows["example output"].append(short(rep.outputs[0], 80) if rep.outputs else "—")
    return pd.DataFrame([{"measure": name, **dict(zip(reports, values))} for name, values in rows.items()])


# ---- page -------------------------------------------------------------------------------------------------------
def _head_param(raw: str) -> str:
    layer, _, head = raw.partition(",")
    if raw != "all" and not (layer.isdigit() and head.isdigit()):
        raise ValueError("not `all` or `layer,head`")
    return raw


# The page's link parameters besides model, text and target (app/screens/page_url.py)
URL_RULES = {"view": (K_VIEW, page_url.one_of(tuple(VIEWS)), str),
             "causal": (K_CAUSAL, page_url.flag, lambda v: str(int(v))),
             "shift": (K_SHIFT, page_url.flag, lambda v: str(int(v))), "head": (K_HEAD, _head_param, str),
             # training vs inference's step (its pair stepper keeps the address bar's `step` as it steps)
             "step": (leakage_exposure.K_STEP, page_url.number_in(range(1, 10_000)), str),
             "present": (ctl.K_PRESENT, page_url.flag, lambda v: str(int(v)))}


def main() -> None:
    model_key, engine = page_url.open_page(
        "leakage_lab", URL_RULES, "Leakage lab",
        "Break the causal mask or the right shift and watch the decoder copy the answer it should predict.")
    tour.panel(tour.LEAKAGE_PAGE)  # the tour's Leakage lab stops are shown here
    present = bool(st.session_state.get(ctl.K_PRESENT))
    ctl.style(present)  # Explore's compact top; presenter mode: no sidebar, no title, large text
    top = st.columns([1.5, 2.3, 2.3, 1.0], vertical_alignment="bottom")
    speech = services.is_speech(engine)
    if speech:  # a speech model: a clip, and its transcript as the reference (audio_input)
        clip = audio_input.clip_ui(model_key, top[:2])
        source = clip.label if clip is not None else ""
        if clip is not None and not str(st.session_state.get(state.K_TARGET) or "").strip():
            st.session_state[state.K_TARGET] = audio_input.teacher_reference(clip)
    else:
        source, _, _ = state.text_inputs(engine, cols=top[:2])
    target = state.target_input(top[2])
    top[3].toggle("Present", key=ctl.K_PRESENT, help="Large text, no sidebar, the switches beside their picture "
                                                     "(also `present=1` in the link).")
    if not speech:
        vocabulary.source_help(engine, source)
    elif not source:  # no clip yet, or one the reader refused (said above)
        st.stop()
    causal, shift = switches_ui(engine)
    if K_VIEW not in st.session_state:
        st.session_state[K_VIEW] = "switches"
    row = st.columns([6, 1], vertical_alignment="center")
    view = row[0].radio("View", list(VIEWS), key=K_VIEW, format_func=VIEWS.get, horizontal=True,
                        label_visibility="collapsed")
    share = page_url.share_popover(row[1], K_SHARE_OPEN)
    st.divider()
    if speech and view != "switches":
        st.info(f"{VIEWS[view]} runs on text models; on a speech model ({state.text(engine.family)}) the switches "
                f"view shows the mask and the shift on a clip.", icon=":material/graphic_eq:")
    elif view == "switches":
        switches_view(model_key, engine, source, target, causal, shift)
    elif view == "probe":
        probe_view(model_key, source, target, causal, shift)
    elif view == "bugs":
        leakage_bugs.bugs_view(model_key, engine, source, target, causal, shift, ERRORS)
    elif view == "exposure":
        leakage_exposure.exposure_view(model_key, engine, source, target, causal, shift, ERRORS)
    else:
        broken_view(engine, source, target)
    page_url.share_link(share, page_url.write(URL_RULES), K_SHARE_OPEN + "_link")


main()
