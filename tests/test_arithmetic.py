"""The arithmetic-chain task: its operations by hand, chains written and read, the trace format, the
generator's split and bounds, rows, ground truth, leakage keys, compute_score on hostile input, the CLI."""

import importlib
import json
import time

import pandas as pd
import pytest

from fgx.tasks import arithmetic as A
from fgx.tasks.arithmetic import chain, ground_truth as GT, keys, operations as O, trace
from fgx.tasks.family import GroundTruthError

G = importlib.import_module("fgx.tasks.arithmetic.generate")  # the package's `generate` is the function

DS = "arithmetic-chain-depth2"
TRUTH = GT.ground_truth(417, [("sub", 3), ("div", 2)], 207)


# ----------------------------------------------------------------------------- operations
@pytest.mark.parametrize("name,x,param,want", [
    ("add", 998, 1, 999), ("add", 19, 9, 28), ("sub", 10, 3, 7), ("sub", 3, 3, 0),
    ("mul", 333, 3, 999), ("mul", 0, 2, 0), ("div", 7, 2, 3), ("div", 8, 3, 2),
    ("mod", 417, 10, 7), ("mod", 417, 100, 17), ("mod", 5, 100, 5),
    ("rev", 120, None, 21), ("rev", 7, None, 7), ("rev", 123, None, 321),
    ("swap", 123, None, 321), ("swap", 120, None, 21), ("swap", 1234, None, 4231), ("swap", 5, None, 5),
    ("rot", 123, None, 231), ("rot", 102, None, 21), ("rot", 9, None, 9),
    ("sort", 312, None, 123), ("sort", 301, None, 13), ("dsum", 999, None, 27), ("dsum", 0, None, 0),
    ("drop", 417, None, 41), ("drop", 7, None, 0), ("app", 41, 7, 417), ("app", 0, 0, 0),
])
def test_each_operation_by_hand(name, x, param, want):
    assert O.apply(name, x, param) == want


def test_the_split_halves_the_operations():
    assert O.TRAIN_OPS | O.HELD_OUT_OPS == O.ALL_OPS == set(O.NAMES) and not O.TRAIN_OPS & O.HELD_OUT_OPS
    assert len(O.TRAIN_OPS) == len(O.HELD_OUT_OPS) == 6


@pytest.mark.parametrize("call,match", [
    (("add", None), "takes a parameter"), (("add", 10), "takes a parameter"), (("rev", 2), "takes no parameter"),
    (("pow", 2), "unknown operation"), (("mod", 7), "takes a parameter"),
])
def test_bad_calls_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        O.apply(call[0], 12, call[1])


@pytest.mark.parametrize("x", [-1, 1.5, True, "12", None])
def test_operations_read_non_negative_integers(x):
    with pytest.raises(ValueError, match="non-negative integer"):
        O.apply("add", x, 1)


def test_a_paper_prompt_prints_the_function_it_computes():
    for name in O.NAMES:
        source, namespace = O.definition_source(name), {}
        exec(source, namespace)  # the definition as printed computes what the generator does
        op = O.OPERATIONS[name]
        for x in (0, 7, 10, 102, 417, 999):
            for p in op.params or (None,):
                args = (x,) if p is None else (x, p)
                assert namespace[name](*args) == op(x, p), (name, x, p)


# ----------------------------------------------------------------------------- chains and traces
def test_chains_round_trip():
    steps = [("sub", 3), ("div", 2), ("rot", None), ("app", 0)]
    text = chain.render_chain(417, steps)
    assert text == "417.sub(3).div(2).rot().app(0)"
    assert chain.parse_chain(text) == (417, steps)
    assert chain.values(417, steps) == [414, 207, 72, 720]
    assert chain.evaluate(417, steps) == 720 and chain.evaluate(5, []) == 5


@pytest.mark.parametrize("text,match", [
    ("", "starts with a non-negative integer"), ("-4.add(1)", "starts with"), ("4.pow(2)", "unknown operation"),
    ("4.add(11)", "takes a parameter"), ("4.add(1", "not a call"), ("4.add(1) ", None), ("4.rev(1)", "no parameter"),
    ("4..add(1)", "not a call"), ("٣.add(1)", "starts with"), ("9" * 40 + ".add(1)", "not a call"),
])
def test_bad_chain_text_is_named(text, match):
    if match is None:
        assert chain.parse_chain(text) == (4, [("add", 1)])
        return
    with pytest.raises(ValueError, match=match):
        chain.parse_chain(text)


