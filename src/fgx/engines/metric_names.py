"""The names of the training metrics: fgx's name of each quantity (the ``metric`` column of
``results/rl/<run>/metrics.parquet``, the columns of an SFT model's ``train_log.parquet``; both engines) beside
the tag verl's logger writes for it.

The torch engine tags its TensorBoard curves with these verl tags (:mod:`fgx.engines.torch.tensorboard`);
the verl engine reads verl's log back into fgx's names through the inverse (:data:`FGX_NAMES`), so a
quantity has one name in every metrics table whichever engine trained it.
"""

from __future__ import annotations

# fgx metric -> the tag verl writes for the same quantity
VERL_TAGS = {
    "reward": "critic/score/mean",
    "response_length": "response_length/mean",
    "loss": "actor/loss",                # the whole objective (policy loss + KL and entropy terms)
    "pg_loss": "actor/pg_loss",
    "kl": "actor/kl_loss",               # KL to the starting model (the kl_coef term)
    "approx_kl": "actor/ppo_kl",         # KL to the policy that sampled the batch
    "clipfrac": "actor/pg_clipfrac",
    "entropy": "actor/entropy",
    "grad_norm": "actor/grad_norm",
    "lr": "actor/lr",
    "step_time_s": "timing_s/step",
    "gen_time_s": "timing_s/gen",
    "num_gen_batches": "training/filter_groups/num_gen_batches",  # dynamic sampling (fgx's replay buffer on verl)
    "num_groups_trained": "training/filter_groups/num_groups_trained",
}

# quantities only verl logs, under fgx's names
VERL_ONLY = {
    "critic/rewards/mean": "reward_with_penalty",
    "response_length/clip_ratio": "response_clip_ratio",
}

# quantities only the torch engine logs: verl's trainer logs neither the batch's share of correct responses
# (its reward, "reward", is that share when rl.reward is acc) nor the validation responses' length per level
TORCH_ONLY = frozenset({"accuracy", "val_response_length"})

# verl tag -> fgx metric: how the verl engine names what verl logged
FGX_NAMES = {**{tag: name for name, tag in VERL_TAGS.items()}, **VERL_ONLY}

# an SFT model's train_log.parquet column -> the tag verl's SFT trainer writes for it (step: the row)
VERL_SFT_TAGS = {"loss": "train/loss", "grad_norm": "train/grad_norm", "lr": "train/lr"}
