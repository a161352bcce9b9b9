"""What each head does (model.analysis.head_roles) as a layers x heads HTML table per kind: the role in each cell
with the figure that named it, every share in the cell's tooltip. Pure: rows in, HTML out; no Streamlit here."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

ROLE_COLOURS = {"aligning": "#c3e6cb", "previous-token": "#cfe2ff", "next-token": "#cfe2ff",
                "same-position": "#cfe2ff", "local": "#dbe9f6", "sink": "#f8d7da", "punctuation": "#fff3cd",
                "broad": "#e2e3e5", "mixed": "#ffffff"}
# The figure each role was named from (model.analysis.head_roles.ROLE_RULE)
EVIDENCE = {"previous-token": "previous", "next-token": "next", "same-position": "same", "punctuation": "punctuation",
            "broad": "entropy_norm"}
NAMES = {"same": "same position", "previous": "previous token", "next": "next token", "first": "first token",
         "eos": "</s>", "punctuation": "punctuation", "aligned": "gold-aligned word (predicted)",
         "aligned_shift": "gold-aligned word (read)", "entropy_norm": "normalised entropy"}
CSS = """
.lens-roles{border-collapse:collapse;font-size:.85em;margin:.3em 0 .6em 0}
.lens-roles th,.lens-roles td{border:1px solid #d9dee3;padding:.25em .5em;text-align:center;white-space:nowrap}
.lens-roles td small{color:#52606d}
"""


def evidence(row: dict) -> float:
    """The figure that named the head's role (its largest share for a mixed head)."""
    name = row["role"]
    if name == "aligning":
        return max(v for v in (row["aligned"], row["aligned_shift"]) if v is not None)
    if name == "sink":
        return max(row["first"], row["eos"])
    if name == "local":
        return row["same"] + row["previous"] + row["next"]
    if name in EVIDENCE:
        return row[EVIDENCE[name]]
    return max(row[k] for k in ("same", "previous", "next", "first", "eos", "punctuation"))


def roles_html(rows: Sequence[dict], title: str, escape: Callable[[str], str] = html.escape) -> str:
    """rows: one kind's heads (model.analysis.head_roles.roles_of) -> a table, layers down, heads across."""
    layers = max(r["layer"] for r in rows)
    heads = max(r["head"] for r in rows)
    cell = {(r["layer"], r["head"]): r for r in rows}
    out = [f"<style>{CSS}</style><table class='lens-roles' aria-label='{escape(title)}'>",
           f"<caption style='caption-side:top;text-align:left;font-weight:600'>{escape(title)}</caption>",
           "<tr><th></th>" + "".join(f"<th>H{h}</th>" for h in range(1, heads + 1)) + "</tr>"]
    for la in range(1, layers + 1):
        out.append(f"<tr><th>L{la}</th>")
        for h in range(1, heads + 1):
            r = cell[(la, h)]
            tip = "; ".join(f"{label} {r[k]:.0%}" for k, label in NAMES.items() if r.get(k) is not None)
            tip += f"; entropy {r['entropy']:.2f} nats"
            out.append(f"<td style='background:{ROLE_COLOURS.get(r['role'], '#ffffff')}' title='{escape(tip)}'>"
                       f"{escape(r['role'])}<br><small>{evidence(r):.0%}</small></td>")
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)
