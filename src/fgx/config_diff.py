"""docs/paper-scale.md's table of every key where the paper's setup differs from the tiny default.

``config.paper.yaml`` is merged over ``config.yaml`` (Snakemake merges nested mappings key by key and replaces
a list whole), so the paper's setup differs from the tiny default exactly at the keys whose value it replaces
with another. This module lists each such key with both values and the comment ``config.paper.yaml`` gives it
(where it says a value is assumed, or whose it is), between ``<!-- config-diff:begin -->`` and
``<!-- config-diff:end -->`` in docs/paper-scale.md, so that the list cannot drift from the two files.

    python -m fgx.config_diff            # check: exit 1 when the committed table differs
    python -m fgx.config_diff --write    # rewrite the table from the two configs
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from fgx.knobs import show_value

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PATH = ROOT / "config.yaml"
PAPER_PATH = ROOT / "config.paper.yaml"
DOC_PATH = ROOT / "docs" / "paper-scale.md"
COMMAND = "python -m fgx.config_diff --write"
BLOCK = re.compile(r"(<!-- config-diff:begin -->\n)(.*?)(<!-- config-diff:end -->)", re.S)
_KEY_LINE = re.compile(r"^( *)([\w\-]+):[^#]*?(?:#\s?(.*))?$")
_COMMENT_LINE = re.compile(r"^( *)#\s?(.*)$")


def leaves(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every value that is not a non-empty mapping (lists and ``{}`` are values)."""
    for key, value in tree.items():
        if isinstance(value, Mapping) and value:
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def lookup(tree: Mapping[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        tree = tree[part]
    return tree


def differences(default: Mapping[str, Any], paper: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(dotted key, config.yaml's value, config.paper.yaml's value) of every key the paper's setup changes, in
    config.paper.yaml's order. A key config.yaml lacks is an error: the schema would refuse it."""
    out = []
    for key, value in leaves(paper):
        try:
            old = lookup(default, key)
        except (KeyError, TypeError):
            raise ValueError(f"{PAPER_PATH.name}: {key} is not a key of {DEFAULT_PATH.name}") from None
        if old != value:
            out.append((key, old, value))
    return out


def comments(text: str) -> dict[str, str]:
    """{dotted key: its comment} of a YAML file written one key per line: the comment after the key's value,
    with the comment-only lines below it that sit right of the key (its continuation)."""
    out: dict[str, str] = {}
    path: list[tuple[int, str]] = []  # (indent, key) of the mappings above the current line
    last: str | None = None
    for line in text.splitlines():
        if m := _KEY_LINE.match(line):
            indent = len(m[1])
            while path and path[-1][0] >= indent:
                path.pop()
            path.append((indent, m[2]))
            last = ".".join(key for _, key in path)
            if m[3]:
                out[last] = m[3].strip()
        elif (m := _COMMENT_LINE.match(line)) and last in out and len(m[1]) > path[-1][0]:
            out[last] += " " + m[2].strip()
        else:
            last = None
    return out


def table(default_text: str, paper_text: str) -> str:
    """The Markdown table of every key where ``paper_text`` (config.paper.yaml) changes ``default_text``'s value."""
    notes = comments(paper_text)
    rows = differences(yaml.safe_load(default_text), yaml.safe_load(paper_text))
    lines = ["| key | `config.yaml` (tiny default) | `config.paper.yaml` (the paper) | `config.paper.yaml`'s note |",
             "|---|---|---|---|"]
    cell = {key: notes.get(key, "").replace("|", "\\|") for key, _, _ in rows}  # a | would end the cell
    lines += [f"| `{key}` | `{show_value(old)}` | `{show_value(new)}` | {cell[key]} |" for key, old, new in rows]
    return "\n".join(lines)


def render(doc: str, default_text: str, paper_text: str) -> str:
    if not BLOCK.search(doc):
        raise ValueError(f"{DOC_PATH}: no <!-- config-diff:begin --> ... <!-- config-diff:end --> block")
    return BLOCK.sub(lambda m: m[1] + table(default_text, paper_text) + "\n" + m[3], doc, count=1)


def generated() -> str:
    return render(DOC_PATH.read_text(), DEFAULT_PATH.read_text(), PAPER_PATH.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fgx.config_diff", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite docs/paper-scale.md's table")
    args = ap.parse_args(argv)
    new = generated()
    if args.write:
        DOC_PATH.write_text(new)
        return 0
    if new != DOC_PATH.read_text():
        print(f"{DOC_PATH.relative_to(ROOT)}: the table of config.paper.yaml's changes differs from the configs; "
              f"run `{COMMAND}`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
