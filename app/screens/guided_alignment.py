"""Models trained with guided alignment (`train --align-links`), on the Alignment and Compare pages: what the
card says of the supervised head (layer, head, reading, method, the aligner whose links it learnt, its AER
beside the model it started from), and one click to read that head (Alignment) or to put the healthy and the
aligned model side by side on it (Compare)."""

from __future__ import annotations

from typing import Any

import streamlit as st
from attention_lens.app import registry, services
from attention_lens.app.services import alignment as al

SUFFIX = "-aligned"


def guided(engine) -> dict[str, Any] | None:
    """The card's guided_alignment entry, when it names the supervised head's method."""
    entry = engine.card.get("guided_alignment")
    return entry if isinstance(entry, dict) and isinstance(entry.get("method"), str) else None


def _set(values: dict[str, Any]) -> None:
    for key, value in values.items():
        st.session_state[key] = value


def _figures(entry: dict[str, Any]) -> str:
    parts = []
    gold = entry.get("hansards")
    if isinstance(gold, dict) and "aer" in gold:
        parts.append(f"On the Hansards gold links: AER **{gold['aer']:.3f}** with `{entry['method']}`; the model it "
                     f"started from scores {gold.get('start_same_head', float('nan')):.3f} with the same head and "
                     f"method, {gold.get('start_best_head', float('nan')):.3f} with its best head.")
    agree = entry.get("agreement")
    if isinstance(agree, dict) and "aer" in agree:
        parts.append(f"Against the aligner's links on its {agree.get('n', '')} held-back test pairs: AER "
                     f"{agree['aer']:.3f} (the model it started from, same head: "
                     f"{agree.get('start_same_head', float('nan')):.3f}).")
    return " ".join(parts)


def alignment_box(engine, k_reading: str, k_extract: str, k_tau: str, k_layer: str, k_head: str) -> None:
    """On the Alignment page, above the method boxes: the supervised head and a button that reads it."""
    entry = guided(engine)
    if entry is None:
        return
    try:
        method = al.Method.parse(entry["method"])
    except ValueError:
        return
    st.info(f"Trained with guided alignment: cross-attention layer {entry.get('layer')} head {entry.get('head')} "
            f"learnt the word links of {entry.get('aligner', 'a statistical aligner')} on its training pairs, "
            f"while the model kept translating. Its reading: `{method.name}`. " + _figures(entry))
    values = {k_reading: method.reading, k_extract: method.extract, k_layer: method.layer or 0,
              k_head: method.head or 0}
    if method.extract == "threshold":
        values[k_tau] = method.threshold
    st.button("Read the supervised head", key="aligned_read_head", on_click=_set, args=(values,))


def partner(model_key: str) -> tuple[str, str] | None:
    """(healthy, aligned) keys when `model_key` is one of such a pair of installed models."""
    keys = {e.key for e in registry.entries()}
    if model_key.endswith(SUFFIX) and model_key.removesuffix(SUFFIX) in keys:
        return model_key.removesuffix(SUFFIX), model_key
    if model_key + SUFFIX in keys:
        return model_key, model_key + SUFFIX
    return None


def compare_box(model_key: str, k_a_text: str, k_b_model: str, k_b_text: str, k_kind: str, k_layer: str,
                k_head: str) -> None:
    """On Compare, for a model with an aligned sibling (or an aligned one): one button puts the other on side
    B, on the same sentence, at the supervised cross-attention head."""
    pair = partner(model_key)
    if pair is None:
        return
    other = pair[1] if model_key == pair[0] else pair[0]
    try:
        entry = guided(services.get_engine(pair[1]))
    except (services.CheckpointError, services.ModelInputError, OSError):
        return
    if entry is None:
        return
    layer, head = int(entry.get("layer", 1)), int(entry.get("head", 0))
    values = {k_b_model: other, k_b_text: st.session_state.get(k_a_text, ""), k_kind: "cross", k_layer: layer,
              k_head: head}
    cols = st.columns([3, 1], vertical_alignment="center")
    cols[0].caption(f"`{pair[1]}` is `{pair[0]}` fine-tuned so that cross-attention layer {layer} head {head} follows "
                    f"a word aligner's links (guided alignment); the translation was kept.")
    cols[1].button("Healthy against aligned", key="cmp_aligned_pair", on_click=_set, args=(values,))
