"""verl's own code, run on the CPU at every seam of the paper path that needs no GPU (marked ``verl``;
skipped where verl is not installed; `.ci/run` installs it):

* verl's RL dataset reads fgx's train parquet with a chat-template tokenizer;
* verl loads fgx's reward function by path, as ``reward.custom_reward_function`` configures it, and
  its DAPO reward manager scores fgx rows with it (the string task's and the arithmetic chains'), overlong
  penalty included, as the torch engine does;
* verl's model merger turns an FSDP checkpoint (two ranks' DTensor shards) into a Hugging Face
  directory that ``AutoModelForCausalLM`` loads with the same weights;
* every verl entry point fgx runs imports.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

verl = pytest.importorskip("verl")
pytestmark = pytest.mark.verl

from omegaconf import OmegaConf  # noqa: E402  (verl's dependency)

from fgx.plan import params  # noqa: E402
from fgx.algos import objective  # noqa: E402
from fgx.algos.objective import overlong_penalty  # noqa: E402
from fgx.algos.rl import ALGORITHMS, algorithm  # noqa: E402
from fgx.engines.torch.model import build_model, save_checkpoint  # noqa: E402
from fgx.engines.torch.tokenizer import build_char_tokenizer  # noqa: E402
from fgx.engines.verl import commands as C  # noqa: E402
from fgx.engines.verl.engine import REWARD_PATH  # noqa: E402
from fgx.io import write_parquet  # noqa: E402
from fgx.settings import ModelShape  # noqa: E402
from fgx.tasks import compute_score, reward  # noqa: E402
from fgx.tasks import strings as S  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHAT = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}")
SHAPE = ModelShape(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                   intermediate_size=64, max_position_embeddings=256)


@pytest.fixture(scope="module")
def tokenizer():
    tok = build_char_tokenizer(model_max_length=4096)
    tok.chat_template = CHAT
    return tok


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    d = tmp_path_factory.mktemp("verl_rows")
    df = S.generate(stage=2, split="train", min_level=1, max_level=2, num=12, seed=3, style="paper")
    write_parquet(df, d / "train.parquet")
    return df, d / "train.parquet"


def test_verls_rl_dataset_reads_fgx_rows(rows, tokenizer, tmp_path):
    from verl.utils.dataset.rl_dataset import RLHFDataset

    df, path = rows
    config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 4096, "filter_overlong_prompts": True,
                               "truncation": "error", "cache_dir": str(tmp_path / "cache"),
                               "filter_overlong_prompts_workers": 1})
    ds = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config)
    assert len(ds) == len(df)
    item = ds[3]
    assert item["data_source"] == df.data_source[3]
    assert item["raw_prompt"][0]["content"] == df.prompt[3][0]["content"]
    assert json.loads(item["reward_model"]["ground_truth"]) == json.loads(df.reward_model[3]["ground_truth"])
    assert item["extra_info"]["depth"] == df.extra_info[3]["depth"]


def _dapo_manager(tokenizer, kind: str, buffer: int, max_new: int):
    from verl.experimental.reward_loop.reward_manager.dapo import DAPORewardManager
    from verl.trainer.ppo.reward import get_custom_reward_fn

    # the reward section exactly as fgx's overrides set it (fgx.engines.verl.commands.ppo_overrides)
    settings = json.loads(params.rl_settings(_paper_config(reward_kind=kind, buffer=buffer, max_new=max_new), "level2"))
    ov = C.ppo_overrides(settings, model_dir="/m", train_files=["/t"], val_files=["/v"], checkpoint_dir="/c",
                         experiment_name="x", reward_path=str(REWARD_PATH), n_gpus_per_node=1)
    cfg: dict = {}
    for item in ov:
        key, _, value = item.lstrip("+").partition("=")
        if key.startswith("reward."):
            node = cfg
            *parents, leaf = key.split(".")
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = OmegaConf.create(f"v: {value}")["v"]
    config = OmegaConf.create(cfg)
    assert config.reward.reward_manager.name == "dapo"
    return DAPORewardManager(config, tokenizer, get_custom_reward_fn(config)), config


def _paper_config(reward_kind: str, buffer: int, max_new: int) -> dict:
    import yaml
    from snakemake.utils import update_config

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    update_config(cfg, yaml.safe_load((ROOT / "config.paper.yaml").read_text()))
    cfg["rl"].update(reward=reward_kind, overlong_buffer=buffer, max_new_tokens=max_new)
    return cfg


@pytest.fixture(scope="module")
def arithmetic_rows():
    from fgx.tasks import arithmetic as A

    return A.generate(stage=2, split="test", min_level=1, max_level=3, num=9, seed=3, style="paper")


@pytest.mark.parametrize("family", ["strings", "arithmetic"])
@pytest.mark.parametrize("kind,buffer", [("score", 0), ("acc", 0), ("score", 8)])
def test_verls_dapo_reward_manager_scores_fgx_rows_as_the_torch_engine_does(rows, arithmetic_rows, tokenizer, kind,
                                                                           buffer, family):
    from verl import DataProto

    df = rows[0] if family == "strings" else arithmetic_rows
    max_new = 40
    manager, _ = _dapo_manager(tokenizer, kind, buffer, max_new)
    outputs = []
    assert len(df) == (12 if family == "strings" else 9)
    for i, r in enumerate(df.to_dict("records")):
        out = json.loads(r["reward_model"]["ground_truth"])["ref_output"]
        outputs.append([json.dumps({"output": out}, ensure_ascii=False), '{"output": "wrong"}',
                        "no answer " * (4 if i % 2 else 1)][i % 3])
    scored = 0
    for i, (r, text) in enumerate(zip(df.to_dict("records"), outputs, strict=True)):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"][:max_new]
        resp = torch.tensor([ids + [tokenizer.pad_token_id] * (max_new - len(ids))])
        mask = torch.tensor([[1] * len(ids) + [0] * (max_new - len(ids))])
        data = DataProto.from_dict(tensors={"responses": resp, "attention_mask": mask},
                                   non_tensors={"data_source": [r["data_source"]], "reward_model": [r["reward_model"]],
                                                "extra_info": [dict(r["extra_info"])]})
        got = asyncio.get_event_loop().run_until_complete(manager.run_single(data))
        text_back = tokenizer.decode(ids, skip_special_tokens=True)
        expected = reward(compute_score(r["data_source"], text_back, r["reward_model"]["ground_truth"]), kind)
        expected += float(overlong_penalty(torch.tensor([len(ids)]), max_new, buffer)[0])
        assert got["reward_score"] == pytest.approx(expected), (text, got)
        assert got["reward_extra_info"]["acc"] == (1.0 if i % 3 == 0 else 0.0), (text, got)  # the right answers
        scored += 1
    assert scored == len(df)


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_each_algorithms_advantages_are_those_of_the_verl_estimator_it_selects(name):
    """verl's trainer computes advantages with ``compute_advantage`` on the estimator its config names;
    fed what the trainer feeds it (each response's reward at its last token, the prompt's uid), it gives
    every algorithm's own advantages: groups of 1 to 8 rollouts, score rewards with overlong fractions."""
    import numpy as np
    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import compute_advantage

    gen = torch.Generator().manual_seed(0)
    sizes = [4, 4, 3, 8, 2, 1]
    uid = [i for i, n in enumerate(sizes) for _ in range(n)]
    rewards = torch.randint(-1, 2, (len(uid),), generator=gen).float() - 0.25 * torch.randint(0, 2, (len(uid),),
                                                                                              generator=gen)
    lengths = torch.randint(1, 7, (len(uid),), generator=gen)
    mask = (torch.arange(6)[None, :] < lengths[:, None]).float()
    token_rewards = torch.zeros(len(uid), 6)
    token_rewards[torch.arange(len(uid)), lengths - 1] = rewards
    data = DataProto.from_dict(tensors={"token_level_rewards": token_rewards, "response_mask": mask},
                               non_tensors={"uid": np.array([f"p{u}" for u in uid], dtype=object)})
    cfg = OmegaConf.create({"algorithm": {"norm_adv_by_std_in_grpo": True}})
    cfg.merge_with_dotlist([f"{k}={v}" for k, v in algorithm(name).VERL_OVERRIDES.items()])
    out = compute_advantage(data, adv_estimator=cfg.algorithm.adv_estimator,
                            norm_adv_by_std_in_grpo=cfg.algorithm.norm_adv_by_std_in_grpo, config=cfg.algorithm)
    verl_adv = out.batch["advantages"]
    fgx_adv = algorithm(name).advantages(rewards, torch.tensor(uid))
    assert torch.allclose(verl_adv, fgx_adv[:, None] * mask, atol=1e-6)
    assert verl_adv.abs().max() > 0.5  # not all zero


