"""compute_score of the string task and the task dispatcher: conventions and adversarial inputs."""

import json
import time

import pytest

from fgx import tasks
from fgx.tasks import strings as S

DS = "codeio-forward-incomplete-depth2"
GT = json.dumps({"ref_input": {"x": "ab"}, "ref_output": "abc", "ref_code": "def main_solution(x):\n    return x",
                 "funcname": "main_solution"})


def score(text, gt=GT):
    return tasks.compute_score(DS, text, gt)


@pytest.mark.parametrize("text,expected", [
    ('I think... ```json\n{"output": "abc"}\n```', (1.0, True, "abc")),
    ('reasoning\n{"output": "abc"}', (1.0, True, "abc")),
    ('{\n  "output": "abc"\n}', (1.0, True, "abc")),
    ('```json\n{"output": "abc"}', (1.0, True, "abc")),  # unterminated fence
    ('{"output": "x"} no, wait: {"output": "abc"}', (1.0, True, "abc")),  # the last object wins
    ('{"output": "abc"} no, wait: {"output": "x"}', (0.0, False, "x")),
    ('{"output": "abc", "confident": True}', (1.0, True, "abc")),  # Python literals, as upstream
    ('\\boxed{{"output": "abc"}}', (1.0, True, "abc")),
    ('a stray { in the reasoning, then {"output": "abc"}', (1.0, True, "abc")),
    ('\\{"output": "abc"\\}', (1.0, True, "abc")),
    ('f17("cba")\n"abc"\n{"output": "abc"}\n', (1.0, True, "abc")),  # compact trace
    ('{"output": "abd"}', (0.0, False, "abd")),
    ('{"output": "abc "}', (0.0, False, "abc ")),  # exact match, no stripping
    ('{"output": ["abc"]}', (0.0, False, '["abc"]')),
    ('{"output": null}', (0.0, False, "null")),
    ('{"answer": "abc"}', (-1.0, False, None)),  # no "output" key (upstream: -1)
    ('["abc"]', (-1.0, False, None)),
    ("the answer is abc", (-1.0, False, None)),
    ('{"output": "abc"', (-1.0, False, None)),
    ("", (-1.0, False, None)),
])
def test_conventions(text, expected):
    r = score(text)
    assert (r["score"], r["acc"], r["pred"]) == expected and set(r) == {"score", "acc", "pred"}
    assert isinstance(r["score"], float) and isinstance(r["acc"], bool)


@pytest.mark.parametrize("bad", [None, 12, b'{"output": "abc"}', ["x"], {"output": "abc"}])
def test_non_string_responses_never_raise(bad):
    assert score(bad) == {"score": -1.0, "acc": False, "pred": None}


GARBAGE = [
    "{" * 1_000_000, "}" * 1_000_000, "{}" * 500_000, "x" * 1_000_000, "[" * 1_000_000,
    "{" + "[" * 1_000_000 + "}", '{"output": "' * 100_000, '{"a":' * 200_000 + "}" * 200_000,
    "```json" * 150_000, "{«}" * 300_000, "\\{" * 500_000, '{"output": "' + "\\" * 1_000_000 + '"}',
    "{" * 500_000 + '{"output": "abc"}',
]


@pytest.mark.parametrize("i", range(len(GARBAGE)))
def test_megabyte_garbage_is_fast_and_safe(i):
    t0 = time.perf_counter()
    r = score(GARBAGE[i])
    assert time.perf_counter() - t0 < 1.5
    assert r["score"] in (-1.0, 0.0, 1.0)


def test_linear_time_scaling():
    def cost(n):
        text = ("{a}" + "{" * 3 + "x" * 5) * n
        t0 = time.perf_counter()
        score(text)
        return time.perf_counter() - t0

    cost(1000)
    assert cost(80_000) < 40 * max(cost(8_000), 1e-3) + 0.05  # 10x input, far from 100x time


def test_ground_truth_forms_and_errors():
    assert score('{"output": "abc"}', json.loads(GT))["acc"]
    with pytest.raises(ValueError, match="ground_truth"):
        score('{"output": "abc"}', "not json")
    with pytest.raises(ValueError, match="ref_output"):
        score('{"output": "abc"}', json.dumps({"x": 1}))


def test_dispatch():
    assert tasks.task_for("codeio-forward-incomplete-depth3") is S
    from fgx.tasks import countdown

    assert tasks.task_for("reasoning-gym-countdown-depth3") is countdown
    assert tasks.task_for("reasoning-gym-countdown") is countdown
    gt = json.dumps({"answer": 6, "numbers": [2, 3]})
    assert tasks.compute_score("reasoning-gym-countdown-depth2", "<answer>2*3</answer>", gt)["score"] == 1.0
    for bad in ("openai/gsm8k", "", None):
        with pytest.raises(ValueError, match="unknown data_source"):
            tasks.compute_score(bad, "x", GT)


def test_generated_rows_score_their_own_answers():
    df = S.generate(stage=2, split="test", min_level=1, max_level=4, num=40, seed=2)
    assert len(df) == 40
    for _, row in df.iterrows():
        gt = row.reward_model["ground_truth"]
        out = json.loads(gt)["ref_output"]
        good = f'Let me think.\n```json\n{json.dumps({"output": out})}\n```'
        assert tasks.compute_score(row.data_source, good, gt, row.extra_info)["score"] == 1.0
        assert tasks.compute_score(row.data_source, '{"output": "?"}', gt)["score"] == 0.0