def test_values_leave_no_range():
    with pytest.raises(chain.ValueOutOfRange, match="outside 0..999"):
        chain.values(500, [("mul", 2)])
    with pytest.raises(chain.ValueOutOfRange, match="outside 0..99"):
        chain.values(5, [("sub", 9)], max_value=99)
    with pytest.raises(chain.ValueOutOfRange, match="start value"):
        chain.values(1000, [("add", 1)])


def test_the_trace_is_one_step_a_line_then_the_answer():
    assert trace.solution_text(417, [("sub", 3), ("div", 2)]) == '417.sub(3)=414\n414.div(2)=207\n{"output": 207}\n'
    assert trace.parse_step("414.div(2)=207") == (414, ("div", 2), 207)
    for line in ("414.div(2)", "414.div(2)=", "414.div(2).rev()=72", "x.div(2)=3", "414.div(2)=2.5",
                 '{"output": 207}', "414.div(2)=٣"):
        assert trace.parse_step(line) is None, line
    response = 'so\n417.sub(3)=414\n  414.div(2)=207\n{"output": 207}\n5.add(1)=6\n'
    assert trace.written_steps(response) == ["417.sub(3)=414", "414.div(2)=207"]


# ----------------------------------------------------------------------------- the generator
def _used(problems):
    return {name for p in problems for name, _ in p.steps}


def test_the_generator_splits_the_operations_and_bounds_every_value():
    test = G.generate_problems(stage=2, split="test", min_level=1, max_level=6, num=600, seed=3, partition="test")
    train = G.generate_problems(stage=2, split="train", min_level=1, max_level=2, num=400, seed=3)
    stage1 = G.generate_problems(stage=1, split="train", min_level=1, max_level=1, num=600, seed=3)
    assert _used(test) == O.HELD_OUT_OPS and _used(train) == O.TRAIN_OPS and _used(stage1) == O.ALL_OPS
    assert [sum(p.level == lv for p in test) for lv in range(1, 7)] == [100] * 6
    for p in test + train + stage1:
        vals = chain.values(p.start, p.steps)
        assert vals[-1] == p.output and all(0 <= v <= 999 for v in vals)
        assert len({p.start, *vals}) == p.level + 1  # every step changes the value, none returns to an earlier one
    assert len({p.key for p in test}) == len(test)


def test_the_generator_is_seeded_and_keeps_its_cap():
    a = G.generate_problems(stage=2, split="test", min_level=2, max_level=3, num=50, seed=7, max_value=99)
    b = G.generate_problems(stage=2, split="test", min_level=2, max_level=3, num=50, seed=7, max_value=99)
    c = G.generate_problems(stage=2, split="test", min_level=2, max_level=3, num=50, seed=8, max_value=99)
    assert a == b and a != c
    assert all(v <= 99 for p in a for v in (p.start, *chain.values(p.start, p.steps, 99)))


def test_test_and_validation_sets_are_disjoint_without_reading_each_other():
    kw = dict(stage=2, split="test", min_level=1, max_level=3, num=300, seed=1)
    test, val = (G.generate_problems(**kw, partition=p) for p in ("test", "val"))
    assert not {p.key for p in test} & {p.key for p in val}
    assert all(G.in_partition(p.key, "val") for p in val) and not any(G.in_partition(p.key, "val") for p in test)


def test_excluded_problems_are_not_drawn():
    first = G.generate_problems(stage=2, split="test", min_level=1, max_level=1, num=40, seed=1)
    again = G.generate_problems(stage=2, split="test", min_level=1, max_level=1, num=40, seed=1,
                                exclude={p.key for p in first})
    assert not {p.key for p in first} & {p.key for p in again}


@pytest.mark.parametrize("kw,match", [
    (dict(min_level=3, max_level=2), "min_level"), (dict(num=-1), "num"), (dict(max_value=5), "max_value"),
    (dict(partition="train"), "partition"), (dict(ops=["pow"]), "unknown operations"),
    (dict(max_value=9, num=100, min_level=1, max_level=1), "only .* unique problems"),
])
def test_bad_generator_arguments_are_named(kw, match):
    args = dict(stage=2, split="test", min_level=1, max_level=2, num=10, seed=0) | kw
    with pytest.raises(ValueError, match=match):
        G.generate_problems(**args)


