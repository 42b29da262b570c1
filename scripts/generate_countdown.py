#!/usr/bin/env python
"""Generate a Countdown problem set (the CLI of fgx.tasks.countdown generate)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout


def main(argv=None):
    from fgx.tasks.countdown import main as countdown_main

    return countdown_main(["generate", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