def test_the_dynamic_sampling_metric_is_verls_canonical_reward():
    from verl.trainer.config.algorithm import FilterGroupsConfig  # noqa: F401  (the key exists in verl's config)

    overrides = C.ppo_overrides(json.loads(params.rl_settings(_paper_config("score", 0, 64), "level2")), model_dir="/m",
                                train_files=["/t"], val_files=["/v"], checkpoint_dir="/c", experiment_name="x",
                                reward_path=str(REWARD_PATH), n_gpus_per_node=1)
    assert "algorithm.filter_groups.metric=reward" in overrides
    src = Path(verl.__file__).parent / "trainer" / "ppo" / "v1" / "replay_buffer.py"
    assert 'FILTER_GROUPS_REWARD_METRIC = "reward"' in src.read_text()  # "reward" reads rm_scores, our score


def _save_fsdp_shard(rank: int, world: int, root: str, state: dict, port: str):
    """One rank of an FSDP checkpoint as verl's checkpoint manager writes it: its DTensor shards."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("fsdp",))
    shards = {k: distribute_tensor(v, mesh, [Shard(0)]) for k, v in state.items()}
    torch.save(shards, Path(root) / f"model_world_size_{world}_rank_{rank}.pt")
    dist.destroy_process_group()


def test_verls_model_merger_turns_an_fsdp_checkpoint_into_a_loadable_hf_directory(tmp_path):
    import socket

    import torch.multiprocessing as mp
    from transformers import AutoModelForCausalLM

    tok = build_char_tokenizer(model_max_length=256)
    model = build_model(SHAPE, tok, seed=7)
    ckpt = tmp_path / "global_step_3" / "actor"
    save_checkpoint(model, tok, ckpt / "huggingface")  # config, tokenizer, generation config (the merger reads them)
    (ckpt / "huggingface" / "model.safetensors").unlink()
    (ckpt / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": 2}))
    state = {k: v.detach().clone() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    mp.spawn(_save_fsdp_shard, args=(2, str(ckpt), state, port), nprocs=2, join=True)
    out = tmp_path / "merged"
    argv = C.merge_command(checkpoint_dir=str(ckpt), target_dir=str(out), python=sys.executable)
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    merged = AutoModelForCausalLM.from_pretrained(out)
    for k, v in model.state_dict().items():  # the merger writes bfloat16 weights
        assert torch.equal(merged.state_dict()[k], v.to(merged.state_dict()[k].dtype)), k


@pytest.mark.parametrize("module", [C.PPO_MODULE, C.SFT_MODULE, C.MERGE_MODULE])
def test_every_verl_entry_point_fgx_runs_imports(module):
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("kind", ["acc", "score"])
def test_verls_replay_buffer_filters_the_groups_the_torch_engine_filters(rows, kind):
    """verl's V1 trainer drops a group (DAPO dynamic sampling) in its replay buffer by the metric fgx
    sets (``reward``: verl's canonical reward, fgx's score); the store it reads (TransferQueue, a Ray
    service) is replaced by a dict, the filter itself is verl's."""
    pytest.importorskip("transfer_queue")
    from verl.trainer.ppo.v1 import replay_buffer as RB

    df, _ = rows
    responses = ['{"output": "%s"}', '{"output": "wrong"}', "no answer"]
    rewards = {}
    for i, r in enumerate(df.to_dict("records")):
        out = json.loads(r["reward_model"]["ground_truth"])["ref_output"]
        group = [responses[(i + j) % 3 if i % 2 else (i % 3)] for j in range(4)]  # mixed or all-equal groups
        rewards[f"uid{i}"] = [reward(compute_score(r["data_source"], g.replace("%s", out), r["reward_model"]
                                                   ["ground_truth"]), kind) for g in group]
    rb = RB.ReplayBuffer("sync", OmegaConf.create({}), None, "drop", OmegaConf.create({}),
                         refill_fn=lambda n: None, filter_groups_metric="reward", train_batch_size=4, gen_batch_size=8,
                         max_inflight_gen_batches=2)
    for uid, rs in rewards.items():
        for s in range(len(rs)):
            rb.partitions["train"][f"{uid}_{s}_0"] = {"status": "finished"}
        rb.finished_keys["train"].add(uid)

    def kv_batch_get(keys, partition_id, select_fields):  # verl sums each trajectory's token-level scores
        return {"rm_scores": [torch.tensor([0.0, rewards[k.split("_")[0]][int(k.split("_")[1])]]) for k in keys]}

    original = RB.tq.kv_batch_get
    RB.tq.kv_batch_get = kv_batch_get
    try:
        dropped, _ = rb._dapo_filtered_keys("train")
    finally:
        RB.tq.kv_batch_get = original
    torch_engine_drops = {uid for uid, rs in rewards.items() if not objective.informative_group(rs)}
    assert dropped == torch_engine_drops and 0 < len(dropped) < len(rewards)


