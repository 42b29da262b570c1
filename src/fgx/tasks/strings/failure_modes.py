"""Why a response to a string-task problem fails (paper Fig. 6): a rule-based, deterministic classifier.

Every response gets exactly one of five categories. The classifier knows the true computation:
the program (``ref_code``) with the input ``x`` inlined, its reducible nodes (calls, ``+``,
string methods) in rewrite order n1..nm (leftmost-innermost = post-order, as ``trace_values``)
and their values v1..vm (vm = ``ref_output``). "Step k" below is the application of node nk to
its (true) arguments.

Categories
----------
Correct
    ``compute_score`` accepts the answer (the ``"output"`` of the last JSON object equals
    ``ref_output``). Nothing else is looked at.
Ignores Composition
    Wrong, and the response never evaluates a sub-expression inside its context: compact, no
    trace line is the previous line with a *non-root* node replaced by a value (it jumps to an
    answer, writes only the final literal, echoes the prompt, or writes garbage); free text, it
    states none of the informative intermediate values v1..v(m-1) and computes nothing after
    naming the first function due (so it cannot be an atomic error at step 1, see below).
Incomplete Trace
    Wrong, it has evaluated something in context, but it gives an answer (or none) before carrying
    out every function application: no parseable ``{"output": ...}``; the answer is the value of an
    inner sub-expression (it stops early); the last trace line still holds calls and the answer
    skips over more than one remaining step with a wrong value; or it states values up to some
    step and then answers without computing anything further.
Incorrect Composition
    Wrong, and the first departure from the true computation is structural rather than a
    miscomputed function: a trace line that is not the previous line with sub-expressions
    replaced by values (a function dropped, added, renamed or moved, an argument or parameter
    changed), a value copied wrongly from one line to the next, a step whose value is the right
    function applied to the wrong argument, another function of the expression applied where this
    one is due (e.g. the outer function first), the argument passed through unchanged (the
    function dropped) or the operands of ``+``/interlace swapped; an answer that equals the
    program with one function dropped or two nested functions swapped; or an answer that is not
    the value the response's own trace (or reasoning) ends with.
Atomic Error
    Wrong, the response follows the structure (every step it states applies the right function to
    the right, correctly carried arguments) but the first wrong value is a single step's result
    that no rule above explains: the function itself was executed wrongly.

Mis-composition candidates of step k (values a structural slip at step k would produce): the
argument passed on unchanged (the function dropped); for ``+`` / interlace the operands swapped;
another function of the program (ancestors first: the outer function applied too early) applied
to step k's operand with its own parameters; step k's function applied to another known string
(the input, a literal, any true value) instead of its operand. Of a jump over a whole
sub-expression: an inner sub-expression's value (-> Incomplete Trace), the sub-expression with
one function removed or two nested unary functions swapped (-> Incorrect Composition).
Candidates equal to the true value are never used; the first one in this order names the reason.

Compact responses (the tiny model's trace)
------------------------------------------
Step lines (``"dcba".f3()="abcd"``, :mod:`fgx.tasks.strings.trace`) are read as the rewrite trace they
imply: each line the whole expression with the steps so far replaced by their values. Lines are read
up to the first line starting with ``{`` (the output line) or the first line that is no expression
(the trace breaks off there). Each line is matched against the previous
one (``cur``, starting at the inlined program): identical = no progress (ignored); the previous
line with some subtrees replaced by string literals = rewrite steps; anything else = a structural
change. The first wrong event decides:

1. no in-context rewrite anywhere (a replaced node below the root) -> Ignores Composition (not
   for a Level-1 problem: its one step is the root, so there is no context to ignore);
2. a structural change or a changed literal -> Incorrect Composition;
3. a rewrite of one step (all the node's arguments already literals) with a wrong value ->
   Incorrect Composition when the value is a mis-composition candidate (dropped function, wrong
   argument, another function of the expression, swapped operands), else Atomic Error;
4. a rewrite that skips several steps at once with a wrong value -> Incomplete Trace when the
   value is an inner sub-expression's, Incorrect Composition when it is the sub-expression with
   one function dropped or two nested functions swapped, else Incomplete Trace (skipped steps);
5. no error in the trace: no answer -> Incomplete Trace; the trace ends in a literal but the
   answer differs -> Incorrect Composition; calls remain and the answer is a true intermediate
   value -> Incomplete Trace; otherwise the answer is judged as a rewrite of the whole remaining
   expression (rules 3/4: one step left -> Atomic Error or Incorrect Composition).

Free-text responses (LLM, paper prompts)
----------------------------------------
A value is *stated* when it occurs in the reasoning (the text before the last ``"output"``)
quoted (``"v"``, ``'v'``, backticks, curly quotes) or, for values of 3+ characters, as a whole
token (no letter/digit on either side). An intermediate v_k is *informative* unless it equals
the input, a program literal or one of its own arguments (a no-op step proves nothing). Step k is
*reached* when v_k is stated, an ancestor's value is stated, or it is uninformative and its
arguments are reached. j = the first unreached step (the root when every intermediate is
reached). A *new value* is a quoted string of 3+ characters that is no true value, input,
literal, answer or substring of the program text. Rules, first match wins:

1. no parseable answer -> Incomplete Trace if an informative intermediate is stated, else
   Ignores Composition;
2. the answer is an informative intermediate -> Incomplete Trace (stops early);
3. the correct final value is stated but another one answered -> Incorrect Composition;
4. a mis-composition candidate of step j (see above) is stated and is not a true value, the
   input or a literal -> Incorrect Composition;
5. if an intermediate is stated: the answer is the program with one function dropped or two
   nested functions swapped, or a mis-composition candidate of step j -> Incorrect Composition;
6. no intermediate stated: a new value after the first mention of step j's function (e.g.
   ``func_5``) -> Atomic Error at step j, else Ignores Composition;
7. j = root (every intermediate reached) -> Atomic Error (the final step is wrong);
8. a new value after the last stated intermediate -> Atomic Error at step j, else Incomplete
   Trace (it answers without computing step j).

Known limits: free text can only see values a response writes down, so an atomic error at the
first step that is never quoted counts as Ignores Composition, and a candidate value can
coincide with a genuine atomic slip; both rules are fixed so counts are comparable across models.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fgx.io import writable_text
from fgx.settings import STYLES

from . import functions as F
from .expr import (Call, Concat, Expr, Int, Method, Str, UnsupportedCode, Var, children, evaluate, parse_code,
                   parse_compact, quote, render_code, render_compact, replace_at, with_child)
from .generate import DATA_SOURCE_PREFIX
from .ground_truth import parse_ground_truth
from .scoring import compute_score
from .trace import chain_to_compact, top_level_eq, trace_lines

CORRECT = "Correct"
IGNORES = "Ignores Composition"
INCOMPLETE = "Incomplete Trace"
INCORRECT = "Incorrect Composition"
ATOMIC = "Atomic Error"
CATEGORIES = (CORRECT, IGNORES, INCOMPLETE, INCORRECT, ATOMIC)
FAILURES = CATEGORIES[1:]

_CAP = 20_000  # length cap for values computed while testing mis-composition candidates


@dataclass(frozen=True)
class Classification:
    """One response's category, a human-readable reason, and the true step (1-based) it concerns."""

    category: str
    reason: str
    step: int | None = None

    def __post_init__(self):  # a reason quotes model text, which may hold what no file can (lone surrogates)
        object.__setattr__(self, "reason", writable_text(self.reason))


