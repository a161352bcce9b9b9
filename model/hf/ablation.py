"""Head ablation for Hugging Face models: a head's output is set to zero before W_O, as in our own engine
(model.engine.heads, model.builtin.attention), on a model that several sessions share at once.

transformers 5.x takes no head_mask / decoder_head_mask / cross_attn_head_mask for these families. What every
attention does take is its output projection (Marian / BART / mBART / Pegasus / M2M-100: `out_proj`; T5 / mT5:
`o`), whose input is the heads' outputs concatenated, (B, T, h * d_k), head-major. A forward pre-hook on that
projection that multiplies the slice [j * d_k, (j + 1) * d_k) of each switched-off head j by 0 is exactly our
ablation.

The hooks are installed once per model (`install`, at engine construction, marked on the model so a second
engine on the same model adds none) and are dormant: they return None, touching no tensor, unless the calling
thread's context (`ablating`, a `contextvars.ContextVar`) names heads to switch off in that very projection.
A context set in one thread is invisible to every other thread, so one session's ablated run and another's
plain run may share the model at the same time; with no heads off nothing is set, so a plain run computes
bit for bit what it did before the hooks existed.

The Heads ranking (`head_off_nll`) switches a different head off in each copy of a batch in one pass: the plan's
keep vector is then a matrix, one row per batch row (`rows_plan`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import torch
from attention_lens.model.engine.errors import ModelInputError
from attention_lens.model.engine.heads import KIND_CODES
from attention_lens.model.hf.contributions import attention_sites
from transformers.modeling_outputs import BaseModelOutput

MARK = "_attention_lens_ablation_hooks"  # set on a model whose output projections carry the pre-hook
# The calling thread's plan: output projection module -> (h * d_k,) 1.0 / 0.0 per input feature; None: nothing off.
_PLAN: ContextVar[dict[Any, torch.Tensor] | None] = ContextVar("attention_lens_hf_ablation", default=None)
_INSTALL = threading.Lock()


def _zero_heads(module: Any, args: tuple) -> tuple | None:
    """Forward pre-hook of an output projection: pass-through unless this thread's plan names it."""
    plan = _PLAN.get()
    if plan is None:
        return None
    keep = plan.get(module)
    if keep is None:
        return None
    x = args[0]
    keep = keep.to(dtype=x.dtype, device=x.device)
    if keep.dim() == 2:  # a keep vector per batch row (head_off_nll): (B, h * d_k) against x (B, T, h * d_k)
        keep = keep[:, None, :]
    return (x * keep, *args[1:])


def install(model: Any) -> bool:
    """Put the dormant pre-hook on every attention's output projection, once per model. False (and nothing
    installed) for a family whose attention modules are not known (model.hf.contributions.attention_sites)."""
    with _INSTALL:
        if getattr(model, MARK, False):
            return True
        try:
            sites = attention_sites(model)
        except ModelInputError:
            return False
        for layers in sites.values():
            for _, o_proj, _, heads in layers:
                if o_proj.in_features % heads:
                    return False  # not h equal slices: no head to cut out (no hook was put on this model)
        for layers in sites.values():
            for _, o_proj, _, _ in layers:
                o_proj.register_forward_pre_hook(_zero_heads)
        setattr(model, MARK, True)
        return True


