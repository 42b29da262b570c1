"""The context penalty: a first step's accuracy in a composition against the same step alone."""

import numpy as np
import pandas as pd
import pytest

from fgx.analysis.context_penalty import (alone_accuracy, every_step_rows, every_step_table, first_step_rows,
                                          in_context_counts, main, measure, penalty_table)
from fgx.tasks.strings import Call, X, evaluate
from fgx.tasks.strings.generate import Problem, make_row

# remove_vowels("ufkvgj") = "fkvgj"; in chain render the Level-2 prompt is "ufkvgj".f2().f10()
NESTED = Call(10, (Call(2, (X,)),))
DEEPER = Call(16, (Call(10, (Call(2, (X,)),)),))


def _eval_rows(render="chain"):
    problems = [(NESTED, "ufkvgj", 2), (NESTED, "abe", 2), (DEEPER, "ufkvgj", 3), (Call(2, (X,)), "ab", 1)]
    rows = [make_row(Problem(e, x, evaluate(e, x), lvl), stage=2, split="test", style="compact", index=i,
                     render=render) for i, (e, x, lvl) in enumerate(problems)]
    df = pd.DataFrame(rows)
    df["level"] = [2, 2, 3, 1]
    df["responses"] = [
        # located twice: one right value, one wrong; one answer starts elsewhere
        ['"ufkvgj".f2()="fkvgj"\n', '"ufkvgj".f2()="ufkvgj"\n', '"ufkvgj".f10()="UfKvGj"\n'],
        # never located: no in-context accuracy, not paired
        ['"abe".f10()="AbE"\n', '{"output": "x"}'],
        ['"ufkvgj".f2()="fkvgj"\n"fkvgj".f10()="FkVgJ"\n', '"ufkvgj".f2()="fkvgj"\n'],
        ['"ab".f2()="b"\n'],
    ]
    return df


def test_first_step_rows_are_level1_prompts_of_the_innermost_call():
    problems, steps = first_step_rows(_eval_rows())
    assert list(problems["level"]) == [2, 2, 3]  # Level 1 has no context
    assert [p[0]["content"] for p in steps["prompt"]] == ['"ufkvgj".f2()\n', '"abe".f2()\n', '"ufkvgj".f2()\n']
    assert list(problems["step_line"]) == ['f2("ufkvgj")="fkvgj"', 'f2("abe")="b"', 'f2("ufkvgj")="fkvgj"']
    only3, steps3 = first_step_rows(_eval_rows(), levels=[3])
    assert list(only3["level"]) == [3] and len(steps3) == 1
    with pytest.raises(ValueError, match="no problem of Level >= 2 in levels \\[5\\].*holds levels \\[1, 2, 3\\]"):
        first_step_rows(_eval_rows(), levels=[5])
    with pytest.raises(ValueError, match="no column.*responses"):
        first_step_rows(_eval_rows().drop(columns="responses"))


def test_in_context_counts_only_responses_that_locate_the_step():
    problems, _ = first_step_rows(_eval_rows())
    located, right = in_context_counts(problems)
    assert located.tolist() == [2, 0, 2] and right.tolist() == [1, 0, 2]


def test_alone_accuracy_reads_the_first_line_of_each_sample():
    _, steps = first_step_rows(_eval_rows())
    steps["responses"] = [['"ufkvgj".f2()="fkvgj"\n{"output": "fkvgj"}', '"ufkvgj".f2()="fkj"\n'],
                          ['"abe".f2()="b"\n'], ['"ufkvgj".f2()="fkvgj"\n']]
    assert alone_accuracy(steps).tolist() == [0.5, 1.0, 1.0]


def test_penalty_is_paired_on_problems_with_a_located_response():
    problems, _ = first_step_rows(_eval_rows())
    located, right = np.array([2, 0, 2]), np.array([1, 0, 2])
    t = penalty_table(problems, np.array([0.9, 0.1, 0.5]), located, right, resamples=200).set_index("level")
    assert t.loc[2, "problems"] == 2 and t.loc[2, "paired"] == 1  # the unlocated problem is left out
    assert t.loc[2, "alone"] == pytest.approx(0.9) and t.loc[2, "in_context"] == pytest.approx(0.5)
    assert t.loc[2, "penalty"] == pytest.approx(-0.4) and t.loc[2, "ci_low"] == pytest.approx(-0.4)
    assert t.loc[2, "located"] == pytest.approx(2 / 5)  # 2 of the level's 5 responses
    assert t.loc[3, "penalty"] == pytest.approx(0.5) and t.loc[3, "located"] == 1.0


