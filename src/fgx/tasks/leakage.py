"""Leakage check: no test expression may appear in a training file.

Expressions are compared after normalisation:

- string task: the main_solution expression of ``ref_code``, parsed and re-rendered
  (``strings:func_17(func_3(x))``), so spacing and quoting do not matter and the input does not
  count (the same program on another input is still a leak);
- countdown: ``countdown:<sorted numbers>-><target>``.

By design (paper, and upstream) Stage 1 teaches every function, the held-out ones included, on
Level-1 problems with their definitions shown; a Level-1 test expression that occurs only in
Stage-1 rows is therefore reported as ``expected_overlap`` and not as a leak unless ``strict``.

CLI: ``python -m fgx.tasks.leakage --test A.parquet --train B.parquet C.parquet --out report.json``
writes a JSON report and exits 1 naming the leaked rows (0 when clean).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable



@dataclass(frozen=True)
class RowKey:
    key: str        # normalised expression
    row: int
    stage: int      # 1 = Stage-1 row (definitions shown), else 0/2
    level: int


def _read(path: str | Path):
    from fgx.io import read_rows

    return read_rows(path, "problem set", ("data_source", "reward_model"))


def _normalise_row(path: Path, i: int, data_source: str, reward_model, extra_info, file_stage: int) -> RowKey:
    from fgx.tasks import strings
    from fgx.tasks.contract import row_level

    if not isinstance(reward_model, dict) or "ground_truth" not in reward_model:
        raise ValueError(f"{path}: row {i} lacks field reward_model.ground_truth; regenerate the file "
                         "with `python -m fgx.tasks.strings generate` (verl schema)")
    try:
        gt = json.loads(reward_model["ground_truth"])
    except (TypeError, ValueError):
        raise ValueError(f"{path}: row {i}: reward_model.ground_truth is not JSON text; regenerate the file") from None
    info = extra_info if isinstance(extra_info, dict) else {}
    level = row_level(extra_info, f"{path}: row {i}")
    ds = str(data_source)
    if ds.startswith("reasoning-gym-countdown"):
        if not isinstance(gt, dict) or "numbers" not in gt:
            raise ValueError(f"{path}: row {i}: countdown ground_truth lacks 'numbers'; regenerate the file")
        nums = sorted(int(v) for v in gt["numbers"])
        target = int(gt.get("answer", gt.get("target")))
        return RowKey(f"countdown:{nums}->{target}", i, 0, level)
    if not isinstance(gt, dict) or "ref_code" not in gt:
        raise ValueError(f"{path}: row {i} lacks field reward_model.ground_truth.ref_code; regenerate the "
                         "file with `python -m fgx.tasks.strings generate`")
    code = gt["ref_code"]
    try:
        e = strings.parse_code(code)
        key = strings.render_code(e)
    except ValueError:
        # Not our vocabulary: compare the whitespace-free return expression text.
        body = code.rsplit("return", 1)[-1]
        key = "".join(body.split())
    stage = info.get("stage")
    return RowKey(f"strings:{key}", i, int(file_stage if stage is None else stage), level)


def _file_stage(df) -> int:
    """Stage of a file's rows that do not say (upstream's rows carry only index, split and depth):
    Stage 1 when any row's program prints function definitions (only Stage-1 prompts do; a Level-1
    row without a custom call prints none, so the file decides, not the row), else Stage 2."""
    for rm in df["reward_model"]:
        gt = rm.get("ground_truth") if isinstance(rm, dict) else None
        try:
            code = json.loads(gt).get("ref_code", "") if isinstance(gt, (str, bytes)) else ""
        except (ValueError, AttributeError):
            continue
        if "\ndef func_" in "\n" + str(code):
            return 1
    return 2


def row_keys(path: str | Path) -> list[RowKey]:
    path = Path(path)
    df = _read(path)
    extra = df["extra_info"] if "extra_info" in df.columns else [None] * len(df)
    stage = _file_stage(df)
    return [_normalise_row(path, i, ds, rm, ei, stage)
            for i, (ds, rm, ei) in enumerate(zip(df["data_source"], df["reward_model"], extra))]


def expressions_of(path: str | Path, strip_prefix: bool = False) -> list[str]:
    """Normalised expressions of every row (``strip_prefix``: the bare render_code text)."""
    keys = [k.key for k in row_keys(path)]
    if strip_prefix:
        keys = [k.split(":", 1)[1] for k in keys if k.startswith("strings:")]
    return keys


def find_leaks(test_paths: Iterable[str | Path], train_paths: Iterable[str | Path], *,
               strict: bool = False) -> dict:
    """Detailed report: leaked rows, expected Stage-1 overlaps, counts."""
    train: dict[str, list[tuple[str, RowKey]]] = {}
    n_train = 0
    for p in train_paths:
        for k in row_keys(p):
            train.setdefault(k.key, []).append((str(p), k))
            n_train += 1
    leaks, expected, n_test = [], [], 0
    for p in test_paths:
        for k in row_keys(p):
            n_test += 1
            hits = train.get(k.key)
            if not hits:
                continue
            real = [(f, t) for f, t in hits if strict or not (t.stage == 1 and t.level == 1)]
            entry = {"expression": k.key, "test_file": str(p), "test_row": k.row, "level": k.level,
                     "train": [{"file": f, "row": t.row} for f, t in (real or hits)[:5]],
                     "train_count": len(real or hits)}
            (leaks if real else expected).append(entry)
    return {"ok": not leaks, "n_test_rows": n_test, "n_train_rows": n_train, "n_leaked_rows": len(leaks),
            "leaked_expressions": sorted({e["expression"] for e in leaks}), "leaks": leaks,
            "n_expected_overlap_rows": len(expected), "expected_overlap": expected[:100], "strict": strict}


def check_leakage(test_paths: Iterable[str | Path], train_paths: Iterable[str | Path], *,
                  strict: bool = False) -> list[str]:
    """Sorted normalised test expressions that also occur in a training file (empty = clean)."""
    return find_leaks(test_paths, train_paths, strict=strict)["leaked_expressions"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.tasks.leakage", description=__doc__.split("\n\n")[0])
    p.add_argument("--test", nargs="+", required=True, help="test/eval parquet files")
    p.add_argument("--train", nargs="+", required=True, help="training parquet files")
    p.add_argument("--out", required=True, help="JSON report (written atomically)")
    p.add_argument("--strict", action="store_true",
                   help="also count Level-1 overlaps with Stage-1 rows (expected by design) as leaks")
    args = p.parse_args(argv)
    from fgx.io import write_json

    try:
        report = find_leaks(args.test, args.train, strict=args.strict)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    report["test_files"], report["train_files"] = list(args.test), list(args.train)
    write_json(report, args.out)
    if report["leaks"]:
        print(f"LEAKAGE: {report['n_leaked_rows']} test rows also occur in training files:", file=sys.stderr)
        for e in report["leaks"][:50]:
            where = ", ".join(f"{t['file']} row {t['row']}" for t in e["train"])
            print(f"  {e['test_file']} row {e['test_row']}: {e['expression']}  <- {where}", file=sys.stderr)
        return 1
    print(f"no leakage: {report['n_test_rows']} test rows vs {report['n_train_rows']} training rows "
          f"({report['n_expected_overlap_rows']} expected Stage-1 Level-1 overlaps)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
