"""The beam table: what beam search holds after a step, as rows for a table. Pure (no Streamlit).

After step s the search holds its finished hypotheses (those that wrote the end token at step s or before)
and, while it goes on, its live ones. The finished are listed first, ranked as the search ranks them
(log-probability divided by length), the winner marked; once the search has stopped, the live beams it was
still holding are dropped: they were never finished, and listing them showed continuations past the final
`.` in place of the translations the search returned. `rank` numbers the rows 1, 2, 3 … in that order (the
finished, then the live), so a hypothesis that finishes later never leaves a gap.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attention_lens.app.services import Trace

COLUMNS = ("rank", "state", "text", "pieces", "log-prob", "per piece")


def text(pieces: Iterable[str], special: frozenset[str]) -> str:
    """Pieces back to text for reading (the model's special pieces dropped; `▁` a space): the one rule for every
    place the app writes a run's pieces as text (the beam table, the step panel, the hypothesis picker)."""
    return "".join(p for p in pieces if p not in special).replace("▁", " ").strip()


def beam_rows(trace: Trace, step: int, special: frozenset[str]) -> list[dict]:
    """The table after `step` (clamped to the search's steps); `special`: the model's special pieces (the end
    token among them)."""
    if not trace.beam_steps:
        return []
    last = len(trace.beam_steps)
    s = max(1, min(step, last))
    rows = []
    for final_rank, beam in enumerate(trace.beams, start=1):
        ended = bool(beam.target_tokens) and beam.target_tokens[-1] in special
        if (ended and beam.m <= s) or (not ended and s == last):
            score = beam.score
            state = "finished" if ended else "stopped at the length limit"
            rows.append({"rank": len(rows) + 1, "state": f"{state} · chosen" if final_rank == 1 else state,
                         "text": text(beam.target_tokens, special), "pieces": " ".join(beam.target_tokens),
                         "log-prob": round(score, 3), "per piece": round(score / max(beam.m, 1), 3)})
    if s < last:
        for b in trace.beam_steps[s - 1]:
            score = float(b["score"])
            rows.append({"rank": len(rows) + 1, "state": "live", "text": text(b["tokens"], special),
                         "pieces": " ".join(b["tokens"]), "log-prob": round(score, 3),
                         "per piece": round(score / max(len(b["tokens"]), 1), 3)})
    return rows
