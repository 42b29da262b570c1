"""The Countdown task (paper Section 4.3): reasoning-gym problems, upstream's prompt, a safe reward.

Problems come from ``reasoning_gym.create_dataset("countdown", ...)`` with upstream's settings
(values 1-100, targets 1-999, + - * /, shuffled numbers; upstream uses seed 42, 2-number problems
for training and 3/4/5-number problems for evaluation). Rows follow verl's schema with
``data_source = reasoning-gym-countdown-depth{n}`` and ground truth JSON
``{"answer": target, "numbers": [...]}`` (upstream's layout).

Reward (``compute_score``, verl's custom signature): the last ``<answer>...</answer>`` block is
parsed with ``ast`` (int literals, + - * /, parentheses and unary minus only; at most
``MAX_ANSWER_CHARS`` characters) and evaluated with exact rationals. It is correct when it uses
every given number exactly once (as a multiset; reasoning-gym's rule) and equals the target.
A trailing ``= <number>`` is tolerated and ignored. Scores follow the string task's convention:
1.0 correct, 0.0 a valid expression that is wrong (numbers, value or division by zero),
-1.0 no answer block or an answer that is not such an expression. Never raises on any response.

CLI: ``python -m fgx.tasks.countdown generate --numbers N --num M --seed S --out FILE``.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from fractions import Fraction
from functools import lru_cache
from typing import Any

DATA_SOURCE_PREFIX = "reasoning-gym-countdown"
MAX_ANSWER_CHARS = 512
MAX_NODES = 64

TEMPLATE = (
    "Using the numbers {numbers}, create an equation that equals {target}. You can use basic arithmetic "
    "operations (+, -, *, /) and each number can only be used once. Show your work in <think> </think> tags. "
    "And return the final answer in <answer> </answer> tags, for example <answer> (1 + 2) / 3 * 4 </answer>."
)


def data_source(numbers: int) -> str:
    return f"{DATA_SOURCE_PREFIX}-depth{numbers}"


def prompt_text(numbers: list[int], target: int) -> str:
    return TEMPLATE.format(numbers=str(list(numbers)), target=target)


def generate(*, numbers: int, num: int, seed: int = 42, split: str | None = None, progress: bool = False):
    """A verl-schema DataFrame of ``num`` reasoning-gym countdown problems with ``numbers`` numbers."""
    import pandas as pd
    import reasoning_gym

    if not isinstance(numbers, int) or numbers < 2:
        raise ValueError(f"numbers must be an integer >= 2, got {numbers!r}")
    if num < 1:
        raise ValueError(f"num must be >= 1, got {num}")
    split = split or ("train" if numbers == 2 else "test")
    ds = reasoning_gym.create_dataset("countdown", min_numbers=numbers, max_numbers=numbers, min_value=1,
                                      max_value=100, min_target=1, max_target=999,
                                      operators=("+", "-", "*", "/"), shuffle=True, seed=seed, size=num)
    items = range(num)
    if progress:
        from tqdm import tqdm
        items = tqdm(items, desc=f"countdown-{numbers}", mininterval=1.0)
    rows = []
    for i in items:
        meta = ds[i]["metadata"]
        nums, target = [int(v) for v in meta["numbers"]], int(meta["target"])
        rows.append({
            "data_source": data_source(numbers),
            "prompt": [{"role": "user", "content": prompt_text(nums, target)}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": json.dumps({"answer": target, "numbers": nums})},
            "extra_info": {"depth": numbers, "index": i, "split": split, "solution": None, "stage": 0,
                           "style": "paper"},
        })
    return pd.DataFrame(rows, columns=["data_source", "prompt", "ability", "reward_model", "extra_info"])


# ----------------------------------------------------------------------------- reward
class _Invalid(Exception):
    pass


@lru_cache(maxsize=8192)
def _gt_from_text(text: str) -> tuple[int, tuple[int, ...]]:
    try:
        obj = json.loads(text)
    except ValueError as err:
        raise ValueError(f"reward_model.ground_truth is not JSON ({err}); regenerate the data with "
                         "`python -m fgx.tasks.countdown generate`") from None
    return _gt_from_obj(obj)


def _gt_from_obj(obj: Any) -> tuple[int, tuple[int, ...]]:
    if not isinstance(obj, dict) or "numbers" not in obj or ("answer" not in obj and "target" not in obj):
        raise ValueError("reward_model.ground_truth must be JSON {\"answer\": target, \"numbers\": [...]} "
                         "as written by `python -m fgx.tasks.countdown generate`")
    target = obj["answer"] if "answer" in obj else obj["target"]
    return int(target), tuple(sorted(int(v) for v in obj["numbers"]))


def parse_ground_truth(ground_truth: Any) -> tuple[int, tuple[int, ...]]:
    """(target, sorted numbers) from the ground-truth JSON text or dict."""
    if isinstance(ground_truth, bytes):
        ground_truth = ground_truth.decode("utf-8")
    if isinstance(ground_truth, str):
        return _gt_from_text(ground_truth)
    return _gt_from_obj(ground_truth)


def extract_answer(solution_str: Any) -> str | None:
    """Content of the last complete ``<answer>...</answer>`` block, stripped (None if absent)."""
    if not isinstance(solution_str, str):
        return None
    end = solution_str.rfind("</answer>")
    if end < 0:
        return None
    start = solution_str.rfind("<answer>", 0, end)
    if start < 0:
        return None
    return solution_str[start + 8:end].strip()


def evaluate_answer(expr: str) -> tuple[Fraction | None, list[int]]:
    """(exact value or None on division by zero, int literals used); _Invalid if not allowed."""
    if len(expr) > MAX_ANSWER_CHARS or not expr:
        raise _Invalid("empty or too long")
    expr = expr.replace("×", "*").replace("÷", "/").replace("−", "-")
    if "=" in expr:  # tolerate "expr = 24"
        lhs, _, rhs = expr.rpartition("=")
        try:
            float(rhs.strip())
        except ValueError:
            raise _Invalid("'=' in answer") from None
        expr = lhs.rstrip("=").strip()
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        raise _Invalid("not an expression") from None
    ints: list[int] = []
    try:
        value = _walk(tree.body, ints, [MAX_NODES])
    except RecursionError:
        raise _Invalid("nested too deeply") from None
    return value, ints


def _walk(node: ast.AST, ints: list[int], budget: list[int]) -> Fraction | None:
    """Exact value (None after a division by zero); collects the int literals into ``ints``."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _Invalid("expression too large")
    t = type(node)
    if t is ast.Constant:
        if type(node.value) is not int:
            raise _Invalid(f"constant {node.value!r}")
        ints.append(node.value)
        return Fraction(node.value)
    if t is ast.BinOp:
        op = type(node.op)
        if op not in (ast.Add, ast.Sub, ast.Mult, ast.Div):
            raise _Invalid(f"operator {op.__name__}")
        a = _walk(node.left, ints, budget)
        b = _walk(node.right, ints, budget)
        if a is None or b is None:
            return None
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        if op is ast.Mult:
            return a * b
        return None if b == 0 else a / b
    if t is ast.UnaryOp and type(node.op) is ast.USub:
        v = _walk(node.operand, ints, budget)
        return None if v is None else -v
    raise _Invalid(f"syntax {t.__name__}")


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None) -> dict:
    """verl custom reward: {"score": 1.0 | 0.0 | -1.0, "acc": bool, "pred": str | None}."""
    target, numbers = parse_ground_truth(ground_truth)
    try:
        answer = extract_answer(solution_str)
        if answer is None:
            return {"score": -1.0, "acc": False, "pred": None}
        try:
            value, used = evaluate_answer(answer)
        except _Invalid:
            return {"score": -1.0, "acc": False, "pred": answer[:MAX_ANSWER_CHARS]}
        acc = value is not None and tuple(sorted(used)) == numbers and value == target
        return {"score": 1.0 if acc else 0.0, "acc": bool(acc), "pred": answer}
    except Exception:  # defensive: the reward must not crash a training step
        return {"score": -1.0, "acc": False, "pred": None}


# ----------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fgx.tasks.countdown", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate countdown problems (verl parquet)")
    g.add_argument("--numbers", type=int, required=True, help="numbers per problem (2 = train, 3-5 = eval)")
    g.add_argument("--num", type=int, required=True, help="number of problems")
    g.add_argument("--seed", type=int, default=42, help="reasoning-gym seed (upstream: 42)")
    g.add_argument("--split", choices=["train", "test"], default=None,
                   help="extra_info.split (default: train for 2 numbers, else test)")
    g.add_argument("--out", required=True, help="output .parquet path (written atomically)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from fgx.io import write_parquet

    try:
        df = generate(numbers=args.numbers, num=args.num, seed=args.seed, split=args.split, progress=True)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    write_parquet(df, args.out)
    print(f"wrote {len(df)} countdown problems ({args.numbers} numbers, seed {args.seed}) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
