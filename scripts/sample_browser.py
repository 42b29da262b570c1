#!/usr/bin/env python
"""Write an HTML page of example responses per model, level and failure category."""

import sys

from fgx.cli import parser, run


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--inputs", nargs="+", required=True,
                   help="evaluation parquets results/eval/{model}/{split}.parquet (fgx.plan.paths.EVAL)")
    p.add_argument("--out", required=True, help="output HTML file")
    p.add_argument("--level", type=int, default=None, help="only this level (default: every level)")
    p.add_argument("--per-cell", type=int, default=None, help="responses shown per model/level/category")
    p.add_argument("--seed", type=int, default=None, help="seed of the choice of responses")
    args = p.parse_args(argv)

    def go():
        from fgx.analysis.failures import classify_eval
        from fgx.analysis.sample_browser import render_html
        from fgx.io import atomic_path, read_rows
        from fgx.plan import paths
        from fgx.settings import SampleBrowser

        s = args.settings
        SampleBrowser.check(s)
        per_cell = args.per_cell if args.per_cell is not None else int(s.get("per_cell", 3))
        seed = args.seed if args.seed is not None else int(s.get("seed", 0))
        tables, categories = {}, []
        for path in args.inputs:
            rows = read_rows(path, "evaluation samples", ("responses", "reward_model"))
            table, classifier = classify_eval(rows, level=args.level, source=path)
            tables[paths.parse(paths.EVAL, path)["model"]] = table
            categories += classifier.CATEGORIES
        page = render_html(tables, per_cell=per_cell, seed=seed, categories=categories)
        with atomic_path(args.out, suffix=".html") as tmp:
            tmp.write_text(page, encoding="utf-8")
        print(f"sample browser: {sum(len(t) for t in tables.values())} responses of {len(tables)} models -> "
              f"{args.out}")

    return run(go)


if __name__ == "__main__":
    sys.exit(main())