class _FakeTransferQueue:
    """The part of TransferQueue (a Ray service) verl's replay buffer reads, as dicts: prompts with a
    status tag, trajectories ``<uid>_<session>_0`` with a reward. Every prompt submitted finishes at once
    with the rewards ``policy(uid)`` gives its group."""

    def __init__(self, policy, group_size=4):
        self.policy, self.group_size, self.items, self.submitted = policy, group_size, {}, 0
        self.rewards: dict[str, float] = {}

    def submit(self, n: int) -> None:
        for _ in range(n):
            uid = f"p{self.submitted}"
            self.submitted += 1
            self.items[uid] = {"is_prompt": True, "status": "finished", "global_steps": 1}
            for s, r in enumerate(self.policy(uid)):
                self.items[f"{uid}_{s}_0"] = {}
                self.rewards[f"{uid}_{s}_0"] = r

    def kv_list(self):
        return {"train": dict(self.items)}

    def kv_batch_get(self, keys, partition_id, select_fields):
        return {"rm_scores": [torch.tensor([0.0, self.rewards[k]]) for k in keys]}

    def kv_clear(self, partition_id, keys):
        for k in keys:
            self.items.pop(k, None)


def _budgeted_step(monkeypatch, policy, batch_size=4, max_generation_batches=3):
    pytest.importorskip("transfer_queue")
    from verl.trainer.ppo.v1 import replay_buffer as RB

    from fgx.engines.verl.replay_buffer import BudgetedReplayBuffer

    store = _FakeTransferQueue(policy)
    for name in ("kv_list", "kv_batch_get", "kv_clear"):
        monkeypatch.setattr(RB.tq, name, getattr(store, name))
    buffer = BudgetedReplayBuffer(
        trainer_mode="sync", trainer_config=OmegaConf.create({}), max_off_policy_threshold=None,
        max_off_policy_strategy="drop", refill_fn=store.submit,
        sampler_kwargs=OmegaConf.create({"metric": "reward", "batch_size": batch_size,
                                         "max_generation_batches": max_generation_batches}))
    buffer.poll_interval = 0.0
    store.submit(batch_size)  # the trainer's own first batch of the step
    batch, metrics = buffer.sample(global_steps=1, partition_id="train", batch_size=batch_size)
    return store, batch, metrics