# ----------------------------------------------------------------------------- rows and ground truth
def test_compact_rows_follow_the_string_tasks_schema():
    df = A.generate(stage=2, split="test", min_level=1, max_level=3, num=6, seed=0, partition="test")
    strings = __import__("fgx.tasks.strings", fromlist=["generate"]).generate(
        stage=2, split="test", min_level=1, max_level=1, num=1, seed=0, style="compact")
    assert list(df.columns) == list(strings.columns)
    row = df.iloc[5]
    assert list(row.extra_info) == list(strings.extra_info.iloc[0])  # the two tasks' SFT rows merge
    start, steps, out = GT.parse(row.reward_model["ground_truth"])
    assert row.data_source == "arithmetic-chain-depth3" and row.extra_info["depth"] == 3 == len(steps)
    assert row.prompt[0]["content"] == chain.render_chain(start, steps) + "\n"
    assert row.extra_info["solution"] == trace.solution_text(start, steps)
    assert A.compute_score(row.data_source, row.extra_info["solution"], row.reward_model["ground_truth"])["acc"]


def test_paper_rows_show_definitions_in_stage_1_only():
    one = A.generate(stage=1, split="train", min_level=1, max_level=1, num=3, seed=0, style="paper")
    two = A.generate(stage=2, split="test", min_level=2, max_level=2, num=3, seed=0, style="paper")
    for df, shown in ((one, True), (two, False)):
        for row in df.itertuples():
            text = row.prompt[0]["content"]
            _, steps, _ = GT.parse(row.reward_model["ground_truth"])
            assert text.startswith("You are given a code:") and "final integer" in text
            assert all((f"def {name}(" in text) == shown for name, _ in steps)
            assert "solution" not in row.extra_info


@pytest.mark.parametrize("truth,field", [
    ("not json", "reward_model.ground_truth"), ("[1]", "reward_model.ground_truth"),
    ({"ref_input": 4, "ops": [["add", 1]]}, "reward_model.ground_truth"),
    ({"ref_input": "4", "ref_output": 5, "ops": [["add", 1]]}, "reward_model.ground_truth.ref_input"),
    ({"ref_input": 4, "ref_output": True, "ops": [["add", 1]]}, "reward_model.ground_truth.ref_output"),
    ({"ref_input": 4, "ref_output": 5, "ops": []}, "reward_model.ground_truth.ops"),
    ({"ref_input": 4, "ref_output": 5, "ops": [["add"]]}, r"reward_model.ground_truth.ops\[0\]"),
    ({"ref_input": 4, "ref_output": 5, "ops": [["pow", 1]]}, r"reward_model.ground_truth.ops\[0\]"),
    ({"ref_input": 4, "ref_output": 5, "ops": [["add", 1], ["add", 0]]}, r"reward_model.ground_truth.ops\[1\]"),
    ({"ref_input": 4, "ref_output": 6, "ops": [["add", 1]]}, "reward_model.ground_truth.ref_output"),
    ({"ref_input": 2, "ref_output": 0, "ops": [["sub", 5], ["add", 3]]}, "reward_model.ground_truth.ref_output"),
])
def test_a_wrong_ground_truth_names_its_field(truth, field):
    with pytest.raises(GroundTruthError) as err:
        GT.check(truth if isinstance(truth, str) else json.dumps(truth))
    assert err.value.field.startswith(field.replace("\\", "")) or err.value.field == field.replace("\\", "")
    GT.check(TRUTH)
    GT.check(TRUTH.encode())
    GT.check(json.loads(TRUTH))


def test_leakage_keys_are_the_chain_without_its_start():
    rows = pd.concat([A.generate(stage=1, split="train", min_level=1, max_level=1, num=2, seed=0),
                      A.generate(stage=2, split="test", min_level=2, max_level=2, num=2, seed=0)], ignore_index=True)
    got = keys.leakage_keys(rows)
    for (key, stage), row in zip(got, rows.itertuples()):
        start, steps, _ = GT.parse(row.reward_model["ground_truth"])
        assert key == chain.render_chain(start, steps)[len(str(start)):] and key.startswith(".")
        assert stage == (1 if row.extra_info["stage"] == 1 else 0)
    assert [s for _, s in got] == [1, 1, 0, 0]


# ----------------------------------------------------------------------------- compute_score
def score(text, truth=TRUTH):
    return A.compute_score(DS, text, truth)


