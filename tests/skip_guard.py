"""CI's guard against a tier that silently stops running: with ``FGX_FORBID_SKIPS=1`` (set by ``.ci/run``)
a skipped test fails, and so does a test module skipped while it is collected, unless the test is marked
``gpu`` (the CUDA tier, which a machine without CUDA skips by design). A package that a pip change drops, or a
SLURM cluster that did not come up, then turns CI red instead of into a line of ``pytest -ra``'s summary.

tests/conftest.py imports the hooks; ``pytest -p skip_guard`` loads them alone (tests/test_skip_guard.py).
"""

from __future__ import annotations

import os

import pytest

ENV = "FGX_FORBID_SKIPS"
ALLOWED_MARK = "gpu"


def forbidden() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def _reason(longrepr) -> str:
    return longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and forbidden() and not hasattr(report, "wasxfail")
            and item.get_closest_marker(ALLOWED_MARK) is None):
        report.outcome = "failed"
        report.longrepr = (f"skipped, and {ENV} forbids a skip outside the CUDA tier (tests marked "
                           f"{ALLOWED_MARK!r}): {_reason(report.longrepr)}")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and forbidden():
        report.outcome = "failed"
        report.longrepr = f"skipped while collected, and {ENV} forbids it: {_reason(report.longrepr)}"
