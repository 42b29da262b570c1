"""The experiment overlays quote no measured number: each header says what question the overlay answers,
what it changes against config.yaml, and where its measurements are (research-log entries, committed
runs), and each of those references resolves."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
OVERLAYS = sorted((ROOT / "experiments").glob("*.yaml"))
LOG = ROOT / "docs" / "research-log.md"

# What a measurement looks like in prose: a signed decimal (a lead, "+22.6", "-3.7"), a bootstrap
# interval ("[17.9, 27.6]"), a percentage ("40 %", "61%") or a duration ("548 s", "1,402 s", "23 min").
MEASURED = re.compile(
    r"(?<![\w.])[+\-−]\d+\.\d+"
    r"|\[\s*[+\-−]?\d+\.\d+\s*,\s*[+\-−]?\d+\.\d+\s*\]"
    r"|\d\s?%"
    r"|\d[\d,.]*\s?(?:s|ms|sec|seconds?|min|minutes?|h|hours?)\b")
# One line per changed key: "#   section.key: config.yaml's value -> the overlay's value (why)"
CHANGE = re.compile(r"^#\s+([a-z_]+(?:\.[a-z_0-9]+)+): (.+?) -> (.+?)(?: \(.*\))?$")


def comments(text):
    return [line for line in text.splitlines() if line.lstrip().startswith("#")]


def measured_numbers(text):
    return [m.group(0) for line in comments(text) for m in MEASURED.finditer(line)]


def leaves(tree, prefix=""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def lookup(tree, dotted):
    for part in dotted.split("."):
        tree = tree[part]
    return tree


def test_every_overlay_is_checked():
    assert len(OVERLAYS) >= 5, OVERLAYS


@pytest.mark.parametrize("path", OVERLAYS, ids=lambda p: p.name)
def test_an_overlay_header_quotes_no_measured_number(path):
    assert measured_numbers(path.read_text()) == [], (
        f"{path.name}: measured numbers belong in docs/research-log.md; link its entry instead")


@pytest.mark.parametrize("line, found", [
    ("# RL Level 2 - RL Level 1 at Level 3 +19.6 [15.4, 24.2] (config.yaml: +22.6 / +36.0)",
     ["+19.6", "[15.4, 24.2]", "+22.6", "+36.0"]),
    ("# Stage 1 composes on its own (40-61 % at Level 3)", ["1 %"]),
    ("# Pretraining 548-580 s against 642 s; main job 1,402 / 1,488 s, 23 min", ["580 s", "642 s", "1,488 s",
                                                                              "23 min"]),
    ("# -3.7 [-7.0, -0.4]", ["-3.7", "[-7.0, -0.4]"]),
    ("#   data.pretrain_step_unmarked: 0.1 -> 0.3", []),
    ("#   data.pretrain_prior_level_shares: null -> [3, 3, 1, 1]", []),
    ("# one in four is four or five deep (6,000 / 6,000 / 2,000 / 2,000 of the 16,000), 2-core", []),
    ("steps: 9600  # a value line, not a header comment", []),
])
def test_the_pattern_tells_measurements_from_settings(line, found):
    assert measured_numbers(line) == found


@pytest.mark.parametrize("path", OVERLAYS, ids=lambda p: p.name)
def test_an_overlay_header_names_every_change_against_config_yaml(path):
    default = yaml.safe_load((ROOT / "config.yaml").read_text())
    overlay = yaml.safe_load(path.read_text())
    changes = {}
    for line in comments(path.read_text()):
        if m := CHANGE.match(line):
            changes[m[1]] = (yaml.safe_load(m[2]), yaml.safe_load(m[3]))
    assert changes, f"{path.name}: no '#   key: old -> new' lines"
    assert sorted(changes) == sorted(key for key, _ in leaves(overlay)), path.name
    for key, (old, new) in changes.items():
        assert old == lookup(default, key), f"{path.name}: {key} is {lookup(default, key)!r} in config.yaml"
        assert new == lookup(overlay, key), f"{path.name}: {key} is {lookup(overlay, key)!r} in the overlay"


@pytest.mark.parametrize("path", OVERLAYS, ids=lambda p: p.name)
def test_an_overlay_header_links_its_measurements(path):
    text = "\n".join(comments(path.read_text()))
    assert re.search(r"^# Question: ", text, re.M) and "docs/research-log.md#" in text, path.name
    for folder in re.findall(r"docs/results/[\w.\-]+/", text):
        assert (ROOT / folder).is_dir(), folder


def anchor_links():
    sources = [*OVERLAYS, ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
               ROOT / "config.yaml", ROOT / "config.paper.yaml", *sorted((ROOT / "profiles").glob("*/config.yaml"))]
    for path in sources:
        for anchor in re.findall(r"research-log\.md#([\w\-]+)", path.read_text()):
            yield path.relative_to(ROOT).as_posix(), anchor
        if path == LOG:
            for anchor in re.findall(r"\]\(#([\w\-]+)\)", path.read_text()):
                yield "docs/research-log.md", anchor


def test_every_research_log_anchor_linked_exists():
    text = LOG.read_text()
    anchors = set(re.findall(r'<a id="([^"]+)">', text))
    anchors |= {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")  # GitHub's heading anchors
                for h in re.findall(r"^#+ (.+)$", text, re.M)}
    links = list(anchor_links())
    assert len(links) >= 20, links
    missing = sorted({(where, a) for where, a in links if a not in anchors})
    assert missing == [], missing
