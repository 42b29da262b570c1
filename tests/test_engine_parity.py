"""The two engines optimise the same objective, in numbers (tier "verl", about 20 s on 2 cores):
``benchmarks/engine_parity.py`` runs one RL update and four SFT steps through verl 0.9.1's own actor and
SFT code (its FSDP2 engine in one CPU process, fp32) and through the torch engine, on the same tiny random
Llama and data; here its numbers, over every parameter of the model on both sides, are held to tolerances,
and two deliberately different objectives are held to fail them.

One RL update per RL algorithm (fgx.algos.rl: GRPO, REINFORCE, RLOO). Tolerances (fp32; measured on an AMD
EPYC, 2 cores, GRPO: loss 7e-9, gradients 1.5e-8 of max 0.075, matrices 1.0e-6 at lr 1e-3; REINFORCE: 0, 1.0e-8
of max 0.043, 4.2e-6; RLOO: 3.7e-9, 1.1e-8 of max 0.058, 3.4e-6; advantages equal; SFT losses 4.8e-7, one
float32 ulp at 4.6):

* RL loss: 1e-6. Gradients: 1e-6 absolute, far below the flipped control's 0.15.
* Weights after one AdamW step: Adam's first step moves a weight by lr * g / (|g| + eps), which turns
  float32 noise on a gradient element near eps into up to ~1e-3 * lr; matrices are held to 1e-2 * lr.
  Vectors (norm weights) differ by lr * weight_decay * w by design: verl's AdamW decays every parameter,
  fgx's only matrices; with that decay applied to fgx's weights they agree to two float32 ulps at 1.0 (GRPO 0,
  RLOO 1.2e-7).
* Adam's first step is scale-invariant, so an objective that differs by a constant factor (another
  loss_agg_mode; REINFORCE's advantages where RLOO's are n / (n - 1) times them) leaves the weights close:
  the loss, the advantages and the gradients are what catch it.
* SFT: 1e-5 per step for the first four steps under fgx's overrides (verl's SFT optimizer set to the torch
  engine's: betas 0.9/0.95, no weight decay, cosine to 0.1 of lr); with verl's own defaults (0.9/0.999, decay
  0.01, constant lr) step 1 still agrees and later steps must not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fgx.algos.rl import ALGORITHMS

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.verl

LR_SHARE = 1e-2   # matrices' weight tolerance, as a share of the learning rate


@pytest.fixture(scope="module")
def parity(tmp_path_factory):
    """The benchmark's numbers, from a process of its own (verl picks its platform once per process)."""
    pytest.importorskip("verl", reason="needs verl (FGX_EXTRAS=verl bash envs/install.sh)")
    out = tmp_path_factory.mktemp("parity") / "parity.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "engine_parity.py"), "--precision", "fp32",
                           "--controls", "--json", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run,) = json.loads(out.read_text())["runs"]
    return run


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_one_rl_update_matches(parity, name):
    rl = parity["rl_algorithms"][name]
    assert rl["algorithm"] == name
    # every parameter of the model, matrices and vectors, compared on both sides
    assert rl["compared"] == {"gradients": rl["model_parameters"], "weights": rl["model_parameters"]}
    assert min(rl["model_parameters"]) > 0, rl["model_parameters"]
    assert rl["loss_abs_diff"] < 1e-6
    assert rl["advantage_max_abs_diff"] < 1e-6
    assert rl["old_logprob_max_abs_diff"] < 1e-5
    assert abs(rl["verl_grad_norm"] - rl["torch_grad_norm"]) < 1e-6
    assert rl["grad_max_abs_diff"] < 1e-6
    assert rl["weight_max_abs_diff_matrices"] < LR_SHARE * rl["lr"]
    # verl decays the norm weights too: exactly what separates the vectors (to two float32 ulps at the norm
    # weights' 1.0: verl's AdamW decays in place, the check subtracts lr * wd * w)
    assert rl["weight_max_abs_diff_vectors_decayed_as_verl"] < 2.4e-7


def test_a_different_objective_fails_the_tolerances(parity):
    rl = parity["rl"]
    flipped = rl["control_flipped_advantage"]
    assert flipped["loss_abs_diff"] > 1e-3
    assert flipped["grad_max_abs_diff"] > 1e-2
    assert flipped["weight_max_abs_diff_matrices"] > rl["lr"]  # every weight moved the other way: ~2 lr
    other = rl["control_torch_seq_mean_token_sum"]
    assert other["loss_abs_diff"] > 1e-3
    assert other["grad_max_abs_diff"] > 1e-4


def test_rloo_is_told_from_reinforce(parity):
    """RLOO's advantages are REINFORCE's scaled by n / (n - 1) (4/3 here): the torch engine with REINFORCE's
    advantages against verl's RLOO fails on the advantages and the gradients (Adam's first step, scale-invariant,
    leaves the weights close, as for another loss_agg_mode)."""
    control = parity["rl_algorithms"]["rloo"]["control_torch_reinforce_advantages"]
    assert control["advantage_max_abs_diff"] > 0.05
    assert control["grad_max_abs_diff"] > 1e-4


def test_sft_losses_match_and_both_normalise_per_token(parity):
    sft = parity["sft"]
    assert len(sft["abs_diff"]) == 4 and all(d < 1e-5 for d in sft["abs_diff"])
    default = sft["control_verl_default_optimizer"]["abs_diff"]
    assert default[0] < 1e-5  # same start, same batch: the loss path alone
    assert max(default[2:]) > 1e-4  # verl's default SFT optimizer is not the torch engine's
    n = sft["step1_normalisations"]
    assert abs(sft["torch"][0] - n["per_token_over_batch"]) < 1e-5
    assert abs(n["per_token_over_batch"] - n["per_sequence_mean"]) > 1e-3  # the check could tell them apart


def test_the_comparison_refuses_a_parameter_one_side_lacks_and_an_empty_group(monkeypatch):
    """Control for the counts above: the benchmark's comparison of two parameter maps raises where a
    name is on one side only or a group (matrices, vectors) is empty, instead of comparing what is left."""
    import torch

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from engine_parity import compare

    a = {"w": torch.ones(2, 2), "norm": torch.ones(2)}
    assert compare(a, {k: v + 0.5 for k, v in a.items()}) == {"max_abs": 0.5, "max_abs_matrices": 0.5,
                                                             "max_abs_vectors": 0.5, "max_abs_ref": 1.0,
                                                             "matrices": 1, "vectors": 1}
    with pytest.raises(ValueError, match="one side only"):
        compare(a, {"w": a["w"]})
    with pytest.raises(ValueError, match="one side only"):
        compare(a, {**a, "lm_head": a["w"]})
    with pytest.raises(ValueError, match="an empty group"):
        compare({"w": a["w"]}, {"w": a["w"]})
