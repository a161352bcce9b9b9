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
