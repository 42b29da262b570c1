#!/usr/bin/env python
"""Sample n responses per prompt from a model and score them (rollouts and evaluation)."""

import sys

from fgx.cli import parser, run_job


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--model", required=True, help="Hugging Face model directory")
    p.add_argument("--data", required=True, help="parquet of prompts (verl schema)")
    p.add_argument("--out", required=True, help="output parquet: rows + responses, scores, correct")
    p.add_argument("--work-dir", required=True, help="resumable work of an interrupted run lives here")
    args = p.parse_args(argv)
    def go(engine):
        from fgx.inputs import check_model_dir
        from fgx.tasks.contract import JOB_INPUT_FIX, check_problem_file

        check_model_dir(args.model)
        check_problem_file(args.data, "prompts", JOB_INPUT_FIX)
        engine.sample(args.model, args.data, args.out, args.work_dir, args.settings)

    return run_job(go, args.settings)


if __name__ == "__main__":
    sys.exit(main())
