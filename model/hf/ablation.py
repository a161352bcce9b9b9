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
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import torch
from attention_lens.model.engine.errors import ModelInputError
from attention_lens.model.engine.heads import KIND_CODES
from attention_lens.model.hf.contributions import attention_sites

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
    return (x * keep.to(dtype=x.dtype, device=x.device), *args[1:])


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


def active() -> bool:
    """Whether this thread is inside an `ablating` block with heads off."""
    return _PLAN.get() is not None