# ----------------------------------------------------------------------------- the true computation
@dataclass(frozen=True)
class _Node:
    path: tuple
    expr: Expr
    value: str
    parent: int | None
    span: int  # reducible nodes in the subtree, itself included


@dataclass(frozen=True)
class _Problem:
    x: str
    ref: str
    code: str
    e0: Expr
    nodes: tuple
    by_path: dict
    known: tuple  # the input and the program's string literals, in order
    truth: tuple  # the reference answer (fgx.tasks.strings.trace.trace_lines)


def _reducible(e) -> bool:
    return type(e) in (Call, Concat, Method)


def _inline(e: Expr, x: str) -> Expr:
    t = type(e)
    if t is Var:
        return Str(x)
    if t is Call:
        return Call(e.fn, tuple(_inline(a, x) for a in e.args))
    if t is Concat:
        return Concat(_inline(e.left, x), _inline(e.right, x))
    if t is Method:
        return Method(e.name, _inline(e.arg, x))
    return e


def _with_children(e: Expr, kids) -> Expr:
    t = type(e)
    if t is Call:
        return Call(e.fn, tuple(kids))
    if t is Concat:
        return Concat(kids[0], kids[1])
    return Method(e.name, kids[0])


def _operands(e: Expr) -> list[int]:
    """Indices of the string operands (not the parameters) of a reducible node."""
    t = type(e)
    if t is Call:
        return [k for k, kind in enumerate(F.SIGNATURES[e.fn]) if kind == "s"]
    if t is Concat:
        return [0, 1]
    return [0]


