#!/usr/bin/env python
"""Generate a Countdown problem set (the CLI of fgx.tasks.countdown generate)."""

import sys


def main(argv=None) -> int:
    from fgx.cli import exit_cleanly_on_sigterm
    from fgx.tasks.countdown import main as countdown_main

    exit_cleanly_on_sigterm()
    return countdown_main(["generate", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
