"""The toy family's figure: pass@1 per level of its model on its test set."""

from __future__ import annotations

from pathlib import Path

from fgx.figures import read_with_provenance
from fgx.plan import paths
from fgx.plan.figures import FigureSpec

from . import MODEL, TEST

SPEC = FigureSpec(lambda config: [paths.fill(paths.METRICS, model=MODEL, split=TEST)])


def table(inputs, settings):
    df = read_with_provenance(inputs[0], ("level", "k", "pass_at_k"))
    return df[df["k"] == 1][["model", "level", "pass_at_k", "source", "config_hash"]].reset_index(drop=True)


def draw(table, pdf, settings) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar(table["level"], table["pass_at_k"])
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf")
    plt.close(fig)
