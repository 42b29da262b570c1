#!/usr/bin/env python
"""Supervised fine-tuning on filtered responses (loss on response tokens only)."""

import sys

from fgx.cli import parser, run_job


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--model", required=True, help="initial Hugging Face model directory")
    p.add_argument("--data", required=True, help="parquet of prompt rows + response")
    p.add_argument("--out", required=True, help="output Hugging Face model directory")
    p.add_argument("--work-dir", required=True, help="resumable work of an interrupted run lives here")
    args = p.parse_args(argv)

    def go(engine):
        from fgx.inputs import check_model_dir

        check_model_dir(args.model)
        engine.sft(args.model, args.data, args.out, args.work_dir, args.settings)

    return run_job(go, args.settings)


if __name__ == "__main__":
    sys.exit(main())