def _lit(v) -> Expr:
    return Int(v) if type(v) is int else Str(v)


def _val(e: Expr) -> str | None:
    """Value of an inlined expression, or None if it cannot be computed within the cap."""
    try:
        v = evaluate(e, "", _CAP)
    except Exception:  # a candidate that cannot be computed is no candidate
        return None
    return v if isinstance(v, str) else None


def _child_values(e: Expr) -> list:
    out = []
    for c in children(e):
        if type(c) is Int:
            out.append(c.value)
        elif type(c) is Str:
            out.append(c.value)
        else:
            out.append(_val(c))
    return out


@lru_cache(maxsize=4096)
def _problem_from_text(text: str) -> _Problem:
    gt = parse_ground_truth(text)
    e = parse_code(gt["ref_code"])
    x = gt["x"]
    e0 = _inline(e, x)
    nodes: list[_Node] = []

    def walk(n: Expr, path: tuple, parent_slot: list) -> int:
        """Append the reducible nodes of n's subtree in post-order; return their count."""
        if not _reducible(n):
            return 0
        slot: list = []
        span = 1
        for k, c in enumerate(children(n)):
            span += walk(c, path + (k,), slot)
        i = len(nodes)
        nodes.append(_Node(path, n, _val(n), None, span))
        for child in slot:
            nodes[child] = _Node(nodes[child].path, nodes[child].expr, nodes[child].value, i, nodes[child].span)
        parent_slot.append(i)
        return span

    walk(e0, (), [])
    if any(n.value is None for n in nodes):
        raise ValueError("reward_model.ground_truth.ref_code cannot be evaluated on ref_input.x")
    known: list[str] = []
    stack = [e0]
    while stack:
        n = stack.pop()
        if type(n) is Str and n.value not in known:
            known.append(n.value)
        stack.extend(reversed(children(n)))
    known = [x] + [k for k in known if k != x]
    return _Problem(x=x, ref=gt["ref_output"], code=gt["ref_code"], e0=e0, nodes=tuple(nodes),
                    by_path={n.path: i for i, n in enumerate(nodes)}, known=tuple(known),
                    truth=tuple(trace_lines(e, x)))


def _problem(ground_truth: Any) -> _Problem:
    if isinstance(ground_truth, (str, bytes)):
        text = ground_truth.decode("utf-8") if isinstance(ground_truth, bytes) else ground_truth
    else:
        text = json.dumps(parse_ground_truth(ground_truth), sort_keys=True)
    return _problem_from_text(text)


def truth_trace(ground_truth: Any) -> list[str]:
    """The reference answer of a problem (one step per line, then the output line)."""
    return list(_problem(ground_truth).truth)


# ----------------------------------------------------------------------------- rendering helpers
def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _q(v: str) -> str:
    return _short(quote(v), 40)


def _show(e: Expr, paper: bool) -> str:
    return _short(render_code(e) if paper else render_compact(e, ""), 60)


def _label(e: Expr, paper: bool) -> str:
    t = type(e)
    if t is Call:
        return f"func_{e.fn}" if paper else f"f{e.fn}"
    if t is Method:
        return f".{e.name}()" if paper else e.name
    return "'+'"


def _same_fn(a: Expr, b: Expr) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is Call:
        return a.fn == b.fn
    if type(a) is Method:
        return a.name == b.name
    return True


def _step_expr(p: _Problem, i: int) -> Expr:
    """Node i with its arguments replaced by their true values (what the step computes)."""
    e = p.nodes[i].expr
    return _with_children(e, [_lit(v) for v in _child_values(e)])


