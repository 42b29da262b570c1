#!/usr/bin/env python
"""RL (GRPO / REINFORCE) from a checkpoint with outcome reward; logs held-out accuracy per level."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from fgx.cli import parser, setup_logging  # noqa: E402


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--model", required=True, help="initial Hugging Face model directory")
    p.add_argument("--train", required=True, help="train prompts parquet")
    p.add_argument("--val", required=True, help="held-out prompts parquet (accuracy per level)")
    p.add_argument("--out", required=True, help="output Hugging Face model directory")
    p.add_argument("--metrics", required=True, help="output metrics parquet (step, metric, level, value)")
    p.add_argument("--work-dir", required=True, help="resumable checkpoints live here")
    args = p.parse_args(argv)
    setup_logging()
    from fgx.stages import engine_for

    engine_for(args.settings).rl(
        args.model, args.train, args.val, args.out, args.metrics, args.settings, work_dir=args.work_dir)


if __name__ == "__main__":
    main()
