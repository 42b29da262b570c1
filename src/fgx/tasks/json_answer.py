"""The JSON answer both the string task and arithmetic chains ask for: the ``"output"`` of the last complete
JSON object in a response, and the -1 / 0 / 1 reward of it (upstream's convention).

The answer is found in this order:

1. if the response has a ```json fence, the last fence's content (upstream's first choice);
2. else / failing that, the last complete top-level ``{...}`` found by upstream's brace scan
   (braces counted naively; an unmatched ``}`` is ignored);
3. failing that, the balanced ``{...}`` that ends at the last ``}`` (rescues answers after a
   stray unclosed ``{`` in the reasoning), and the inner object of ``\\boxed{{...}}``.

Each candidate is read with ``json.loads`` after removing newlines, retrying with Python's
True/False/None spelled as JSON (both as upstream). The first candidate that is a dict with an
``"output"`` key gives the prediction; a family's ``compute_score`` says which values are right
(:func:`score_output`). Every step is a C-level string scan or a loop over the braces only, so the cost
is linear in the response length; nothing raises on any response. A family package shares this module,
never another family's.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

_BRACES = re.compile(r"[{}]")
_loads = json.loads


def _parse_obj(text: str):
    text = text.replace("\n", "")
    try:
        return _loads(text)
    except ValueError:
        pass
    except RecursionError:
        return None
    alt = text.replace("False", "false").replace("True", "true").replace("None", "null")
    if alt != text:
        try:
            return _loads(alt)
        except (ValueError, RecursionError):
            pass
    return None


def _last_fence(s: str) -> str | None:
    start = s.rfind("```json")
    if start < 0:
        return None
    start += 7
    end = s.find("```", start)
    return s[start:end] if end >= 0 else s[start:]


_NUMPY_MIN_BRACES = 2048  # above this many braces the scans run vectorised (numpy)


def _last_top_level_py(s: str) -> str | None:
    depth, start, last = 0, -1, None
    for m in _BRACES.finditer(s):
        if m.group() == "{":
            if depth == 0:
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                last = (start, m.end())
    return s[last[0]:last[1]] if last else None


def _balanced_before_last_close_py(s: str) -> str | None:
    end = s.rfind("}")
    if end < 0:
        return None
    positions = [m.start() for m in _BRACES.finditer(s, 0, end + 1)]
    depth = 0
    for k in reversed(positions):
        if s[k] == "}":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return s[k:end + 1]
    return None


def _brace_walk(s: str):
    """numpy: brace positions, steps (+1 open / -1 close) and the clamped depth before each brace."""
    import numpy as np

    codes = np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    idx = np.flatnonzero((codes == 123) | (codes == 125))
    step = np.where(codes[idx] == 123, 1, -1).astype(np.int64)
    if step.size == 0:
        return np, idx, step, step
    total = np.cumsum(step)
    # A walk clamped at 0 (an unmatched '}' is ignored) is the free walk minus its running minimum.
    after = total - np.minimum.accumulate(np.minimum(total, 0))
    before = np.concatenate(([0], after[:-1]))
    return np, idx, step, before


def _last_top_level_np(s: str) -> str | None:
    np, idx, step, before = _brace_walk(s)
    closes = np.flatnonzero((step == -1) & (before == 1))
    if closes.size == 0:
        return None
    e = int(closes[-1])
    opens = np.flatnonzero((step[:e] == 1) & (before[:e] == 0))
    return s[int(idx[opens[-1]]):int(idx[e]) + 1]


def _balanced_before_last_close_np(s: str) -> str | None:
    np, idx, step, _ = _brace_walk(s)
    closes = np.flatnonzero(step == -1)
    if closes.size == 0:
        return None
    last = int(closes[-1])
    back = np.cumsum(-step[:last + 1][::-1])  # '}' +1, '{' -1, walking leftwards from the last '}'
    hit = np.flatnonzero(back == 0)
    if hit.size == 0:
        return None
    return s[int(idx[last - int(hit[0])]):int(idx[last]) + 1]


def _many_braces(s: str) -> bool:
    return s.count("{") + s.count("}") > _NUMPY_MIN_BRACES


def _last_top_level(s: str) -> str | None:
    """Upstream's scan: the last {...} that closes back to depth 0 (naive brace counting)."""
    return _last_top_level_np(s) if _many_braces(s) else _last_top_level_py(s)


def _balanced_before_last_close(s: str) -> str | None:
    """The balanced {...} ending at the last '}' (braces counted naively, scanning backwards)."""
    return _balanced_before_last_close_np(s) if _many_braces(s) else _balanced_before_last_close_py(s)


def _braced(s: str):
    """The last top-level {...}, its inner object (``\\boxed{{"output": ...}}``) and the balanced
    {...} ending at the last '}'."""
    top = _last_top_level(s)
    if top is not None:
        yield top
        inner = top[1:-1].strip()
        if inner.startswith("{") and inner.endswith("}"):
            yield inner
    tail = _balanced_before_last_close(s)
    if tail is not None and tail != top:
        yield tail


def _candidates(s: str):
    fence = _last_fence(s) if "```json" in s else None
    if fence is not None:
        yield fence
    yield from _braced(s)
    if "\\{" in s or "\\}" in s:  # LaTeX-escaped braces: \boxed{\{"output": ...\}}
        yield from _braced(s.replace("\\{", "{").replace("\\}", "}"))


def extract_output(solution_str: Any) -> tuple[bool, Any]:
    """(found, value): the ``"output"`` of the last complete JSON object, if any."""
    if not isinstance(solution_str, str) or "{" not in solution_str:
        return False, None
    for cand in _candidates(solution_str):
        obj = _parse_obj(cand)
        if type(obj) is dict and "output" in obj:
            return True, obj["output"]
    return False, None


def pred_text(value: Any) -> str:
    """A parsed ``"output"`` as a reward's ``pred``: its JSON (non-ASCII kept), or its repr where JSON cannot
    write it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def score_output(solution_str: Any, is_right: Callable[[Any], bool]) -> dict:
    """The reward of a response answered by the ``"output"`` of its last JSON object (:func:`extract_output`):
    {"score": 1.0 when ``is_right(value)``, 0.0 for another value, -1.0 when none parses, "acc": bool, "pred":
    the value (a string as it is, else :func:`pred_text`) or None}. Never raises on any ``solution_str``."""
    try:
        found, value = extract_output(solution_str)
    except Exception:  # defensive: the reward must not crash a training step
        found, value = False, None
    if not found:
        return {"score": -1.0, "acc": False, "pred": None}
    acc = bool(is_right(value))
    return {"score": 1.0 if acc else 0.0, "acc": acc, "pred": value if isinstance(value, str) else pred_text(value)}