def _ancestors(p: _Problem, i: int) -> list[int]:
    out = []
    a = p.nodes[i].parent
    while a is not None:
        out.append(a)
        a = p.nodes[a].parent
    return out


# ----------------------------------------------------------------------------- mis-composition candidates
def _step_candidates(p: _Problem, i: int, paper: bool) -> dict:
    """Values a mis-composed step i would produce -> (category, why). Excludes the true value."""
    node = p.nodes[i]
    e, true = node.expr, node.value
    vals = _child_values(e)
    ops = _operands(e)
    out: dict = {}

    def add(v, why):
        if isinstance(v, str) and v != true and v not in out:
            out[v] = (INCORRECT, why)

    lab = _label(e, paper)
    for k in ops:
        add(vals[k], f"drops {lab}: passes its argument {_q(vals[k])} on unchanged")
    if len(ops) == 2:
        swapped = list(vals)
        swapped[ops[0]], swapped[ops[1]] = vals[ops[1]], vals[ops[0]]
        add(_val(_with_children(e, [_lit(v) for v in swapped])), f"swaps the two arguments of {lab}")
    if len(ops) == 1:
        operand = vals[ops[0]]
        anc = _ancestors(p, i)
        for j in anc + [j for j in range(len(p.nodes)) if j != i and j not in anc]:
            o = p.nodes[j].expr
            oops = _operands(o)
            if _same_fn(o, e) or len(oops) != 1:
                continue
            ovals = _child_values(o)
            ovals[oops[0]] = operand
            if any(v is None for v in ovals):
                continue
            order = " (the outer function first: wrong order)" if j in anc else ""
            add(_val(_with_children(o, [_lit(v) for v in ovals])),
                f"applies {_label(o, paper)} to {_q(operand)} where {lab} is due{order}")
    pool = list(dict.fromkeys([*p.known, *(n.value for j, n in enumerate(p.nodes) if j != i)]))
    for k in ops:
        for w in pool:
            if w == vals[k]:
                continue
            new = list(vals)
            new[k] = w
            add(_val(_with_children(e, [_lit(v) for v in new])),
                f"applies {lab} to {_q(w)} instead of {_q(vals[k])} (wrong argument)")
    return out


def _jump_candidates(p: _Problem, i: int, paper: bool, remaining: set | None = None) -> dict:
    """Values of a wrong jump over node i's sub-expression -> (category, why)."""
    node = p.nodes[i]
    true = node.value
    out: dict = {}

    def add(v, cat, why):
        if isinstance(v, str) and v != true and v not in out:
            out[v] = (cat, why)

    sub = range(i - node.span + 1, i + 1)
    for j in sub[:-1]:
        add(p.nodes[j].value, INCOMPLETE,
            f"gives the value of the inner sub-expression {_show(p.nodes[j].expr, paper)} "
            f"({_q(p.nodes[j].value)}): stops before applying every function")
    live = [j for j in sub if remaining is None or p.nodes[j].path in remaining]
    base = len(node.path)
    for j in live:
        d = p.nodes[j]
        for k in _operands(d.expr):
            add(_val(replace_at(node.expr, d.path[base:], children(d.expr)[k])), INCORRECT,
                f"drops {_label(d.expr, paper)} (the answer is the expression without it)")
    for j in live:
        d = p.nodes[j]
        dops = _operands(d.expr)
        if len(dops) != 1:
            continue
        c = children(d.expr)[dops[0]]
        if not _reducible(c) or len(_operands(c)) != 1:
            continue
        if remaining is not None and d.path + (dops[0],) not in remaining:
            continue
        cops = _operands(c)
        z = children(c)[cops[0]]
        swapped = with_child(c, cops[0], with_child(d.expr, dops[0], z))
        add(_val(replace_at(node.expr, d.path[base:], swapped)), INCORRECT,
            f"applies {_label(d.expr, paper)} before {_label(c, paper)} (wrong order)")
    return out


