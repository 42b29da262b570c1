"""The paper's finding on Countdown (Section 4.3, Table 1), checked against the countdown_transfer figure
table: the Multi-Base with RL on string Levels 1+2 is the best of the four models on 3-number problems. Beside
the numbers, the tree shape most of that model's 3-number answers have (fgx.tasks.countdown.shapes): where it
stops when it fails."""

from __future__ import annotations

from typing import Mapping

from .models import MULTI
from .shapes import SHAPES

FINDING = "Countdown, 3 numbers: Multi-Base + RL L1+2 the best model"
PAPER = "best of the four (Table 1)"
BEST = f"rl_{MULTI.prefix}level1to2"


def _short(measured: str) -> str:
    """The README cell's key number: the best model's Avg@k, or that every model scores the same."""
    three, _, atomic = measured.partition(" (")
    shares = [part.rsplit(" ", 2) for part in three.split(", ")]
    same = len({v for _, v, _ in shares}) == 1
    key = f"every model {shares[0][1]} %" if same else " ".join(max(shares, key=lambda p: float(p[1]))[:2]) + " %"
    return key + (f" ({atomic}" if atomic else "")


WORDS = {"no_answer": "no answer", "fewer_numbers": "fewer numbers than given",
         "more_numbers": "more numbers than given",
         "one_step": "one operation", "left_chain": "a left chain", "right_chain": "a right chain",
         "mixed_chain": "a mixed chain", "balanced": "a balanced tree"}


def _main_shape(rows) -> str | None:
    """The tree shape most of one model's answers have, with its share (None for a table without shapes)."""
    if len(rows) != 1:  # the model is not in the table (a config that plans fewer Countdown RL runs)
        return None
    shares = {shape: rows[f"{shape}_share"].iloc[0] for shape in SHAPES if f"{shape}_share" in rows}
    if not shares:
        return None
    shape = max(shares, key=shares.get)
    return f"{100 * shares[shape]:.0f} % {WORDS[shape]}"


def check(tables: Mapping) -> list[dict]:
    """One row (fgx.tasks.family.Findings): Avg@k of every model on 3 numbers, the Multi-Base's held-out
    2-number check beside it; holds when Multi-Base + RL L1+2 scores above 0 and at least every other."""
    cd = tables.get("countdown_transfer")
    if cd is None or 3 not in set(cd["numbers"]):
        return [{"finding": FINDING, "paper": PAPER, "measured": "not run", "verdict": "not run", "short": "not run"}]
    three = cd[cd["numbers"] == 3].set_index("model")["avg_at_k"]
    text = ", ".join(f"{m} {100 * v:.1f} %" for m, v in three.items())
    atomic = cd[cd["numbers"] == 2]
    notes = []
    if len(atomic):  # the Multi-Base's held-out 2-number check: does it have the atomic skill?
        notes.append(f"Multi-Base on 2 numbers {100 * atomic['avg_at_k'].iloc[0]:.1f} %")
    shape = _main_shape(cd[(cd["numbers"] == 3) & (cd["model"] == BEST)])
    if shape:  # where the model the paper finds best stops
        notes.append(f"Multi-Base + RL L1+2's 3-number answers: {shape}")
    if notes:
        text += f" ({'; '.join(notes)})"
    best = BEST in three.index and three[BEST] > 0 and three[BEST] >= three.drop(BEST).max()
    return [{"finding": FINDING, "paper": PAPER, "measured": text, "verdict": "holds" if best else "no",
             "short": _short(text)}]
