#!/usr/bin/env python
"""Supervised fine-tuning on filtered responses (loss on response tokens only)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from fgx.cli import parser, setup_logging  # noqa: E402


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--model", required=True, help="initial Hugging Face model directory")
    p.add_argument("--data", required=True, help="parquet of prompt rows + response")
    p.add_argument("--out", required=True, help="output Hugging Face model directory")
    args = p.parse_args(argv)
    setup_logging()
    from fgx.stages import engine_for

    engine_for(args.settings).sft(args.model, args.data, args.out, args.settings)


if __name__ == "__main__":
    main()
