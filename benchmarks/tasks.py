"""Throughput of the task module: problem generation (problems/s) and scoring (responses/s).

    python benchmarks/tasks.py [--responses 20000] [--problems 5000]

Scoring is compared with an upstream-equivalent scorer: a re-implementation (for comparison
only) of the logic upstream's ``verl/utils/reward_score/codeio.py`` forward path runs per
response — json.loads of the ground truth, a character-by-character brace scan (or the last
```json fence), json.loads of the candidate, the log-message formatting it does even with
printing off, and is_close. The last line is the ratio fgx / upstream.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time


# ----------------------------------------------------------------------------- upstream-equivalent scorer
def _up_extract_inner(s):
    if "```json" not in s:
        stack, start, last = [], None, None
        for i, ch in enumerate(s):
            if ch == "{":
                stack.append(i)
                if start is None:
                    start = i
            elif ch == "}":
                if stack:
                    stack.pop()
                    if not stack:
                        last = s[start:i + 1]
                        start = None
    else:
        a = s.rfind("```json")
        b = s.find("```", a + 7)
        last = s[a + 7:b].strip()
    if last:
        try:
            return json.loads(last.replace("\n", ""))
        except json.JSONDecodeError:
            last = last.replace("False", "false").replace("True", "true").replace("None", "null")
            try:
                return json.loads(last.replace("\n", ""))
            except json.JSONDecodeError:
                pass
    return None


def _up_extract(s):
    res = _up_extract_inner(s)
    if res is None:
        s = s.replace("\\{", "{").replace("\\}", "}").replace("(", "[").replace(")", "]")
        res = _up_extract_inner(s)
    if res is None and "\\boxed{" in s:
        a = s.rfind("\\boxed{") + 7
        b = s.rfind("}", a)
        res = _up_extract_inner(s[a:b].replace("\\\\", "\\").replace("\\{", "{").replace("\\}", "}"))
    return res


def _up_is_close(pred, target, tol=0.001):
    if isinstance(pred, dict) and isinstance(target, dict):
        return pred.keys() == target.keys() and all(_up_is_close(pred[k], target[k], tol) for k in pred)
    if isinstance(pred, list) and isinstance(target, list):
        return len(pred) == len(target) and all(_up_is_close(p, t, tol) for p, t in zip(pred, target))
    if isinstance(pred, (int, float)) and isinstance(target, (int, float)):
        if isinstance(pred, float) or isinstance(target, float):
            if math.isnan(pred) or math.isnan(target) or math.isinf(pred) or math.isinf(target):
                return False
            return abs(pred - target) <= tol * abs(target) and int(pred) == int(target)
        return pred == target
    return pred == target


def _quiet(*args, **kwargs):  # upstream formats its log lines, then drops them (do_print = False)
    return None


def upstream_score(solution_str, ground_truth):
    gt = json.loads(ground_truth)
    _quiet("\n" + "=" * 80)
    _quiet(" Processing New Sample ".center(80, "="))
    _quiet(f"[Model Response]\n{solution_str}")
    _quiet(f"[Ground Truth]\nRef Output: {gt['ref_output']}\nRef Input: {gt['ref_input']}")
    try:
        extracted = _up_extract(solution_str)
        if extracted is None:
            return -1
    except Exception:
        return -1
    _quiet(f"[Extracted]\n{extracted}")
    if not isinstance(extracted, dict) or "output" not in extracted:
        return -1
    out = extracted["output"]
    if _up_is_close(out, gt["ref_output"]):
        _quiet("[Match] Correct!")
        return 1
    _quiet(f"[Mismatch] Given the input {json.dumps(gt['ref_input'])}, your predicted output is "
           f"{json.dumps(out)}, ground truth is {json.dumps(gt['ref_output'])}.")
    return 0


# ----------------------------------------------------------------------------- workload
WORDS = ("first apply func_3 to the input which sorts the characters so we get then the next call "
         "reverses that string giving us and finally we append the suffix let me double check each "
         "step carefully the output should be").split()


def make_responses(rows, n, rng, target_len=600):
    out = []
    for i in range(n):
        gt = rows[i % len(rows)]
        ref = json.loads(gt)["ref_output"]
        ans = ref if rng.random() < 0.5 else ref[::-1] + "q"
        words = []
        while sum(len(w) + 1 for w in words) < target_len - 60:
            words.append(rng.choice(WORDS))
        text = " ".join(words)
        kind = rng.random()
        if kind < 0.45:
            resp = f'{text}\n\n```json\n{{"output": "{ans}"}}\n```'
        elif kind < 0.80:
            resp = f'{text}\nSo the final answer is {{"output": "{ans}"}}'
        elif kind < 0.90:
            resp = f'{text[:300]} def f(x): {{ return x }} {text[300:]} {{"output": "{ans}"}}'
        else:
            resp = text + " and so on"
        out.append((resp, gt))
    return out


def rate(fn, items, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for a, b in items:
            fn(a, b)
        best = min(best, time.perf_counter() - t0)
    return len(items) / best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--responses", type=int, default=20000)
    p.add_argument("--problems", type=int, default=5000)
    p.add_argument("--countdown", type=int, default=200, help="countdown problems to time (0 = skip)")
    args = p.parse_args(argv)

    from fgx.tasks import compute_score
    from fgx.tasks import strings as S

    for label, kw in [("paper  stage2 test L1-8, no cap", dict(stage=2, split="test", min_level=1, max_level=8)),
                      ("compact stage2 train L1-2, cap 16", dict(stage=2, split="train", min_level=1, max_level=2,
                                                                 style="compact", max_value_len=16)),
                      ("compact stage2 test L1-6, cap 24", dict(stage=2, split="test", min_level=1, max_level=6,
                                                                style="compact", max_value_len=24))]:
        t0 = time.perf_counter()
        df = S.generate(num=args.problems, seed=0, **kw)
        dt = time.perf_counter() - t0
        print(f"generation   {label:36s} {len(df) / dt:10,.0f} problems/s  ({len(df)} in {dt:.2f}s)")
    if args.countdown:
        from fgx.tasks import countdown

        countdown.generate(numbers=2, num=5, seed=42)  # import reasoning-gym outside the timing
        t0 = time.perf_counter()
        countdown.generate(numbers=2, num=args.countdown, seed=42)
        dt = time.perf_counter() - t0
        print(f"generation   {'countdown 2 numbers (reasoning-gym)':36s} {args.countdown / dt:10,.0f} problems/s")

    rows = list(S.generate(stage=2, split="test", min_level=1, max_level=8, num=512, seed=1)
                .reward_model.map(lambda r: r["ground_truth"]))
    items = make_responses(rows, args.responses, random.Random(0))
    mean_len = sum(len(r) for r, _ in items) / len(items)
    ds = "codeio-forward-incomplete-depth3"
    mism = sum((compute_score(ds, r, g)["score"] != upstream_score(r, g)) for r, g in items[:2000])
    fgx_rate = rate(lambda r, g: compute_score(ds, r, g), items)
    up_rate = rate(upstream_score, items)
    print(f"scoring      fgx.tasks.compute_score ({mean_len:.0f}-char responses)   {fgx_rate:10,.0f} responses/s")
    print(f"scoring      upstream-equivalent codeio scorer                {up_rate:10,.0f} responses/s")
    print(f"scoring      score disagreements with upstream on 2000 responses: {mism}")
    print(f"ratio        fgx / upstream scoring throughput: {fgx_rate / up_rate:.2f}x")


if __name__ == "__main__":
    main()
