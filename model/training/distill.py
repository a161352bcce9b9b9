"""Word-level knowledge distillation (Kim & Rush 2016, "Sequence-Level Knowledge Distillation", section 3.1): a
frozen teacher model of the same vocabularies reads the same source and target prefix, and the student is trained
toward the teacher's next-token distribution at every target position as well as toward the label:

    loss = label cross-entropy + weight * KL(teacher || student),
    KL = sum_positions sum_v p_teacher(v) (log p_teacher(v) - log p_student(v)) / positions,

over the positions whose label is a real token (padding left out). The KL divergence is 0 exactly when the two
distributions are equal and positive otherwise. Used as an anchor: while another loss (guided alignment) moves a
model's attention, the translation stays near the teacher's (e.g. the model it was fine-tuned from).
"""

from __future__ import annotations

from pathlib import Path

import torch
from attention_lens.model.builtin.checkpoint import Checkpoint, load_checkpoint


def distillation_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """KL(teacher || student) of the next-token distributions, averaged over the positions where `keep` is True.
    student_logits, teacher_logits: (B, T, V); keep: (B, T) booleans. 0 (with a gradient) when nothing is kept."""
    if not bool(keep.any()):
        return student_logits.sum() * 0.0
    log_p = torch.log_softmax(teacher_logits.float()[keep], dim=-1)
    log_q = torch.log_softmax(student_logits.float()[keep], dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(-1).mean()


def load_teacher(folder: str | Path, source_tok, target_tok, raw_text: bool) -> Checkpoint:
    """The teacher checkpoint, frozen (eval mode, no gradients), after checking that it reads and writes the same
    pieces as the student (source_tok, target_tok): both tokenizers identical, and the same text form (raw or
    corpus conventions). A mismatch is a ValueError of one line."""
    teacher = load_checkpoint(Path(folder))
    same = (teacher.source_tokenizer.model_proto == source_tok.model_proto
            and teacher.target_tokenizer.model_proto == target_tok.model_proto)
    if not same:
        raise ValueError(f"the distillation teacher {folder} has other tokenizers than the student (its vocabularies "
                         f"{teacher.config.src_vocab_size}/{teacher.config.tgt_vocab_size}); a teacher must share the "
                         "student's source and target vocabularies, e.g. the model it was fine-tuned from")
    teacher_raw = teacher.card.get("text") == "raw"
    if teacher_raw != raw_text:
        raise ValueError(f"the distillation teacher {folder} reads {'raw' if teacher_raw else 'conventions'} text and "
                         f"the student {'raw' if raw_text else 'conventions'} text; they must read the same form")
    teacher.model.eval()
    for p in teacher.model.parameters():
        p.requires_grad_(False)
    return teacher


class Anchor:
    """A frozen teacher (a Transformer of the student's vocabularies) as a training batch's anchor: `kl` gives the
    batch's KL(teacher || student) term and keeps its value in `seen` (for the card's first / last 100 means)."""

    def __init__(self, teacher: torch.nn.Module, pad_id: int) -> None:
        self.teacher, self.pad_id = teacher, pad_id
        self.seen: list[float] = []

    def kl(self, student_logits: torch.Tensor, labels: torch.Tensor, src: torch.Tensor, src_keep: torch.Tensor,
           dec_in: torch.Tensor, self_mask: torch.Tensor, amp: torch.dtype | None) -> torch.Tensor:
        """KL(teacher || student) over the label positions of the rows with at least one label (rows whose labels
        are all padding, trained for the alignment only, are not read by the teacher). The teacher reads the
        student's batch: src (B, S) with src_keep, dec_in (B, T) with the decoder self-attention mask self_mask
        (B, 1, T, T); amp: the autocast dtype of the student's forward pass, or None."""
        rows = (labels != self.pad_id).any(1)
        if not bool(rows.any()):
            return student_logits.sum() * 0.0
        device_type = student_logits.device.type
        with torch.no_grad(), torch.autocast(device_type, dtype=amp or torch.float32, enabled=amp is not None):
            enc = self.teacher.encode(src[rows], src_keep[rows], need_weights=False)
            teacher_logits = self.teacher.decode(dec_in[rows], enc, self_mask[rows], need_weights=False).logits
        term = distillation_loss(student_logits[rows], teacher_logits.float(), labels[rows] != self.pad_id)
        self.seen.append(term.item())
        return term
