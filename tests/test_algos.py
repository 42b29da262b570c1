"""Pure tensor functions of fgx.algos against hand-computed values, and RFT filtering."""

import math

import pandas as pd
import pytest
import torch

from fgx.algos import GRPO, Reinforce, core, get_algorithm
from fgx.algos.rft import filter_rollouts
from fgx.engines.torch.trainer import RLSettings


def close(a, b, tol=1e-4):
    return torch.allclose(torch.as_tensor(a, dtype=torch.float32), torch.as_tensor(b, dtype=torch.float32), atol=tol)


def test_masked_mean_and_sum():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    m = torch.tensor([[1, 1, 0], [1, 0, 0]])
    assert close(core.masked_sum(x, m), 7.0)
    assert close(core.masked_mean(x, m), 7.0 / 3)
    assert close(core.masked_mean(x, m, dim=-1), [1.5, 4.0])
    assert close(core.masked_mean(x, torch.zeros_like(m)), 0.0)


def test_agg_loss_modes():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    m = torch.tensor([[1, 1, 0], [1, 0, 0]])
    assert close(core.agg_loss(x, m, "token-mean"), 7.0 / 3)
    assert close(core.agg_loss(x, m, "token-mean", denom=7.0), 1.0)  # micro-batch of a bigger batch
    assert close(core.agg_loss(x, m, "seq-mean-token-sum"), (3.0 + 4.0) / 2)
    assert close(core.agg_loss(x, m, "seq-mean-token-mean"), (1.5 + 4.0) / 2)
    with pytest.raises(ValueError):
        core.agg_loss(x, m, "nope")


def test_token_logprobs_and_entropy():
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]]))
    lp = core.token_logprobs(logits, torch.tensor([0, 2]))
    assert close(lp, [math.log(0.5), math.log(0.5)])
    # shifting logits does not change log-probs
    assert close(core.token_logprobs(logits + 7.0, torch.tensor([1, 1])), [math.log(0.25)] * 2)
    h = core.entropy_from_logits(torch.zeros(1, 4))
    assert close(h, [math.log(4)])
    h2 = core.entropy_from_logits(logits[:1])
    assert close(h2, [-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))])


def test_group_advantages_hand_values():
    r = torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    g = torch.tensor([0, 0, 1, 1, 1, 2, 2])
    a = core.group_advantages(r, g, eps=0.0)
    # group 0: mean .5, unbiased std sqrt(.5) -> +-.7071; group 1 all equal -> 0 (0/eps guarded below)
    assert close(a[:2], [0.7071068, -0.7071068])
    a_eps = core.group_advantages(r, g, eps=1e-6)
    assert close(a_eps[2:5], [0.0, 0.0, 0.0]) and close(a_eps[5:], [0.0, 0.0])
    r3 = torch.tensor([1.0, 0.0, 0.0])
    a3 = core.group_advantages(r3, group_size=3, eps=0.0)
    # mean 1/3, std sqrt(((2/3)^2 + 2 (1/3)^2) / 2) = sqrt(1/3)
    assert close(a3, [1.1547005, -0.5773503, -0.5773503])
    # Dr.GRPO: no std normalisation
    assert close(core.group_advantages(r3, group_size=3, norm_by_std=False), [2 / 3, -1 / 3, -1 / 3])
    # a group of one sample: mean 0, std 1
    assert close(core.group_advantages(torch.tensor([0.5]), torch.tensor([0]), eps=0.0), [0.5])
    with pytest.raises(ValueError):
        core.group_advantages(r3, group_size=2)


def test_ppo_clip_loss_hand_values():
    ratios = torch.tensor([[1.5, 0.5, 0.5, 5.0]])
    adv = torch.tensor([[1.0, 1.0, -1.0, -1.0]])
    lp = torch.log(ratios)
    old = torch.zeros_like(lp)
    mask = torch.ones_like(lp)
    # per token: A=+1 r=1.5 -> max(-1.5, -1.28) = -1.28 (clip high .28)
    #            A=+1 r=.5  -> max(-.5, -.8) = -.5
    #            A=-1 r=.5  -> max(.5, .8) = .8 (clip low .2), dual clip min(3, .8) = .8
    #            A=-1 r=5   -> max(5, 1.28) = 5, dual clip min(3, 5) = 3
    loss, st = core.ppo_clip_loss(lp, old, adv, mask, clip_low=0.2, clip_high=0.28, clip_ratio_c=3.0)
    assert close(loss, (-1.28 - 0.5 + 0.8 + 3.0) / 4)
    assert close(st["clipfrac"], 2 / 4)  # tokens 1 and 3 (l2 > l1)
    loss_nodual, _ = core.ppo_clip_loss(lp, old, adv, mask, clip_low=0.2, clip_high=0.28, clip_ratio_c=None)
    assert close(loss_nodual, (-1.28 - 0.5 + 0.8 + 5.0) / 4)
    # masked token does not count; per-sequence advantages broadcast
    loss2, _ = core.ppo_clip_loss(lp, old, torch.tensor([1.0]), torch.tensor([[1.0, 1.0, 0.0, 0.0]]),
                                  clip_low=0.2, clip_high=0.28)
    assert close(loss2, (-1.28 - 0.5) / 2)
    # on-policy: ratio 1 -> loss = -mean(A) and gradient = -A * grad logp / n
    lp1 = torch.zeros(1, 2, requires_grad=True)
    l1, _ = core.ppo_clip_loss(lp1, lp1.detach(), torch.tensor([[2.0, -1.0]]), torch.ones(1, 2))
    l1.backward()
    assert close(l1, -0.5) and close(lp1.grad, [[-1.0, 0.5]])


