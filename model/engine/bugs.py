"""The three silent bugs of the references that a run can switch on besides the missing mask and shift.

Each is a `DecodeOptions` field (off by default); an engine either computes it (its `bug_switches`) or refuses
it with a plain reason (`bug_notes`). The loaded model is never changed: the switch is an argument of one run.
"""

from __future__ import annotations

BUGS = ("mask_after_softmax", "swap_cross", "unscaled")

# One line each, for the page and the CLI (our words, after the references' account of each bug).
EXPLAIN = {
    "mask_after_softmax": "The mask zeroes weights after the softmax instead of setting scores to -inf before it: "
                          "the future's share of each row simply disappears, so rows sum to less than 1.",
    "swap_cross": "Cross-attention called as (memory, x, x): the source positions become the queries and the "
                  "target positions the keys and values, the opposite of (x, memory, memory).",
    "unscaled": "The scores are not divided by sqrt(d_k): with larger scores the softmax saturates into near "
                "one-hot rows, whose gradients all but vanish.",
}


def swap_error(n: int, m: int) -> str:
    """The documented error of the swapped cross-attention when source and target lengths differ."""
    rows = f"{m} row{'s' * (m != 1)}"
    return (f"Cross-attention with its arguments swapped, (memory, x, x): the queries are the {n} source "
            f"positions, so it returns {n} rows, which cannot be added to the decoder's {rows} (PyTorch would "
            f"say: the size of tensor a ({m}) must match the size of tensor b ({n}) at non-singleton dimension "
            f"1). With a source and target of equal length the same bug runs without any error.")
