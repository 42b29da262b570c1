"""The optimizer constants both engines train with (AdamW's weight decay and betas, the gradient
clip): the torch engine's loops and the verl commands read them here, so the engines cannot drift."""

from __future__ import annotations

GRAD_CLIP = 1.0  # global gradient-norm clip of every training loop, both engines

# RL: verl's actor optimizer (AdamW at a constant lr)
RL_WEIGHT_DECAY = 0.01
RL_BETAS = (0.9, 0.999)

# pretraining and SFT (their weight decay is a setting, pretrain.train.weight_decay)
SUPERVISED_BETAS = (0.9, 0.95)