def test_kl_estimators_hand_values():
    lp = torch.tensor([math.log(0.5)])
    ref = torch.tensor([math.log(0.25)])
    assert close(core.kl_penalty(lp, ref, "k1"), [math.log(2)])
    assert close(core.kl_penalty(lp, ref, "abs"), [math.log(2)])
    assert close(core.kl_penalty(lp, ref, "k2"), [0.5 * math.log(2) ** 2])
    # k3: exp(ref - lp) - (ref - lp) - 1 = .5 + ln2 - 1
    assert close(core.kl_penalty(lp, ref, "k3"), [0.5 + math.log(2) - 1])
    assert close(core.kl_penalty(lp, ref, "low_var_kl"), [0.5 + math.log(2) - 1])
    assert close(core.kl_penalty(lp, lp, "k3"), [0.0])
    with pytest.raises(ValueError):
        core.kl_penalty(lp, ref, "k9")


def test_response_mask():
    assert close(core.response_mask(torch.tensor([2, 0, 3]), 3), [[1, 1, 0], [0, 0, 0], [1, 1, 1]])


def _batch():
    lp = torch.log(torch.tensor([[0.5, 0.5], [0.25, 0.5]]))
    return {"logprobs": lp, "old_logprobs": lp.clone(), "ref_logprobs": lp.clone(),
            "mask": torch.tensor([[1.0, 1.0], [1.0, 0.0]]), "advantages": torch.tensor([1.0, -2.0]),
            "entropy": torch.ones(2, 2)}


def test_grpo_and_reinforce_losses():
    s = RLSettings()
    grpo = get_algorithm("grpo", s)
    assert isinstance(grpo, GRPO) and not grpo.needs_ref
    loss, st = grpo.loss(_batch())
    # ratio 1: token-mean of -A over 3 tokens = -(1 + 1 - 2) / 3 = 0
    assert close(loss, 0.0) and close(st["entropy"], 1.0)
    rf = get_algorithm("reinforce", RLSettings(algorithm="reinforce", kl_coef=0.1, ref_update_every=3))
    assert isinstance(rf, Reinforce) and rf.needs_ref and rf.refresh_ref(3) and not rf.refresh_ref(4)
    loss, st = rf.loss(_batch())
    # -A * logp token-mean: -(1*ln.5 + 1*ln.5 + (-2)*ln.25) / 3 ; kl 0 (ref == policy)
    expect = -(2 * math.log(0.5) - 2 * math.log(0.25)) / 3
    assert close(loss, expect) and close(st["kl"], 0.0)
    adv = rf.advantages(torch.tensor([1.0, 0.0, 1.0, 1.0]), torch.tensor([0, 0, 1, 1]))
    assert close(adv, [0.5, -0.5, 0.0, 0.0])
    with pytest.raises(ValueError, match="unknown"):
        get_algorithm("ppo2", s)


def _rollouts():
    return pd.DataFrame({
        "data_source": ["t", "t", "t"],
        "prompt": [[{"role": "user", "content": c}] for c in "abc"],
        "extra_info": [{"depth": 1}, {"depth": 2}, {"depth": 1}],
        "responses": [["x", "x", "y", "z"], ["p", "q"], ["m", "n"]],
        "scores": [[1.0, 1.0, 1.0, 0.0], [1.0, 1.0], [0.0, 0.0]],
        "correct": [[True, True, True, False], [True, True], [False, False]],
        "response_tokens": [[1, 1, 1, 1], [1, 1], [1, 1]],
        "level": [1, 2, 1],
        "n_correct": [3, 2, 0],
    })


def test_rft_filter():
    df = _rollouts()
    out = filter_rollouts(df)
    assert out["response"].tolist() == ["x", "y", "p", "q"]  # dedup, correct only, unsolved prompt gone
    assert "responses" not in out.columns and out["prompt"][0][0]["content"] == "a"
    assert filter_rollouts(df, dedup=False)["response"].tolist() == ["x", "x", "y", "p", "q"]
    assert filter_rollouts(df, drop_all_solved=True)["response"].tolist() == ["x", "y"]
    capped = filter_rollouts(df, max_per_prompt=1, seed=0)
    assert capped.groupby(capped["prompt"].map(lambda p: p[0]["content"])).size().max() == 1
    assert filter_rollouts(df, max_per_prompt=1, seed=0).equals(capped)  # seeded
    with pytest.raises(ValueError, match="responses"):
        filter_rollouts(df.drop(columns=["responses"]))
