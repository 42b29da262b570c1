#!/usr/bin/env python
"""Generate a string-task problem set (the CLI of fgx.tasks.strings generate)."""

import sys


def main(argv=None) -> int:
    from fgx.cli import exit_cleanly_on_sigterm
    from fgx.tasks.strings.cli import main as strings_main

    exit_cleanly_on_sigterm()
    return strings_main(["generate", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