def plan_of(model: Any, masks: dict[str, torch.Tensor | None]) -> dict[Any, torch.Tensor]:
    """Head masks (model.engine.heads.keep_masks: kind code -> (layers, h), 0.0 for a head off, or None) ->
    output projection -> per-feature keep vector, for the projections that have a head off."""
    off = {code: mask for code, mask in masks.items() if mask is not None and bool((mask == 0).any())}
    if not off:
        return {}
    if not getattr(model, MARK, False):
        raise ModelInputError(f"Switching heads off is not available for this {model.config.model_type} model: "
                              f"its attention output projections carry no head-off hooks (the adapter puts them "
                              f"on when it opens a Marian, BART, mBART, Pegasus, M2M-100 or T5 / mT5 model).")
    sites = attention_sites(model)
    plan = {}
    for code, mask in off.items():
        for (_, o_proj, _, heads), row in zip(sites[KIND_CODES[code]], mask):
            if bool((row == 0).any()):
                plan[o_proj] = row.repeat_interleave(o_proj.in_features // heads)
    return plan


@contextmanager
def ablating(model: Any, masks: dict[str, torch.Tensor | None] | None) -> Iterator[None]:
    """Inside: this thread's forward passes of `model` run with the heads of `masks` switched off (no heads
    off, or masks None: nothing is set and the hooks stay dormant)."""
    plan = plan_of(model, masks) if masks else {}
    if not plan:
        yield
        return
    token = _PLAN.set(plan)
    try:
        yield
    finally:
        _PLAN.reset(token)


def rows_plan(model: Any, per_row: list[str | None], rows_each: int) -> dict[Any, torch.Tensor]:
    """A plan with one head off per block of batch rows: block c (rows c * rows_each .. (c + 1) * rows_each - 1)
    has head per_row[c] ("kind:layer:head", 1-based kind code enc|dec|cross; None: none) off ->
    output projection -> (rows, h * d_k) keep matrix, for the projections where some block has a head off."""
    if not getattr(model, MARK, False):
        raise ModelInputError(f"Switching heads off is not available for this {model.config.model_type} model.")
    sites = attention_sites(model)
    rows = len(per_row) * rows_each
    plan: dict[Any, torch.Tensor] = {}
    for c, spec in enumerate(per_row):
        if spec is None:
            continue
        code, layer, head = spec.split(":")
        _, o_proj, _, heads = sites[KIND_CODES[code]][int(layer) - 1]
        d_k = o_proj.in_features // heads
        if o_proj not in plan:
            plan[o_proj] = torch.ones(rows, o_proj.in_features)
        h = int(head) - 1
        plan[o_proj][c * rows_each:(c + 1) * rows_each, h * d_k:(h + 1) * d_k] = 0.0
    return plan


IGNORE = -100
LOGITS_BUDGET = 1 << 29  # bytes of float32 logits one pass of head_off_nll may hold (rows x positions x vocabulary)


def _nll_rows(logits: torch.Tensor, labels: torch.Tensor) -> np.ndarray:
    """Summed negative log-likelihood per row, in float64 as Engine.head_off_nll's one-pass-per-head default
    computes it: logits (R, T, V), labels (R, T) with IGNORE where a row has no position."""
    out = np.zeros(logits.shape[0])
    for r in range(logits.shape[0]):
        keep = labels[r] != IGNORE
        row = logits[r][keep].double()
        lse = torch.logsumexp(row, dim=-1)
        out[r] = float((lse - row.gather(1, labels[r][keep][:, None])[:, 0]).sum())
    return out


@torch.no_grad()
def head_off_nll(model: Any, src: torch.Tensor, src_keep: torch.Tensor, dec: torch.Tensor,
                 dec_mask: torch.Tensor | None, labels: torch.Tensor, heads: list[str],
                 budget: int = LOGITS_BUDGET) -> np.ndarray:
    """(1 + len(heads),) summed teacher-forced NLL of a padded batch (src / src_keep (B, n), dec (B, m), its
    additive 4-D decoder mask or None for the model's own, labels (B, m) with IGNORE at padding): no head off,
    then each head alone off. Many heads per pass: the batch is repeated, a copy per head, with a keep matrix per
    row on the output projections (rows_plan). The encoder runs once for every decoder self- and cross-attention
    head (their rows start from the plain encoder's output); an encoder head's rows run the whole model. As many
    copies per pass as keep the pass's logits within `budget` bytes."""
    device = model.device
    src, src_keep, dec, labels = (t.to(device) for t in (src, src_keep, dec, labels))
    extra = {} if dec_mask is None else {"decoder_attention_mask": dec_mask.to(device)}
    b, m = dec.shape
    vocab = int(model.get_output_embeddings().weight.shape[0])
    copies_max = max(1, budget // max(1, b * m * vocab * 4))
    encoded = model.get_encoder()(input_ids=src, attention_mask=src_keep)

    def rep(x: torch.Tensor, c: int) -> torch.Tensor:
        return x if c == 1 else x.repeat(c, *([1] * (x.dim() - 1)))

    def run(specs: list[str | None], with_encoder: bool) -> np.ndarray:
        c = len(specs)
        plan = rows_plan(model, specs, b)
        kw = {k: rep(v, c) for k, v in extra.items()}
        token = _PLAN.set(plan) if plan else None
        try:
            if with_encoder:
                out = model(input_ids=rep(src, c), attention_mask=rep(src_keep, c), decoder_input_ids=rep(dec, c),
                            use_cache=False, **kw)
            else:
                hidden = BaseModelOutput(last_hidden_state=rep(encoded.last_hidden_state, c))
                out = model(encoder_outputs=hidden, attention_mask=rep(src_keep, c),
                            decoder_input_ids=rep(dec, c), use_cache=False, **kw)
        finally:
            if token is not None:
                _PLAN.reset(token)
        return _nll_rows(out.logits, rep(labels, c)).reshape(c, b).sum(1)

    result = np.zeros(1 + len(heads))
    result[0] = run([None], with_encoder=False)[0]
    order = sorted(range(len(heads)), key=lambda k: heads[k].split(":")[0] != "enc")  # encoder heads first
    for with_encoder in (True, False):
        members = [k for k in order if (heads[k].split(":")[0] == "enc") == with_encoder]
        for start in range(0, len(members), copies_max):
            chunk = members[start:start + copies_max]
            for k, v in zip(chunk, run([heads[k] for k in chunk], with_encoder)):
                result[1 + k] = v
    return result


def active() -> bool:
    """Whether this thread is inside an `ablating` block with heads off."""
    return _PLAN.get() is not None
