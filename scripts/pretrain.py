#!/usr/bin/env python
"""Pretrain the tiny base model from scratch on problems with their reference traces."""

import sys

from fgx.cli import parser, run_job


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--data", nargs="+", required=True, help="parquet files of problems with extra_info.solution")
    p.add_argument("--out", required=True, help="output Hugging Face model directory")
    p.add_argument("--work-dir", required=True, help="resumable work of an interrupted run lives here")
    args = p.parse_args(argv)
    return run_job(lambda engine: engine.pretrain(args.data, args.out, args.work_dir, args.settings),
                   args.settings)


if __name__ == "__main__":
    sys.exit(main())
