#!/usr/bin/env python
"""Fail if a test expression appears in any training file (the CLI of fgx.tasks.leakage)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout


def main(argv=None):
    from fgx.tasks.leakage import main as leakage_main

    return leakage_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
