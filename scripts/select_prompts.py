#!/usr/bin/env python
"""Keep the first prompts of each level of a problem set (the subset sampled many times for large-k pass@k)."""

import sys

from fgx.cli import parser, run


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--data", required=True, help="problem parquet (verl rows)")
    p.add_argument("--out", required=True, help="output parquet: the kept rows")
    args = p.parse_args(argv)

    def go():
        from fgx.io import read_rows, write_parquet
        from fgx.tasks.contract import JOB_INPUT_FIX, check_problem_file, first_per_level
        from fgx.settings import PromptSubset

        PromptSubset.from_settings(args.settings)
        check_problem_file(args.data, "problem set", JOB_INPUT_FIX)
        rows = read_rows(args.data, "problem set", ("extra_info",))
        lo, hi = args.settings["levels"]
        kept = first_per_level(rows, range(lo, hi + 1), args.settings["per_level"], source=args.data)
        write_parquet(kept, args.out, settings=args.settings)
        print(f"kept {len(kept)} of {len(rows)} prompts ({args.settings['per_level']} per level {lo}-{hi})")

    return run(go)


if __name__ == "__main__":
    sys.exit(main())
