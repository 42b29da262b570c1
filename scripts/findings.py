#!/usr/bin/env python
"""Check the paper's findings against a run's figure tables (Markdown: pass@1 table, verdicts)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from fgx.analysis.findings import main

if __name__ == "__main__":
    sys.exit(main())