def test_verl_dynamic_sampling_stops_after_the_generation_budget_as_the_torch_engine_does(monkeypatch):
    """A policy that solves no prompt (RL on Level 2 from a base at 0 %): verl's own V1 buffer would
    sample forever; fgx's stops after rl.max_generation_batches batches of rl.batch_size prompts and
    hands the trainer one group of equal rewards (zero advantages), as verl cannot step on none."""
    store, batch, metrics = _budgeted_step(monkeypatch, lambda uid: [0.0] * 4)
    assert store.submitted == 3 * 4
    assert metrics["training/filter_groups/num_gen_batches"] == 3
    assert metrics["training/filter_groups/num_groups_trained"] == 0
    assert len({k.split("_")[0] for k in batch.keys}) == 1 and len(batch.keys) == 4
    assert set(store.items) == set(batch.keys)  # the trainer reads the chosen group; every other one is gone


EVERY_THIRD = lambda uid: [0.0, 1.0, 0.0, 0.0] if int(uid[1:]) % 3 == 0 else [1.0] * 4  # noqa: E731


def assert_keeps_p0_p3_p6_p9(store, batch, metrics):
    """Prompts p0, p1, ... in batches of 4, every third informative: batch 1 (p0-p3) keeps p0 and p3,
    batch 2 (p4-p7) p6, batch 3 (p8-p11) p9, the fourth group: 3 batches, 12 prompts, those 4 groups."""
    assert metrics["training/filter_groups/num_gen_batches"] == 3 and store.submitted == 12, metrics
    assert sorted({k.split("_")[0] for k in batch.keys}) == ["p0", "p3", "p6", "p9"]
    assert metrics["training/filter_groups/num_groups_trained"] == 4 and len(batch.keys) == 16
    assert set(store.items) == set(batch.keys)  # nothing else of the step stays in the store


def test_verl_dynamic_sampling_keeps_informative_groups_batch_by_batch(monkeypatch):
    """Every third prompt informative, a budget of 10 batches: the step samples batch after batch until
    it holds 4 informative groups (the torch engine's rule), and trains on exactly those."""
    assert_keeps_p0_p3_p6_p9(*_budgeted_step(monkeypatch, EVERY_THIRD, max_generation_batches=10))


