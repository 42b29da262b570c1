"""Progress bars for long work: live on a terminal, a line every few seconds in a job's log file."""

from __future__ import annotations

import sys


def progress_interval() -> float:
    """Seconds between progress-bar redraws."""
    return 0.1 if sys.stderr.isatty() else 5.0


class Bar:
    """A tqdm bar (or nothing, when ``enabled`` is false) that shows a few numbers beside the count."""

    def __init__(self, enabled: bool, total: int, initial: int, desc: str, unit: str = "it"):
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, dynamic_ncols=True,
                            mininterval=progress_interval())

    def update(self, n=1, **post):
        if self.bar is not None:
            self.bar.update(n)
            if post:
                self.bar.set_postfix({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in post.items()},
                                     refresh=False)

    def close(self):
        if self.bar is not None:
            self.bar.close()
