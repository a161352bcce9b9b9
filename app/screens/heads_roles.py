"""The Heads page's roles beside the ablation ranking: what every head attends to over the same pairs
(model.analysis.head_roles, through services.head_roles_of_test_split, cached, or with an upload's streamed ranking)
as a layers x heads table per kind, named by the rule the page states. Layout only; the table is
app/render/roles.py."""

from __future__ import annotations

import streamlit as st
from attention_lens.app import services, state
from attention_lens.app.render import roles as render
from attention_lens.app.services import ModelInputError


def measure(model_key: str, n: int) -> dict | None:
    """The roles over the first n test pairs the ranking used, with their gold links (an upload's roles come with
    its streamed ranking: services.upload_head_ranking)."""
    try:
        return services.head_roles_of_test_split(model_key, n)
    except (ModelInputError, ValueError) as exc:
        st.info(state.text(exc))
        return None


def no_gold_note(result: dict) -> str | None:
    """What to say when the pairs carried no gold links: the rule's `aligning` needs them, so no
    cross-attention head can be named aligning here (None when some cross-attention head was measured on gold)."""
    cross = [h for h in result["heads"] if h["kind"] == "cross"]
    if not cross or any(h.get("aligned") is not None for h in cross):
        return None
    return ("These pairs carry no gold links (the everyday models' test split has none, nor has a file without a "
            "gold column), and the rule names a cross-attention head “aligning” only against gold links: here "
            "none can be, however well it aligns. See each head's alignment on Explore, or score it on the "
            "Alignment page with a file that has gold links.")


def rule_caption(result: dict | None) -> None:
    if result is not None:
        st.caption(f"Roles over {result['n']} pairs, by the rule: {state.text(result['rule'])}. Each cell: the role "
                   f"and the share that named it; hover for every share.")
        if note := no_gold_note(result):
            st.info(note, icon=":material/info:")


def kind_roles(code: str, result: dict | None) -> None:
    """The table of one kind's roles, under its ranking grid."""
    if result is None:
        return
    rows = [r for r in result["heads"] if r["kind"] == code]
    st.html(render.roles_html(rows, f"{state.KINDS_BY_CODE[code][1]}: what each head attends to", escape=state.text))
