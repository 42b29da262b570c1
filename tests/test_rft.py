"""RFT: the filter that keeps correct rollouts as SFT data."""

import pandas as pd
import pytest

from fgx.algos.rft import filter_rollouts


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
