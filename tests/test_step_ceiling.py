"""The step ceiling: every reduction step as a Level-1 row, and the product of step accuracies."""

import json

import numpy as np
import pandas as pd
import pytest

from fgx.analysis.step_ceiling import ceiling_table, measure, step_rows
from fgx.tasks.strings import Call, X, compute_score, evaluate
from fgx.tasks.strings.expr import parse_compact, reductions, render_compact
from fgx.tasks.strings.generate import Problem, make_row


def test_reductions_follow_the_trace_order():
    e = parse_compact('f9((upper("ab")+f2("xy")))')
    steps = [(render_compact(r, "q"), v) for r, v in reductions(e, "q")]
    assert steps == [('upper("ab")', "AB"), ('f2("xy")', "xy"), ('("AB"+"xy")', "ABxy"), ('f9("ABxy")', "ABxyyxBA")]
    assert reductions(parse_compact('"ab"'), "q") == []


def _eval_rows(style="compact"):
    rows = []
    nested = Call(9, (Call(2, (X,)),))  # mirror_str(remove_vowels(x)), f9(f2(x))
    for e, x, level in [(nested, "ab", 2), (nested, "cd", 2), (Call(2, (X,)), "ab", 1)]:
        rows.append(make_row(Problem(e, x, evaluate(e, x), level), stage=2, split="test", style=style,
                             index=len(rows)))
    df = pd.DataFrame(rows)
    df["level"] = [2, 2, 1]
    df["correct"] = [[True, False], [False, False], [True, True]]
    return df


@pytest.mark.parametrize("style", ["compact", "paper"])
def test_step_rows_are_level1_problems_shared_between_problems(style):
    df = _eval_rows(style)
    steps, owners = step_rows(df)
    # f2("ab") is a step of rows 0 and 2 and appears once; the row's own style and stage are kept
    assert owners == [[0, 1], [2, 3], [0]]
    assert len(steps) == 4 and set(steps["extra_info"].apply(lambda e: e["style"])) == {style}
    if style == "compact":
        assert [p[0]["content"] for p in steps["prompt"]] == ['f2("ab")\n', 'f9("b")\n', 'f2("cd")\n', 'f9("cd")\n']
    for _, s in steps.iterrows():  # each step's reference answer is accepted by the task's reward
        gt = json.loads(s["reward_model"]["ground_truth"])
        answer = json.dumps({"output": gt["ref_output"]})
        assert compute_score(s["data_source"], answer, s["reward_model"]["ground_truth"])["acc"]


def test_ceiling_is_the_mean_product_of_step_accuracies():
    df = _eval_rows()
    steps, owners = step_rows(df)
    table = ceiling_table(df, owners, [0.5, 0.4, 1.0, 0.3]).set_index("level")
    assert table.loc[2, "ceiling"] == pytest.approx((0.5 * 0.4 + 1.0 * 0.3) / 2)
    assert table.loc[1, "ceiling"] == pytest.approx(0.5)
    assert table.loc[2, "actual"] == pytest.approx(0.25) and table.loc[1, "actual"] == 1.0
    assert table.loc[2, "steps"] == 2 and table.loc[2, "problems"] == 2


def test_measure_samples_a_model_directory(tmp_path):
    from fgx.engines.torch.model import build_model, save_checkpoint
    from fgx.engines.torch.tokenizer import build_char_tokenizer

    tok = build_char_tokenizer()
    save_checkpoint(build_model(dict(hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2,
                                     intermediate_size=64, max_positions=128), tok, seed=0), tok, tmp_path / "m")
    _eval_rows().to_parquet(tmp_path / "eval.parquet")
    table = measure(tmp_path / "m", tmp_path / "eval.parquet", n=2, max_new_tokens=8)
    assert list(table["level"]) == [1, 2] and table["ceiling"].between(0, 1).all()
    with pytest.raises(ValueError, match="no column.*correct"):
        _eval_rows().drop(columns="correct").to_parquet(tmp_path / "bad.parquet")
        measure(tmp_path / "m", tmp_path / "bad.parquet")
