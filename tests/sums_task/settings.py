"""The toy family's config section, ``sums:``."""

from __future__ import annotations

from dataclasses import dataclass

from fgx.settings import knob, levels


@dataclass(frozen=True)
class Sums:
    """config ``sums``: the toy task family."""

    per_level: int = knob("problems per level in each problem set", ge=1)
    train_levels: list[int] = levels("[min, max] level of the training problems")
    test_levels: list[int] = levels("[min, max] level of the test problems")
