"""Model configuration: a frozen dataclass that checks itself and round-trips through JSON."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
# The dimensions a training run chooses (model.training.train.TrainConfig.architecture); the vocabulary sizes
# come from the tokenizers, the special ids are fixed, `scaled` follows the variant.
ARCHITECTURE = ("d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "dropout", "max_positions")


@dataclass(frozen=True)
class ModelConfig:
    """Dimensions in the notation of Vaswani et al. (2017): d_model, h heads, N layers, d_ff."""

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 128
    n_heads: int = 4
    n_encoder_layers: int = 3
    n_decoder_layers: int = 3
    d_ff: int = 512
    dropout: float = 0.1
    max_positions: int = 256
    pad_id: int = PAD_ID
    unk_id: int = UNK_ID
    bos_id: int = BOS_ID
    eos_id: int = EOS_ID
    # False: attention scores are not divided by sqrt(d_k), a model trained with that bug on purpose
    # (train --variant no-scaling); it then runs unscaled always, as it was trained.
    scaled: bool = True

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "n_encoder_layers",
                     "n_decoder_layers", "d_ff", "max_positions"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"config: {name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"config: d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"config: dropout must be in [0, 1), got {self.dropout!r}")
        if not isinstance(self.scaled, bool):
            raise ValueError(f"config: scaled must be true or false, got {self.scaled!r}")
        ids = (self.pad_id, self.unk_id, self.bos_id, self.eos_id)
        if len(set(ids)) != 4 or min(ids) < 0 or max(ids) >= min(self.src_vocab_size, self.tgt_vocab_size):
            raise ValueError(f"config: special-token ids {ids} must be distinct and inside both vocabularies")

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    def to_json(self, path: Path) -> None:
        Path(path).write_text(json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n")

    @classmethod
    def from_json(cls, path: Path) -> ModelConfig:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a readable JSON config ({exc})") from exc
        if not isinstance(data, dict):
            raise ValueError(f"{path}: config must be a JSON object")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{path}: unknown config fields {unknown}")
        try:
            return cls(**data)
        except TypeError as exc:
            raise ValueError(f"{path}: {exc}") from exc
