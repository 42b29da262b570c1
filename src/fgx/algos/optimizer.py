"""The optimizer constants both engines train with (AdamW's weight decay and betas, the gradient
clip): the torch engine's loops and the verl commands read them here, so the engines cannot drift."""

from __future__ import annotations

GRAD_CLIP = 1.0  # global gradient-norm clip of every training loop, both engines

# RL: verl's actor optimizer (AdamW at a constant lr)
RL_WEIGHT_DECAY = 0.01
RL_BETAS = (0.9, 0.999)

# pretraining and SFT: AdamW with these betas, lr decaying by a cosine to MIN_LR_RATIO of its peak
# (pretraining's weight decay is a setting, base.train.weight_decay; fine-tuning's is SFT_WEIGHT_DECAY)
SUPERVISED_BETAS = (0.9, 0.95)
SFT_WEIGHT_DECAY = 0.0
MIN_LR_RATIO = 0.1
