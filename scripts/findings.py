#!/usr/bin/env python
"""Check the paper's findings against a run's figure tables (Markdown: pass@1 table, verdicts)."""

import sys


def main(argv=None) -> int:
    from fgx.cli import exit_cleanly_on_sigterm
    from fgx.analysis.findings import main as findings_main

    exit_cleanly_on_sigterm()
    return findings_main(argv)


if __name__ == "__main__":
    sys.exit(main())