def test_measure_and_cli_sample_a_model_directory(tmp_path):
    from fgx.engines.torch.model import build_model, save_checkpoint
    from fgx.engines.torch.tokenizer import build_char_tokenizer

    tok = build_char_tokenizer()
    save_checkpoint(build_model(dict(hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2,
                                     intermediate_size=64, max_positions=128), tok, seed=0), tok, tmp_path / "m")
    table = measure(tmp_path / "m", _eval_rows(), n=2, max_new_tokens=8, resamples=50)
    assert list(table["level"]) == [2, 3] and table["alone"].between(0, 1).all()
    # an untrained model never writes a step right alone: the penalty is the in-context accuracy
    assert table.set_index("level").loc[3, "penalty"] == pytest.approx(1.0)
    _eval_rows().to_parquet(tmp_path / "eval.parquet")
    assert main(["--model", str(tmp_path / "m"), "--eval", str(tmp_path / "eval.parquet"), "--n", "1",
                 "--max-new-tokens", "4", "--out", str(tmp_path / "t.csv")]) == 0
    assert list(pd.read_csv(tmp_path / "t.csv")["level"]) == [2, 3]
    _eval_rows().assign(extra_info=lambda d: d["extra_info"].apply(lambda e: {**e, "style": "paper"})) \
        .to_parquet(tmp_path / "paper.parquet")
    with pytest.raises(SystemExit, match="paper.parquet: row 0: style 'paper'"):
        main(["--model", str(tmp_path / "m"), "--eval", str(tmp_path / "paper.parquet")])


def test_every_step_rows_mark_the_steps_that_read_a_carried_value():
    meta, steps = every_step_rows(_eval_rows())
    # Level 2: f2 on the literal, then f10 on f2's value; Level 3 one step more
    assert meta[["level", "step", "carried"]].values.tolist() == [
        [2, 1, False], [2, 2, True], [2, 1, False], [2, 2, True], [3, 1, False], [3, 2, True], [3, 3, True]]
    assert [p[0]["content"] for p in steps["prompt"]][:2] == ['"ufkvgj".f2()\n', '"fkvgj".f10()\n']
    t = every_step_table(meta, np.array([1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 0.0]))
    rows = {(lvl, step): (n, acc) for lvl, step, n, acc in t.values.tolist()}
    assert rows[(2, "1")] == (2, 1.0) and rows[(2, "2")] == (2, 0.25) and rows[(3, "3")] == (1, 0.0)
    assert rows[(2, "literal")] == (2, 1.0) and rows[(2, "carried")] == (2, 0.25)
    assert rows[(3, "carried")] == (2, 0.25)


def test_every_step_table_by_function_and_by_input():
    meta, _ = every_step_rows(_eval_rows())
    assert list(meta["function"]) == ["f2", "f10"] * 2 + ["f2", "f10", "f16"]
    assert list(meta["reads"][:4]) == ["ufkvgj", "fkvgj", "abe", "b"]
    assert meta["reads"].iloc[6] == "fKvGj"  # f16 reads f10's mixed-case value
    alone = np.array([1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 0.0])
    by_fn = {(lvl, fn, inp): (n, acc) for lvl, fn, inp, n, acc in every_step_table(meta, alone, "function").values.tolist()}
    assert by_fn[(2, "f2", "literal")] == (2, 1.0) and by_fn[(2, "f10", "carried")] == (2, 0.25)
    assert by_fn[(3, "f16", "carried")] == (1, 0.0)
    by_in = {tuple(r[:4]): (r[4], r[5]) for r in every_step_table(meta, alone, "input").values.tolist()}
    assert by_in[(2, "carried", "lowercase", "1-2")] == (1, 0.0)  # "b"
    assert by_in[(2, "carried", "lowercase", "3-6")] == (1, 0.5)  # "fkvgj"
    assert by_in[(3, "carried", "other", "3-6")] == (1, 0.0)  # "fKvGj"
    assert by_in[(2, "literal", "lowercase", "3-6")] == (2, 1.0)
    with pytest.raises(ValueError, match="unknown grouping 'fn'.*place, function, input"):
        every_step_table(meta, alone, "fn")


def test_every_step_cli(tmp_path):
    from fgx.engines.torch.model import build_model, save_checkpoint
    from fgx.engines.torch.tokenizer import build_char_tokenizer

    tok = build_char_tokenizer()
    save_checkpoint(build_model(dict(hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2,
                                     intermediate_size=64, max_positions=128), tok, seed=0), tok, tmp_path / "m")
    _eval_rows().to_parquet(tmp_path / "eval.parquet")
    assert main(["--model", str(tmp_path / "m"), "--eval", str(tmp_path / "eval.parquet"), "--every-step",
                 "--n", "1", "--max-new-tokens", "4", "--out", str(tmp_path / "t.csv")]) == 0
    t = pd.read_csv(tmp_path / "t.csv")
    assert t["steps"].sum() == 2 * 7 and t["alone"].between(0, 1).all()
    assert main(["--model", str(tmp_path / "m"), "--eval", str(tmp_path / "eval.parquet"), "--every-step",
                 "--by", "input", "--n", "1", "--max-new-tokens", "4", "--out", str(tmp_path / "i.csv")]) == 0
    t = pd.read_csv(tmp_path / "i.csv")
    assert list(t.columns) == ["level", "input", "letters", "length", "steps", "alone"] and t["steps"].sum() == 7
    with pytest.raises(SystemExit):  # --by without --every-step
        main(["--model", str(tmp_path / "m"), "--eval", str(tmp_path / "eval.parquet"), "--by", "input"])
