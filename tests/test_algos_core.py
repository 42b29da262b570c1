"""Pure tensor functions of fgx.algos.core against hand-computed values."""

import math

import pytest
import torch

from fgx.algos import core


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