# ----------------------------------------------------------------------------- compact traces
def _match(c: Expr, t: Expr, path: tuple, out: list) -> tuple | None:
    """Record how line ``t`` rewrites ``c``; return None, or the first mismatching (c_sub, t_sub)."""
    if c == t:
        return None
    tt = type(t)
    if tt is Str:
        if type(c) is Int:
            return (c, t)
        out.append((path, "carry" if type(c) is Str else "reduce", c, t.value))
        return None
    if type(c) is not tt or tt is Int or tt is Str or not _same_fn(c, t):
        return (c, t)
    kc, kt = children(c), children(t)
    if len(kc) != len(kt):
        return (c, t)
    for k, (a, b) in enumerate(zip(kc, kt)):
        bad = _match(a, b, path + (k,), out)
        if bad is not None:
            return bad
    return None


def _reducible_paths(e: Expr, path: tuple = ()) -> set:
    out = {path} if _reducible(e) else set()
    for k, c in enumerate(children(e)):
        out |= _reducible_paths(c, path + (k,))
    return out


def _judge(p: _Problem, path: tuple, s: str, where: str, remaining: set, paper: bool) -> Classification | None:
    """Judge one rewrite of the node at ``path`` (in a trace without earlier errors) to value ``s``."""
    i = p.by_path.get(path)
    if i is None:
        return Classification(INCORRECT, f"{where}: replaces something that is not a sub-expression by {_q(s)}")
    node = p.nodes[i]
    if s == node.value:
        return None
    left = sum(1 for q in remaining if q[:len(path)] == path)
    if left <= 1:
        cands = _step_candidates(p, i, paper)
        if s in cands:
            cat, why = cands[s]
            return Classification(cat, f"{where}: {why}", i + 1)
        return Classification(ATOMIC, f"{where}: {_show(_step_expr(p, i), paper)} gives {_q(s)}, "
                                      f"expected {_q(node.value)}", i + 1)
    cands = _jump_candidates(p, i, paper, remaining)
    if s in cands:
        cat, why = cands[s]
        return Classification(cat, f"{where}: {why}", i + 1)
    first = i - node.span + 1
    while p.nodes[first].path not in remaining:
        first += 1
    return Classification(INCOMPLETE, f"{where}: skips {left} steps of {_show(node.expr, paper)} at once and "
                                      f"the value {_q(s)} is wrong (expected {_q(node.value)})", first + 1)


def _find_subtree(e: Expr, target: Expr, path: tuple = ()) -> tuple | None:
    """Path of the leftmost-innermost subtree of ``e`` equal to ``target`` (post-order), or None."""
    for k, c in enumerate(children(e)):
        found = _find_subtree(c, target, path + (k,))
        if found is not None:
            return found
    return path if e == target else None


def _as_rewrite_trace(lines: list[str], e0: Expr) -> list[str]:
    """A step trace (nested form) read as the rewrite trace the classifier reasons in: each line the
    whole expression with the steps so far replaced by their values.

    A step ``A="v"`` whose ``A`` is a sub-expression of the current expression becomes the current
    expression with that sub-expression replaced by ``"v"``; an ``A`` found nowhere becomes the lines
    ``A`` and ``"v"`` (a structural change, then a step). A line without a top-level ``=`` (a whole
    expression written out) passes through unchanged."""
    out: list[str] = []
    cur = e0
    for k, line in enumerate(lines):
        if line.startswith("{"):
            out += lines[k:]
            break
        i = top_level_eq(line)
        try:
            if i < 0:
                cur = parse_compact(line)
                out.append(line)
                continue
            lhs, rhs = parse_compact(line[:i]), parse_compact(line[i + 1:])
        except (UnsupportedCode, ValueError, RecursionError):
            out.append(line)  # the classifier's trace breaks off here
            continue
        if type(rhs) is not Str:
            out.append(line)
            continue
        path = _find_subtree(cur, lhs)
        if path is None:
            out += [render_compact(lhs, ""), render_compact(rhs, "")]
            cur = rhs
        else:
            cur = replace_at(cur, path, rhs)
            out.append(render_compact(cur, ""))
    return out


