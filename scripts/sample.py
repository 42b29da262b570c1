#!/usr/bin/env python
"""Sample n responses per prompt from a model and score them (rollouts and evaluation)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from fgx.cli import parser, setup_logging  # noqa: E402


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--model", required=True, help="Hugging Face model directory")
    p.add_argument("--data", required=True, help="parquet of prompts (verl schema)")
    p.add_argument("--out", required=True, help="output parquet: rows + responses, scores, correct")
    args = p.parse_args(argv)
    setup_logging()
    from fgx.stages import engine_for

    engine_for(args.settings).sample(args.model, args.data, args.out, args.settings)


if __name__ == "__main__":
    main()
