"""Leakage check: no test expression may appear in a training file.

Rows are compared by a key their task family makes (fgx.tasks.family.TaskFamily.leakage_keys), prefixed
with the family's name, so two families never collide:

- string task: the main_solution expression of ``ref_code``, parsed and re-rendered
  (``strings:func_17(func_3(x))``), so spacing and quoting do not matter and the input does not
  count (the same program on another input is still a leak);
- countdown: ``countdown:<sorted numbers>-><target>``.

By design (paper, and upstream) Stage 1 teaches every function, the held-out ones included, on
Level-1 problems with their definitions shown; a Level-1 test expression that occurs only in rows a
family marks as teaching an atom (Stage-1 rows) is therefore reported as ``expected_overlap`` and not
as a leak unless ``strict``.

CLI: ``python -m fgx.tasks.leakage --test A.parquet --train B.parquet C.parquet --out report.json``
writes a JSON report and exits 1 naming the leaked rows (0 when clean).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable


@dataclass(frozen=True)
class RowKey:
    key: str        # the family's name and its normalised expression
    row: int
    stage: int      # 1 = a row that teaches an atom (Stage 1, definitions shown), else 0
    level: int


def _read(path: str | Path):
    from fgx.io import read_rows

    return read_rows(path, "problem set", ("data_source", "reward_model"))


def row_keys(path: str | Path) -> list[RowKey]:
    """The key of every row of a problem file; a ValueError names the file, the row and the field of a row
    whose ground truth its family does not write."""
    from fgx.tasks.contract import row_level
    from fgx.tasks.family import GroundTruthError
    from fgx.tasks.registry import family_for

    path = Path(path)
    df = _read(path)
    extra = df["extra_info"] if "extra_info" in df.columns else [None] * len(df)
    owners = []
    for i, (ds, rm, info) in enumerate(zip(df["data_source"], df["reward_model"], extra)):
        if not isinstance(rm, dict) or "ground_truth" not in rm:
            raise ValueError(f"{path}: row {i} lacks field reward_model.ground_truth; regenerate the file "
                             "(delete it and rerun the rule that writes it; verl schema)")
        family = family_for(ds)
        try:
            family.check_ground_truth(rm["ground_truth"])
        except GroundTruthError as err:
            raise ValueError(f"{path}: row {i}: field {err.field} {err.problem}; regenerate the file") from None
        owners.append(family)
    levels = [row_level(info, f"{path}: row {i}") for i, info in enumerate(extra)]
    keys: list[tuple[str, int] | None] = [None] * len(df)
    for family in dict.fromkeys(owners):
        mine = [i for i, f in enumerate(owners) if f is family]
        for i, (key, stage) in zip(mine, family.leakage_keys(df.iloc[mine])):
            keys[i] = (f"{family.name}:{key}", stage)
    return [RowKey(key, i, stage, level) for i, ((key, stage), level) in enumerate(zip(keys, levels))]


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
