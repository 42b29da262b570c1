"""Helpers shared by the thin CLIs in scripts/: settings parsing and logging setup."""

from __future__ import annotations

import argparse
import json
import logging
import sys


def settings_arg(text: str) -> dict:
    """argparse type for ``--settings JSON`` (what Snakemake passes from config)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--settings is not valid JSON ({err}): {text[:200]!r}")
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--settings must be a JSON object")
    return value


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--settings", type=settings_arg, default={}, help="job settings as JSON (from config.yaml)")
    return p


def setup_logging() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
