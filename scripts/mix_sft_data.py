#!/usr/bin/env python
"""Merge SFT data sets (filtered rollouts and/or reference solutions) into one parquet."""

import sys

from fgx.cli import parser, run


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--inputs", nargs="+", required=True,
                   help="parquet files: filtered rollouts (with 'response') or compact problems (extra_info.solution)")
    p.add_argument("--out", required=True, help="output parquet: prompt rows + response")
    args = p.parse_args(argv)

    def go():
        from fgx.algos.rft import mix_sft_data
        from fgx.io import read_rows, write_parquet
        from fgx.settings import SFTMix

        SFTMix.from_settings(args.settings)
        frames = [read_rows(path, "SFT data", ("prompt", "reward_model")) for path in args.inputs]
        mixed = mix_sft_data(frames, repeats=args.settings["repeats"], sources=args.inputs)
        write_parquet(mixed, args.out, settings=args.settings)
        counts = ", ".join(f"{path}: {len(df)}" for path, df in zip(args.inputs, frames))
        print(f"wrote {len(mixed)} SFT rows ({counts}; repeats {args.settings['repeats']}) to {args.out}")

    return run(go)


if __name__ == "__main__":
    sys.exit(main())
