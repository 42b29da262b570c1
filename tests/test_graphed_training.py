"""The GPU's fixed-shape training steps, run eagerly on the CPU: the same arithmetic as the eager loops
(pretraining / SFT, RL's micro-batched update) up to float rounding, and the snapshot that undoes the
warm-up steps of a CUDA graph capture. (tests/test_gpu.py captures them on a GPU.)"""

import pytest
import torch

from fgx.engines.torch import rl as torch_rl
from fgx.engines.torch.batches import forward_logprobs
from fgx.engines.torch.cuda_graphs import TrainingSnapshot
from fgx.engines.torch.graphed_training import PolicyUpdateStep, SupervisedStep
from fgx.engines.torch.model import build_model
from fgx.engines.torch.optim import adamw
from fgx.engines.torch.supervised import eager_step
from fgx.settings import RL
from toy import SMALLEST, rl_settings


def _pair(tok, lr=1e-2, wd=0.1):
    models = [build_model(SMALLEST, tok, seed=3).train() for _ in range(2)]
    return models, [adamw(m, lr, wd, (0.9, 0.95)) for m in models]


def _close_weights(a, b, atol):
    return all(torch.allclose(p, q, rtol=0, atol=atol) for p, q in zip(a.parameters(), b.parameters()))


def test_fixed_shape_supervised_step_equals_the_eager_step(tok):
    """Rows padded to the run's longest example and batches padded with rows that count nowhere give
    the eager loop's loss, gradient norm and weights."""
    examples = [(tok(f"q{i}" * (1 + i % 4))["input_ids"] + [tok.eos_token_id] * (i % 3), 1 + i % 2) for i in range(11)]
    (eager, fixed), (opt_e, opt_f) = _pair(tok)
    step = SupervisedStep(fixed, opt_f, examples, batch_size=4, pad=tok.pad_token_id, device="cpu", graph=False)
    for batch in ([0, 5, 9, 2], [3, 1], [10, 4, 7, 8], [6]):
        loss, gn = eager_step(eager, opt_e, examples, batch, tok.pad_token_id, "cpu")
        out = step(batch, [g["lr"] for g in opt_f.param_groups])
        assert float(out["loss"]) == pytest.approx(float(loss.detach()), rel=1e-5)
        assert float(out["grad_norm"]) == pytest.approx(float(gn), rel=1e-5)
    assert _close_weights(eager, fixed, atol=1e-5)
    assert not step.graphed
    with pytest.raises(ValueError, match="a batch of 5 examples"):
        step(list(range(5)), [1e-2, 1e-2])


@pytest.mark.parametrize("extra", [{}, {"kl_coef": 0.1, "entropy_coef": 0.01, "loss_agg_mode": "seq-mean-token-mean"}])
def test_fixed_shape_policy_update_equals_the_micro_batched_one(tok, monkeypatch, extra):
    """One pass over the whole batch padded to fixed rows and length gives the statistics and weights of
    the eager update's micro-batches (4 of 3 sequences here), zero-advantage rows counted as it counts them."""
    from fgx.engines.torch.sampler import Completion

    monkeypatch.setattr(torch_rl, "MICRO_BATCH", 3)
    s = RL.from_settings(rl_settings(**extra))
    prompts = [tok(f"p{i}\n")["input_ids"] for i in range(3)]
    groups = [(g, rewards, [Completion(tok("ab" * (k + g) + "c")["input_ids"] + [tok.eos_token_id], "stop")
                            for k in range(4)])
              for g, rewards in enumerate(([1.0, 0.0, 0.0, 1.0], [0.0] * 4, [1.0, 1.0, 0.0, 1.0]))]
    batch = torch_rl.build_batch(groups, prompts, s.algorithm, "cpu")
    (eager, fixed), (opt_e, opt_f) = _pair(tok, lr=1e-2, wd=0.01)
    ref = build_model(SMALLEST, tok, seed=4).eval() if s.kl_coef > 0 else None
    graphed = PolicyUpdateStep(fixed, ref, opt_f, lambda *a: torch_rl.micro_batch_loss(s, *a), rows=16,
                               length=max(map(len, batch.seqs)) + 5, pad=tok.pad_token_id, device="cpu", graph=False)
    for _ in range(2):
        want = torch_rl.update(eager, ref, opt_e, batch, s, tok.pad_token_id, "cpu")
        got = torch_rl.update(fixed, ref, opt_f, batch, s, tok.pad_token_id, "cpu", graphed)
        assert got.keys() == want.keys() and {"loss", "pg_loss", "entropy", "clipfrac", "grad_norm"} <= want.keys()
        for k in want:
            assert got[k] == pytest.approx(want[k], rel=1e-4, abs=1e-7), k
    assert _close_weights(eager, fixed, atol=1e-5)


def test_snapshot_undoes_the_warm_up_steps_of_capture(tok):
    """Capture runs the training step for real before recording it: the snapshot puts the weights and the
    optimizer state back, and a fresh optimizer's missing state comes back as AdamW creates it."""
    (a, b), (opt_a, opt_b) = _pair(tok)
    ids = torch.tensor([tok("q1 abc")["input_ids"], tok("q2 xyz")["input_ids"]])

    def train_step(model, opt):
        opt.zero_grad(set_to_none=True)
        forward_logprobs(model, ids)[0].mean().neg().backward()
        opt.step()

    for resumed in (False, True):
        snap = TrainingSnapshot(b, opt_b)
        for _ in range(3):
            train_step(b, opt_b)
        assert not _close_weights(a, b, atol=1e-6)
        snap.restore()
        assert _close_weights(a, b, atol=0)
        train_step(a, opt_a)
        train_step(b, opt_b)  # the next step from the restored state is the one the run would have taken
        assert _close_weights(a, b, atol=0), resumed
        for pa, pb in zip(a.parameters(), b.parameters()):
            for k, v in opt_a.state[pa].items():
                assert torch.equal(torch.as_tensor(v), torch.as_tensor(opt_b.state[pb][k])), k


def test_the_training_forward_never_waits_for_the_host(tok):
    """The model's part of a captured training step: dynamo traces the forward pass, log-probs and
    entropies into one graph (a host sync would break it, and a CUDA graph could not capture it)."""
    model = build_model(SMALLEST, tok, seed=0).train()

    def forward(ids):
        lp, ent = forward_logprobs(model, ids, with_entropy=True)
        return lp.sum() + ent.sum()

    explained = torch._dynamo.explain(forward)(torch.randint(1, 30, (4, 20)))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons
