"""Dynamic sampling in verl's GRPO as the torch engine samples: a budget of generation batches.

verl 0.9.1's V1 trainer ignores ``algorithm.filter_groups.max_num_gen_batches`` (it warns so): a
policy that solves every prompt or none, such as RL on Level 2 from a base at 0 % there, keeps
generating and never takes a step. :class:`BudgetedReplayBuffer` replaces its replay buffer
(``trainer.v1.sampler.custom_sampler``) and samples like :func:`fgx.engines.torch.rl.rollout`: one
generation batch of ``rl.batch_size`` prompts at a time, until ``rl.batch_size`` groups have rewards
that differ or ``rl.max_generation_batches`` batches are spent (the rule both engines call:
:func:`fgx.algos.objective.another_generation_batch`). The step then trains on the informative groups
it has; verl pads a short batch with no-op samples. With none at all it trains on one group of equal
rewards, whose advantages are 0 (no policy gradient; the torch engine skips that step's update),
because verl's trainer cannot take a step without a sample.

Validation and runs without dynamic sampling use verl's own buffer unchanged.
"""

from __future__ import annotations

from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer

from fgx.algos import objective
from fgx.engines.metric_names import VERL_TAGS


class BudgetedReplayBuffer(ReplayBuffer):
    """verl's sync replay buffer with fgx's generation budget (``sampler_kwargs``: ``metric``, the
    group filter's reward; ``batch_size``, prompts per step and per generation batch;
    ``max_generation_batches``)."""

    def __init__(self, **kwargs):
        if kwargs["trainer_mode"] != "sync":
            raise ValueError(f"fgx's replay buffer samples for verl's sync trainer, not {kwargs['trainer_mode']!r}")
        extra = dict(kwargs["sampler_kwargs"] or {})
        super().__init__(**kwargs, filter_groups_metric=str(extra["metric"]), train_batch_size=int(extra["batch_size"]),
                         gen_batch_size=1)
        self.max_generation_batches = int(extra["max_generation_batches"])

    def sample(self, global_steps: int, partition_id: str, batch_size: int):
        if partition_id == "val":
            return super().sample(global_steps, partition_id, batch_size)
        batches, polled = 1, 0.0  # the trainer submits each step's first batch itself
        while True:
            self._sync_metadata_from_transfer_queue()
            uninformative, _ = self._dapo_filtered_keys(partition_id)
            finished = self.finished_keys[partition_id]
            informative = sorted(finished - uninformative)
            inflight = len(self.pending_keys[partition_id]) + len(self.running_keys[partition_id])
            if inflight:
                polled = self._wait_for_next_poll(partition_id, polled)
            elif objective.another_generation_batch(len(informative), batches, batch_size=batch_size,
                                                    max_batches=self.max_generation_batches, dynamic_sampling=True):
                self.refill_fn(batch_size)
                batches += 1
            else:
                break
        chosen = informative[:batch_size] or sorted(finished)[:1]
        if not chosen:
            raise RuntimeError(f"step {global_steps}: no prompt group of {batches} generation batches finished "
                               "(every rollout failed); see the vLLM server's log above")
        terminal = finished | self.failure_keys[partition_id]
        self._clear_groups(partition_id, terminal - set(chosen))
        metrics = {VERL_TAGS["num_gen_batches"]: batches,
                   VERL_TAGS["num_groups_trained"]: len(informative[:batch_size]),
                   "training/filter_groups/evicted_samples": len(uninformative)}
        return self._materialize_batch(partition_id, chosen, dict(self.partitions[partition_id])), metrics
