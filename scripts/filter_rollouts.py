#!/usr/bin/env python
"""Keep correct rollouts as supervised fine-tuning data (the 'rejection' in RFT)."""

import sys

from fgx.cli import parser, run


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--rollouts", required=True, help="rollout parquet from scripts/sample.py")
    p.add_argument("--out", required=True, help="output parquet: prompt rows + response")
    args = p.parse_args(argv)

    def go():
        from fgx.algos.rft import filter_rollouts
        from fgx.io import read_rows, write_parquet
        from fgx.settings import Filter

        Filter.from_settings(args.settings)
        rollouts = read_rows(args.rollouts, "rollouts", ("prompt", "responses", "correct"))
        kept = filter_rollouts(rollouts, source=args.rollouts, **args.settings)
        write_parquet(kept, args.out, settings=args.settings)
        print(f"kept {len(kept)} responses from {args.rollouts}")

    return run(go)


if __name__ == "__main__":
    sys.exit(main())
