#!/usr/bin/env python
"""RL (the algorithm rl.algorithm names) from a checkpoint with outcome reward; logs held-out accuracy per level."""

import sys

from fgx.cli import parser, run_job


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--model", required=True, help="initial Hugging Face model directory")
    p.add_argument("--train", required=True, help="train prompts parquet")
    p.add_argument("--val", required=True, help="held-out prompts parquet (accuracy per level)")
    p.add_argument("--out", required=True, help="output Hugging Face model directory")
    p.add_argument("--metrics", required=True, help="output metrics parquet (step, metric, level, value)")
    p.add_argument("--validation", required=True,
                   help="output parquet: correct samples per held-out prompt at every validation step")
    p.add_argument("--work-dir", required=True, help="resumable work of an interrupted run lives here")
    args = p.parse_args(argv)
    def go(engine):
        from fgx.inputs import check_model_dir
        from fgx.tasks.contract import JOB_INPUT_FIX, check_problem_file

        check_model_dir(args.model)
        check_problem_file(args.train, "RL train prompts", JOB_INPUT_FIX)
        check_problem_file(args.val, "RL validation prompts", JOB_INPUT_FIX)
        engine.rl(args.model, args.train, args.val, args.out, args.metrics, args.work_dir, args.settings,
                  validation_path=args.validation)

    return run_job(go, args.settings)


if __name__ == "__main__":
    sys.exit(main())