def _classify_compact(p: _Problem, text: str, found: bool, pred: str | None) -> Classification:
    lines = [chain_to_compact(ln.strip()) for ln in text.split("\n")]  # chain lines read as nested
    lines = _as_rewrite_trace([ln for ln in lines if ln], p.e0)
    cur = p.e0
    first: Classification | None = None
    in_context = 0
    n_trace = 0
    stop = ""
    for k, line in enumerate(lines, 1):
        if line.startswith("{"):
            break
        try:
            t = parse_compact(line)
        except (UnsupportedCode, ValueError, RecursionError):
            stop = f"; the trace breaks off at line {k} (not an expression)"
            break
        n_trace += 1
        reps: list = []
        bad = _match(cur, t, (), reps)
        if bad is not None:
            if first is None:
                first = Classification(INCORRECT, f"line {k} is not the previous line with sub-expressions replaced "
                                                  f"by values: {_show(bad[0], False)} became {_show(bad[1], False)}")
            cur = t
            continue
        remaining = _reducible_paths(cur)
        for path, kind, old, value in reps:
            if kind == "reduce" and path:
                in_context += 1
            if first is not None:
                continue
            if kind == "carry":
                first = Classification(INCORRECT, f"line {k} changes the value {_q(old.value)} to {_q(value)} "
                                                  "(a wrong value passed on)")
            else:
                first = _judge(p, path, value, f"line {k}", remaining, False)
        cur = t
    if in_context == 0 and len(p.nodes) > 1:
        if n_trace == 0:
            why = "no trace: it answers directly" if found else "no trace and no parseable answer"
        else:
            why = "never evaluates a sub-expression inside its context"
            if first is not None:
                why += f" ({first.reason})"
        return Classification(IGNORES, why + stop)
    if first is not None:
        return first
    if not found:
        return Classification(INCOMPLETE, "no parseable {\"output\": ...} answer" + stop)
    if type(cur) is Str:
        return Classification(INCORRECT, f"the answer {_q(pred)} is not the value its trace ends with "
                                         f"({_q(cur.value)})" + stop)
    for i, n in enumerate(p.nodes[:-1]):
        if pred == n.value:
            return Classification(INCOMPLETE, f"answers with the value of the inner sub-expression "
                                              f"{_show(n.expr, False)} ({_q(pred)}) while its last line still "
                                              f"holds calls: stops before applying every function" + stop, i + 2)
    remaining = _reducible_paths(cur)
    got = _judge(p, (), pred, "the answer", remaining, False)
    if got is None:  # cannot happen (a correct answer is Correct), kept for totality
        return Classification(INCOMPLETE, "the trace stops before every function is applied" + stop)
    return Classification(got.category, got.reason + stop, got.step)


# ----------------------------------------------------------------------------- free-text responses
_QUOTED = re.compile(r'"((?:[^"\\\n]|\\.){0,4000}?)"'
                     r"|(?<![A-Za-z0-9])'([^'\n]{0,4000}?)'(?![A-Za-z0-9])"
                     r"|`([^`\n]{0,4000}?)`"
                     r"|\u201c([^\u201d\n]{0,4000}?)\u201d")


def _quoted_strings(text: str) -> list[tuple[int, str]]:
    out = []
    for m in _QUOTED.finditer(text):
        if m.group(1) is not None:
            try:
                v = json.loads('"' + m.group(1) + '"')
            except ValueError:
                v = m.group(1)
        else:
            v = next(g for g in m.groups()[1:] if g is not None)
        out.append((m.start(), v))
    return out


def _find(text: str, v: str) -> int:
    """First position where ``text`` states ``v`` (quoted, or as a whole token if 3+ chars), else -1."""
    if v == "":
        hits = [text.find(f) for f in ('""', "''")]
    else:
        hits = [text.find(f) for f in (f'"{v}"', f"'{v}'", f"`{v}`", quote(v), f"\u201c{v}\u201d")]
        if len(v) >= 3:
            m = re.search(r"(?<![A-Za-z0-9])" + re.escape(v) + r"(?![A-Za-z0-9])", text)
            if m:
                hits.append(m.start())
    hits = [h for h in hits if h >= 0]
    return min(hits) if hits else -1


def _mention(text: str, e: Expr) -> int:
    t = type(e)
    if t is Call:
        m = re.search(rf"func_{e.fn}(?!\d)", text)
    elif t is Method:
        m = re.search(rf"\b{e.name}\b", text)
    else:
        m = re.search(r"\+|concat", text)
    return m.start() if m else -1


