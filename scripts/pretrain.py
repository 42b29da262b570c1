#!/usr/bin/env python
"""Pretrain the tiny base model from scratch on Level-1 problems with their traces."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from fgx.cli import parser, setup_logging  # noqa: E402


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--data", nargs="+", required=True, help="parquet files of problems with extra_info.solution")
    p.add_argument("--out", required=True, help="output Hugging Face model directory")
    args = p.parse_args(argv)
    setup_logging()
    from fgx.stages import engine_for

    engine_for(args.settings).pretrain(args.data, args.out, args.settings)


if __name__ == "__main__":
    main()
