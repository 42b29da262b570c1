#!/usr/bin/env python
"""Fail if a test expression appears in any training file (the CLI of fgx.tasks.leakage)."""

import sys


def main(argv=None) -> int:
    from fgx.cli import exit_cleanly_on_sigterm
    from fgx.tasks.leakage import main as leakage_main

    exit_cleanly_on_sigterm()
    return leakage_main(argv)


if __name__ == "__main__":
    sys.exit(main())