def _classify_paper(p: _Problem, text: str, found: bool, pred: str | None) -> Classification:
    cut = text.rfind('"output"')
    text = text[:cut] if cut >= 0 else text  # the reasoning, without the final answer object
    nodes = p.nodes
    root = len(nodes) - 1
    known = set(p.known)
    true_vals = {n.value for n in nodes}
    informative, pos = [], []
    for i in range(root):
        kid_vals = {v for v in _child_values(nodes[i].expr) if isinstance(v, str)}
        inf = nodes[i].value not in known and nodes[i].value not in kid_vals
        informative.append(inf)
        pos.append(_find(text, nodes[i].value) if inf else -1)
    direct = [q >= 0 for q in pos]
    reached: list[bool] = []
    for i in range(root):
        by_ancestor = any(a != root and direct[a] for a in _ancestors(p, i))
        kids = [p.by_path[nodes[i].path + (k,)] for k, c in enumerate(children(nodes[i].expr)) if _reducible(c)]
        reached.append(direct[i] or by_ancestor or (not informative[i] and all(reached[c] for c in kids)))
    any_stated = any(direct)
    if not found:
        if any_stated:
            return Classification(INCOMPLETE, "no parseable {\"output\": ...} answer after stating intermediate values")
        return Classification(IGNORES, "no parseable {\"output\": ...} answer and no intermediate value stated")
    for i in range(root):
        if informative[i] and pred == nodes[i].value:
            return Classification(INCOMPLETE, f"answers with the value of the inner sub-expression "
                                              f"{_show(nodes[i].expr, True)} ({_q(pred)}): stops before applying "
                                              "every function", i + 2)
    if p.ref not in known and _find(text, p.ref) >= 0:
        return Classification(INCORRECT, f"states the correct value {_q(p.ref)} but answers {_q(pred)}", root + 1)
    j = next((i for i in range(root) if not reached[i]), root)
    step = f"step {j + 1} ({_show(_step_expr(p, j), True)})"
    cands = _step_candidates(p, j, True)
    for v, (cat, why) in cands.items():
        if v not in known and v not in true_vals and len(v) >= 2 and _find(text, v) >= 0:
            return Classification(cat, f"{step}: {why} (and states {_q(v)})", j + 1)
    if any_stated:
        for v, (cat, why) in _jump_candidates(p, root, True).items():
            if v == pred and cat == INCORRECT:
                return Classification(cat, f"the answer {_q(pred)} {why}", root + 1)
        if pred in cands:
            return Classification(cands[pred][0], f"{step}: {cands[pred][1]} (the answer)", j + 1)
    code = p.code

    def new_after(start: int) -> list[str]:
        return [v for q, v in _quoted_strings(text)
                if q > start and len(v) >= 3 and v not in known and v not in true_vals and v != pred
                and v != "output" and v not in code]

    if not any_stated:
        at = _mention(text, nodes[j].expr)
        new = new_after(at) if at >= 0 else []
        if not new:
            return Classification(IGNORES, "states none of the intermediate values and computes nothing after "
                                           f"naming {_label(nodes[j].expr, True)}")
        return Classification(ATOMIC, f"{step}: states {_q(new[0])} where {_q(nodes[j].value)} is due", j + 1)
    if j == root:
        return Classification(ATOMIC, f"every intermediate value is stated; the final {step} gives {_q(pred)}, "
                                      f"expected {_q(p.ref)}", j + 1)
    new = new_after(max(pos))
    if new:
        return Classification(ATOMIC, f"{step}: its value {_q(nodes[j].value)} is never stated; the response goes "
                                      f"on with {_q(new[0])}", j + 1)
    return Classification(INCOMPLETE, f"states the values up to step {j} and answers {_q(pred)} without "
                                      f"computing {step}", j + 1)