@pytest.mark.parametrize("text,expected", [
    ('417.sub(3)=414\n414.div(2)=207\n{"output": 207}\n', (1.0, True, "207")),
    ('```json\n{"output": 207}\n```', (1.0, True, "207")),
    ('{"output": 206} no: {"output": 207}', (1.0, True, "207")),
    ('{"output": 207} no: {"output": 206}', (0.0, False, "206")),
    ('{"output": "207"}', (0.0, False, "207")),  # an integer answer, not its text
    ('{"output": 207.0}', (0.0, False, "207.0")),
    ('{"output": true}', (0.0, False, "true")),
    ('{"output": null}', (0.0, False, "null")),
    ('{"output": [207]}', (0.0, False, "[207]")),
    ('{"output": -207}', (0.0, False, "-207")),
    ("the answer is 207", (-1.0, False, None)),
    ('{"answer": 207}', (-1.0, False, None)),
    ('{"output": 207', (-1.0, False, None)),
    ("", (-1.0, False, None)),
])
def test_conventions(text, expected):
    r = score(text)
    assert (r["score"], r["acc"], r["pred"]) == expected and set(r) == {"score", "acc", "pred"}


@pytest.mark.parametrize("bad", [None, 207, 207.0, b'{"output": 207}', ["x"], {"output": 207}])
def test_non_string_responses_never_raise(bad):
    assert score(bad) == {"score": -1.0, "acc": False, "pred": None}


HOSTILE = [
    "{" * 1_000_000, "}" * 1_000_000, "x" * 1_000_000, '{"output": ' + "9" * 100_000 + "}",
    '{"output": 1' + "0" * 5000 + "}", "<answer>" * 100_000 + '{"output": 207}' + "</answer>" * 100_000,
    '{"output": {"output": {"output": 207}}}', "[" * 100_000 + '{"output": 207}' + "]" * 100_000,
    '{"output": ٢٠٧}', '{"output": "２０７"}', "\ud800" * 1000 + '{"output": 207}', "\x00" * 100_000,
]


@pytest.mark.parametrize("i", range(len(HOSTILE)))
def test_hostile_responses_are_fast_and_safe(i):
    t0 = time.perf_counter()
    r = score(HOSTILE[i])
    assert time.perf_counter() - t0 < 1.5
    assert r["score"] in (-1.0, 0.0, 1.0) and isinstance(r["acc"], bool)
    assert r["acc"] == (i in (5, 7, 10))  # the answer after nested tags, inside brackets, after lone surrogates


def test_a_bad_ground_truth_is_a_data_error_naming_the_field():
    assert score('{"output": 207}', json.loads(TRUTH))["acc"] and score('{"output": 207}', TRUTH.encode())["acc"]
    with pytest.raises(ValueError, match="reward_model.ground_truth.*regenerate"):
        score('{"output": 207}', "not json")
    with pytest.raises(ValueError, match="ref_output"):
        score('{"output": 207}', json.dumps({"ref_input": 417, "ref_output": 1, "ops": [["sub", 3]]}))


# ----------------------------------------------------------------------------- the CLI
def test_the_cli_writes_a_problem_set_and_names_bad_input(tmp_path, capsys):
    from fgx.tasks.arithmetic.cli import main

    out = tmp_path / "test.parquet"
    args = ["generate", "--stage", "2", "--split", "test", "--min-level", "1", "--max-level", "3", "--num", "9",
            "--seed", "1", "--partition", "test", "--out", str(out)]
    assert main(args) == 0
    df = pd.read_parquet(out)
    assert len(df) == 9 and sorted(df.extra_info.map(lambda e: e["depth"])) == [1] * 3 + [2] * 3 + [3] * 3
    again = tmp_path / "again.parquet"
    assert main([*args[:-1], str(again), "--exclude", str(out)]) == 0
    assert not keys.problems_of([out]) & keys.problems_of([again])
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    assert main([*args[:-1], str(tmp_path / "x.parquet"), "--exclude", str(bad)]) == 1
    assert "bad.parquet" in capsys.readouterr().err and not (tmp_path / "x.parquet").exists()
    swapped = list(args)
    swapped[swapped.index("--min-level") + 1], swapped[swapped.index("--max-level") + 1] = "3", "2"
    assert main([*swapped[:-1], str(tmp_path / "y.parquet")]) == 1
    assert "need 1 <= min_level <= max_level, got min_level=3, max_level=2" in capsys.readouterr().err