@pytest.mark.parametrize("rule", ["to_the_budget", "one_batch"])
def test_a_sampler_with_another_stopping_rule_fails_that_oracle(monkeypatch, rule):
    """Control: the rule both engines call replaced by one that samples to the budget or stops after one
    batch; the literal oracle above rejects it (one computed by the same rule would agree with it)."""
    wrong = {"to_the_budget": lambda kept, batches, *, max_batches, **_: batches < max_batches,
             "one_batch": lambda kept, batches, **_: False}[rule]
    monkeypatch.setattr(objective, "another_generation_batch", wrong)
    with pytest.raises(AssertionError):
        assert_keeps_p0_p3_p6_p9(*_budgeted_step(monkeypatch, EVERY_THIRD, max_generation_batches=10))


def test_verl_dynamic_sampling_trains_on_a_short_batch_when_the_budget_runs_out(monkeypatch):
    informative = lambda uid: [0.0, 1.0, 1.0, 1.0] if uid == "p5" else [0.0] * 4  # noqa: E731
    store, batch, metrics = _budgeted_step(monkeypatch, informative, max_generation_batches=2)
    assert store.submitted == 8 and metrics["training/filter_groups/num_groups_trained"] == 1
    assert {k.split("_")[0] for k in batch.keys} == {"p5"}


def _verl_sft_loader(examples: int, batch_size: int, world_size: int, rank: int = 0):
    """The data loader verl 0.9.1's SFT trainer builds (verl/trainer/sft_trainer.py)."""
    from torch.utils.data import DistributedSampler
    from torchdata.stateful_dataloader import StatefulDataLoader

    data = list(range(examples))
    sampler = DistributedSampler(data, shuffle=True, num_replicas=world_size, rank=rank, drop_last=True)
    return sampler, StatefulDataLoader(data, batch_size=batch_size // world_size, sampler=sampler, drop_last=True,
                                       num_workers=0)


def test_sft_steps_per_epoch_is_the_length_of_verls_sft_loader():
    from fgx.engines.verl.checkpoints import sft_steps_per_epoch

    cases = [(n, b, w) for n in (1, 7, 16, 63, 64, 65, 130, 1001) for b in (1, 4, 16, 64) for w in (1, 2, 8) if b >= w]
    for n, b, w in cases:
        assert sft_steps_per_epoch(n, b, w) == len(_verl_sft_loader(n, b, w)[1]), (n, b, w)
    assert len(cases) == 72


def test_an_sft_resume_at_an_epoch_boundary_trains_the_next_epoch(tmp_path):
    """verl issue #7401 with verl's own data loader: the state saved at the end of epoch 0 makes the
    resumed epoch 1 yield no batch; with fgx setting that state aside, epoch 1 yields the batches an
    uninterrupted run's epoch 1 yields, in the same order. A mid-epoch state is left for verl."""
    from fgx.engines.verl.checkpoints import set_aside_epoch_end_loader_state

    def epoch(sampler, loader, e):
        sampler.set_epoch(e)
        return [b.tolist() for b in loader]

    sampler, loader = _verl_sft_loader(10, 3, 1)
    clean = [epoch(sampler, loader, 0), epoch(sampler, loader, 1)]
    assert len(clean[1]) == 3 and clean[0] != clean[1]
    ckpt = tmp_path / "checkpoints"
    step_dir = ckpt / "global_step_3"
    step_dir.mkdir(parents=True)
    sampler, loader = _verl_sft_loader(10, 3, 1)
    sampler.set_epoch(0)
    for step, _ in enumerate(loader, start=1):
        if step == 3:  # verl's checkpoint at step 3, the end of epoch 0, saved inside its loop
            torch.save(loader.state_dict(), step_dir / "data_0.pt")
    (ckpt / "latest_checkpointed_iteration.txt").write_text("3")

    def resumed_epoch():
        sampler, loader = _verl_sft_loader(10, 3, 1)
        state = step_dir / "data_0.pt"
        if state.exists():  # as verl's CheckpointHandler._load_dataloader_state
            loader.load_state_dict(torch.load(state, weights_only=False))
        return epoch(sampler, loader, 1)

    assert resumed_epoch() == []  # the bug: epoch 1 silently skipped
    assert set_aside_epoch_end_loader_state(ckpt, 4) == []  # step 3 is not an epoch end at 4 steps per epoch
    assert set_aside_epoch_end_loader_state(ckpt, 3) == [step_dir / "data_0.pt.epoch-end"]
    assert resumed_epoch() == clean[1]
    assert (step_dir / "data_0.pt.epoch-end").exists()  # renamed, not deleted