# ----------------------------------------------------------------------------- public API
def classify_detailed(response: Any, ground_truth: Any, data_source: str | None = None,
                      style: str = "compact") -> Classification:
    """Category, reason and step of one response (see the module docstring for the rules).

    ``style``: ``"compact"`` (the tiny model's rewrite trace) or ``"paper"`` (free text).
    Total and deterministic: any ``response`` (garbage, None, huge) gets exactly one category.
    A malformed ``ground_truth`` (a data bug) raises ValueError naming the field.
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: use one of {', '.join(STYLES)}")
    if isinstance(data_source, bytes):
        data_source = data_source.decode("utf-8", "replace")
    if data_source is not None and not str(data_source).startswith(DATA_SOURCE_PREFIX):
        raise ValueError(f"failure modes are defined for the string task (data_source "
                         f"'{DATA_SOURCE_PREFIX}-...'), "
                         f"got {data_source!r}")
    p = _problem(ground_truth)
    text = response if isinstance(response, str) else ""
    score = compute_score(data_source or DATA_SOURCE_PREFIX, text, {"ref_output": p.ref})
    if score["acc"]:
        return Classification(CORRECT, "the answer equals ref_output")
    if not p.nodes:  # a bare literal / x (no generated problem has this)
        return Classification(IGNORES, "the program applies no function; the answer is wrong")
    found, pred = score["pred"] is not None, score["pred"]
    if style == "compact":
        return _classify_compact(p, text, found, pred)
    return _classify_paper(p, text, found, pred)


def classify(response: Any, ground_truth: Any, data_source: str | None = None, style: str = "compact") -> str:
    """The category (one of ``CATEGORIES``) of one response."""
    return classify_detailed(response, ground_truth, data_source, style).category


# ----------------------------------------------------------------------------- evaluation parquets
EVAL_COLUMNS = ["level", "prompt_index", "sample_index", "category", "reason", "step", "correct", "style",
                "data_source", "prompt", "response", "truth"]


def _field(obj, key, default=None):
    if isinstance(obj, dict):
        return obj.get(key, default)
    return default


def _prompt_text(prompt) -> str:
    if isinstance(prompt, str):
        return prompt
    try:
        return "\n".join(str(_field(m, "content", m)) for m in prompt)
    except TypeError:
        return str(prompt)


def row_style(row: dict) -> str:
    """A row's prompt style: extra_info.style if present, else 'paper' when the prompt shows code."""
    s = _field(row.get("extra_info"), "style")
    if s in STYLES:
        return s
    return "paper" if "main_solution" in _prompt_text(row.get("prompt", "")) else "compact"


def classify_eval(samples_df, level: int | None = 3, style: str | None = None, source: str | None = None):
    """One row per response of an evaluation parquet (string task rows only), model-agnostic.

    Columns: ``EVAL_COLUMNS`` (``prompt_index`` = row position in ``samples_df``, ``sample_index`` =
    position in its ``responses``; ``truth`` = the reference compact trace). ``level=None`` keeps
    every level; ``style=None`` reads each row's style (``row_style``). ``source`` (the file the rows
    come from) prefixes the error a malformed row raises.
    """
    import pandas as pd

    from fgx.tasks.contract import row_level

    for col in ("responses", "reward_model"):
        if col not in samples_df.columns:
            raise ValueError(f"evaluation samples lack the column {col!r}; pass the parquet written by "
                             "scripts/sample.py (results/eval/{model}/{split}.parquet)")
    out = []
    for pos, row in enumerate(samples_df.to_dict("records")):
        ds = row.get("data_source")
        if ds is not None and not str(ds).startswith(DATA_SOURCE_PREFIX):
            continue
        where = f"{source}: row {pos}" if source else f"row {pos}"
        lv = row_level(row.get("extra_info"), where)
        if level is not None and lv != level:
            continue
        gt = _field(row["reward_model"], "ground_truth")
        if gt is None:
            raise ValueError(f"{where}: reward_model.ground_truth is missing")
        st = style or row_style(row)
        try:
            truth = "\n".join(truth_trace(gt))
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        prompt = _prompt_text(row.get("prompt", ""))
        responses = row["responses"]
        for k, resp in enumerate(list(responses) if responses is not None else []):
            c = classify_detailed(resp, gt, None, st)
            out.append({"level": lv, "prompt_index": pos, "sample_index": k, "category": c.category,
                        "reason": c.reason, "step": c.step, "correct": c.category == CORRECT, "style": st,
                        "data_source": ds, "prompt": writable_text(prompt),
                        "response": writable_text(resp) if isinstance(resp, str) else "",
                        "truth": writable_text(truth)})
    df = pd.DataFrame(out, columns=EVAL_COLUMNS)
    df["step"] = df["step"].astype("Int64")
    return df
