"""Problem generator, prompts and verl rows of the string task.

The random process mirrors upstream's ``random_expr`` / ``generate_feasible_input`` call for call
(same draw order, same pools in the same order, one ``random.Random(seed)`` stream across the
levels in increasing order, dedup on the expression text after the input draw), so a seed gives
the same expressions upstream's scripts would draw from ``random.seed(seed)`` as long as no value
hits a length cap. fgx additions: an optional ``max_value_len`` (reject programs with a longer
intermediate value), a hard cap (``expr.DEFAULT_MAX_LEN``), an ``exclude`` set of expressions
that must not be generated (e.g. another split's), the compact style (chain prompts, step traces:
:mod:`fgx.tasks.strings.trace`) and the tiny model's pretraining sets (the ``prior`` grammar,
carried inputs, first-step problems).
"""

from __future__ import annotations

import hashlib
import inspect
import random
import string
from dataclasses import dataclass
from typing import Iterable

from fgx.settings import STYLES

from . import display
from . import functions as F
from .expr import (DEFAULT_MAX_LEN, X, Call, Concat, Expr, Method, Str, Int, Var, ValueTooLong, children, evaluate,
                   functions_used, main_solution_code, reductions, render_chain, render_code, with_child)
from .ground_truth import ground_truth
from .shortcuts import shortcut_kinds
from .trace import solution_text

DATA_SOURCE_PREFIX = "codeio"
LOWER = string.ascii_lowercase
SPLITS = ("train", "test")

# Upstream's forward instruction (a protocol string: kept word for word).
FORWARD_PROMPT = (
    "You are given a code:\n\n{code}\n\nCan you predict the output of `main_solution(\"{input}\")` "
    "without writing any code? Please reason and put your final answer in the following json format: "
    "{{\"output\": <your output>}}, where <your output> should be the final string."
)


def data_source(level: int) -> str:
    return f"{DATA_SOURCE_PREFIX}-forward-incomplete-depth{level}"


def function_set(stage: int, split: str) -> frozenset[int]:
    """Stage 1: all 25 functions; Stage 2: train functions (train) / held-out eval functions (test)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: use one of {', '.join(SPLITS)}")
    if stage == 1:
        return F.ALL_FUNCS
    if stage == 2:
        return F.TRAIN_FUNCS if split == "train" else F.EVAL_FUNCS
    raise ValueError(f"unknown stage {stage!r}: use 1 (definitions shown) or 2 (main_solution only)")


class _Retry(Exception):
    """Upstream skips a draw that fails (e.g. an empty pool); so do we."""


class ExprSampler:
    """Draws expressions exactly as upstream's ``random_expr`` does, for one function set."""

    def __init__(self, funcs: Iterable[int]):
        funcs = frozenset(funcs)
        unknown = sorted(f for f in funcs if not 0 <= f < F.NUM_FUNCS)
        if unknown:
            raise ValueError(f"unknown function indices {unknown}: valid are 0..{F.NUM_FUNCS - 1}")
        self.funcs = funcs
        self.no_param = [f for f in F.NO_PARAM_ORDER if f in funcs]
        self.param = [f for f in F.PARAM_ORDER if f in funcs]
        self.interlace = 7 if 7 in funcs else 20

    def expr(self, rng: random.Random, d: int) -> Expr:
        if d == 0:
            if rng.random() < 0.5:
                return X
            return Str("".join(rng.choices(LOWER, k=rng.randint(3, 6))))
        if rng.random() < 0.2:  # binary
            left = self.expr(rng, d - 1)
            right = self.expr(rng, d - 1)
            if rng.random() < 0.5:
                return Concat(left, right)
            return Call(self.interlace, (left, right))
        if rng.random() < 0.02:  # builtin str method
            op = rng.choice(F.BUILTIN_METHODS)
            return Method(op, self.expr(rng, d - 1))
        if rng.random() < 0.5:
            if not self.no_param:
                raise _Retry
            return self.call(rng, rng.choice(self.no_param), self.expr(rng, d - 1))
        if not self.param:
            raise _Retry
        op = rng.choice(self.param)
        return self.call(rng, op, self.expr(rng, d - 1))

    @staticmethod
    def call(rng: random.Random, op: int, sub: Expr) -> Call:
        """``func_op(sub)`` with its parameter (if any) drawn as upstream draws it."""
        if op in F.NO_PARAM_ORDER:
            return Call(op, (sub,))
        if op in (1, 18):
            p = Int(rng.randint(2, 4))
        elif op in (5, 6):
            p = Str("".join(rng.choices(LOWER, k=rng.randint(2, 4))))
        elif op in (8, 19, 23, 24):
            p = Int(rng.randint(1, 3))
        elif op == 11:
            p = Int(rng.randint(1, 5))
        else:  # 13 insert_separator
            p = Str(rng.choice(["-", "_", "|"]))
        return Call(op, (sub, p))


class BuiltinSampler:
    """Compositions of the builtin str methods, the helper functions ``g0``..``g5``
    (``functions.HELPERS``) and concatenation, with no custom function: ``g3(upper(g0("abc")))``.

    Not part of the paper's task: the contexts of the tiny model's pretraining prior."""

    METHODS: tuple[str, ...] = F.BUILTIN_METHODS + tuple(F.HELPERS)

    def expr(self, rng: random.Random, d: int) -> Expr:
        if d == 0:
            if rng.random() < 0.5:
                return X
            return Str("".join(rng.choices(LOWER, k=rng.randint(3, 6))))
        if rng.random() < 0.3:
            return Concat(self.expr(rng, d - 1), self.expr(rng, d - 1))
        return Method(rng.choice(self.METHODS), self.expr(rng, d - 1))


class PriorSampler(ExprSampler):
    """Exactly one custom function inside a :class:`BuiltinSampler` expression: at the root
    (``f17(upper("cba"))``) or inside builtin and helper contexts (``g0(f17(upper(x)))``,
    ``(f3(x)+"ab")``).

    Not part of the paper's task: the tiny model's pretraining prior, its stand-in for the general
    knowledge of how to evaluate nested code step by step that a pretrained LLM brings. A custom
    function inside another custom function (the test set's composition) never appears."""

    def __init__(self, funcs: Iterable[int]):
        super().__init__(funcs)
        self._builtins = BuiltinSampler()

    def expr(self, rng: random.Random, d: int) -> Expr:
        if d == 0:
            return self._builtins.expr(rng, 0)
        return self._call_below(rng, d, rng.randrange(d))

    def _call_below(self, rng: random.Random, d: int, wrappers: int) -> Expr:
        """A depth-``d`` expression whose custom call sits under ``wrappers`` builtin nodes."""
        if wrappers == 0:
            return self.call(rng, rng.choice(self.no_param + self.param), self._builtins.expr(rng, d - 1))
        inner = self._call_below(rng, d - 1, wrappers - 1)
        if rng.random() < 0.3:
            other = self._builtins.expr(rng, d - 1)
            return Concat(inner, other) if rng.random() < 0.5 else Concat(other, inner)
        return Method(rng.choice(self._builtins.METHODS), inner)


# upstream: the paper's expressions; prior: the tiny model's pretraining prior
GRAMMARS = {"upstream": ExprSampler, "prior": PriorSampler}
PARTITIONS = ("none", "train", "test", "val")
INPUTS = ("lowercase", "carried")


def _bucket(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "little")


def in_partition(e: Expr, key: str, partition: str) -> bool:
    """Disjoint splits without reading each other's files (so regenerating one split never
    invalidates another): expressions are assigned by a hash of their code. ``val`` takes
    hash % 8 == 0, ``test`` the rest; expressions that call no custom function (the only
    ones the train and eval function sets can share) go to train when the hash is odd and to
    test/val when it is even. ``none`` (Stage 1, pretraining) takes everything."""
    if partition == "none":
        return True
    h = _bucket(key)
    shared = not functions_used(e)
    if partition == "train":
        return not (shared and h % 2 == 0)
    if shared and h % 2 == 1:
        return False
    return (h % 8 == 0) if partition == "val" else (h % 8 != 0)


def random_input(rng: random.Random, min_len: int = 3, max_len: int = 10) -> str:
    return "".join(rng.choices(LOWER, k=rng.randint(min_len, max_len)))


# The values inside a composition hold upper-case letters (alternate_case, upper, swapcase, ...)
# and digits (vowel_to_number, backchain_add_digit), which upstream's lowercase inputs never do.
_MIXED_ALPHABETS = (string.ascii_uppercase, string.ascii_letters, string.ascii_letters + string.digits)


def mixed_input(rng: random.Random, max_len: int) -> str:
    """3..max_len characters from one of: upper-case letters, letters of both cases, letters and digits."""
    return "".join(rng.choices(rng.choice(_MIXED_ALPHABETS), k=rng.randint(3, max(3, max_len))))


def with_first_leaf(e: Expr, value: str) -> Expr:
    """``e`` with its leftmost string leaf (``x`` or a literal: the string its first reduction step
    reads, the head of a chain) replaced by the literal ``value``; int parameters are not leaves here."""
    if type(e) in (Var, Str):
        return Str(value)
    for i, c in enumerate(children(e)):
        if type(c) is not Int:
            return with_child(e, i, with_first_leaf(c, value))
    raise ValueError(f"{render_code(e)} has no string leaf")


def carried_input(rng: random.Random, max_len: int, sampler) -> str:
    """A value as a composition carries it: a lowercase or :func:`mixed_input` string passed through
    one or two random calls of ``sampler`` (the 25 functions), 2..max_len characters. Only the
    string is kept; the problem it feeds stays a Level-1 problem."""
    while True:
        base = random_input(rng) if rng.random() < 0.5 else mixed_input(rng, max_len)
        try:
            # the drawn calls read ``base`` (not one of the grammar's own literals), so the value is
            # base's image and as varied as the bases are
            value = evaluate(with_first_leaf(sampler.expr(rng, rng.randint(1, 2)), base), base, max_len)
        except (_Retry, ValueTooLong):
            continue
        if 2 <= len(value) <= max_len:
            return value


@dataclass(frozen=True)
class Problem:
    expr: Expr
    x: str
    output: str
    level: int

    @property
    def code(self) -> str:
        return render_code(self.expr)


def _per_level(num: int, levels: list[int], shares: list[int] | None = None) -> list[int]:
    """Problems per level: ``num`` split in proportion to ``shares`` (default: evenly), rounded down,
    the remainder one each to the lowest levels."""
    shares = [1] * len(levels) if shares is None else list(shares)
    if len(shares) != len(levels) or any(not isinstance(s, int) or isinstance(s, bool) or s < 1 for s in shares):
        raise ValueError(f"level_shares must be {len(levels)} positive integers, one per level "
                         f"{levels[0]}..{levels[-1]}; got {shares}")
    counts = [num * s // sum(shares) for s in shares]
    for i in range(num - sum(counts)):
        counts[i] += 1
    return counts


def generate_problems(*, stage: int, split: str, min_level: int, max_level: int, num: int, seed: int,
                      max_value_len: int | None = None, funcs: Iterable[int] | None = None,
                      exclude: Iterable[str] = (), max_attempts_per_problem: int = 1000,
                      progress: bool = False, grammar: str = "upstream", partition: str = "none",
                      inputs: str = "lowercase", level_shares: list[int] | None = None,
                      full_trace_only: bool = False) -> list[Problem]:
    """Draw ``num`` unique problems over levels min_level..max_level, split evenly or, with
    ``level_shares`` (one positive integer per level), in those proportions.

    ``grammar``: ``upstream`` (the paper's expressions) or ``prior`` (:class:`PriorSampler`).
    ``inputs``: ``lowercase`` (upstream: 3..10 lowercase letters) or ``carried`` (the tiny model's
    pretraining: every other problem takes a :func:`carried_input`, a value one or two of the 25
    functions produce, the strings a composition's later steps read). With ``carried`` every
    problem's first string leaf is the drawn input (the even ones upstream's 3..10 lowercase
    letters): upstream's grammar gives a leaf ``x`` or a literal of 3..6 letters at equal odds, and
    with unique expression texts a Level-1 set holds each ``f(x)`` once, so without this nearly
    every Level-1 problem would read a 3..6-letter lowercase literal.
    ``exclude``: expression texts (``render_code`` form) that must not be produced.
    ``max_value_len``: reject programs any of whose values (input, literals and every
    intermediate result) is longer.
    ``full_trace_only``: keep only problems whose answer no one-step wrong trace reaches
    (:mod:`fgx.tasks.strings.shortcuts`, under the same value cap): a right answer needs every step.
    Raises ValueError when a level cannot be filled within
    ``max_attempts_per_problem * count`` draws.
    """
    if not (isinstance(min_level, int) and isinstance(max_level, int) and 1 <= min_level <= max_level):
        raise ValueError(f"need 1 <= min_level <= max_level, got min_level={min_level}, max_level={max_level}")
    if num < 0:
        raise ValueError(f"num must be >= 0, got {num}")
    if max_value_len is not None and max_value_len < 3:
        raise ValueError(f"max_value_len must be >= 3 (inputs have 3..10 letters), got {max_value_len}")
    if partition not in PARTITIONS:
        raise ValueError(f"unknown partition {partition!r}: use one of {', '.join(PARTITIONS)}")
    if grammar not in GRAMMARS:
        raise ValueError(f"unknown grammar {grammar!r}: use one of {', '.join(GRAMMARS)}")
    if inputs not in INPUTS:
        raise ValueError(f"unknown inputs {inputs!r}: use one of {', '.join(INPUTS)}")
    sampler = GRAMMARS[grammar](function_set(stage, split) if funcs is None else funcs)
    cap = DEFAULT_MAX_LEN if max_value_len is None else min(max_value_len, DEFAULT_MAX_LEN)
    # carried inputs come from all 25 functions (a Level-1 problem's input, whatever its split)
    carrier = ExprSampler(range(F.NUM_FUNCS)) if inputs == "carried" else None
    # Upstream tries up to 100 inputs per program (all succeed at once without a cap); with a
    # small cap a too-long program fails on every input, so give up on it sooner.
    input_attempts = 100 if max_value_len is None else 5
    rng = random.Random(seed)
    seen = set(exclude)
    levels = list(range(min_level, max_level + 1))
    counts = _per_level(num, levels, level_shares)
    out: list[Problem] = []
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=num, desc="problems", mininterval=1.0)
    for level, count in zip(levels, counts):
        made, attempts, limit = 0, 0, max(max_attempts_per_problem * count, 1000)
        while made < count:
            attempts += 1
            if attempts > limit:
                raise ValueError(
                    f"level {level}: only {made}/{count} unique problems after {limit} draws "
                    f"(stage {stage}, split {split}, max_value_len {max_value_len}); ask for fewer "
                    f"problems at this level, or raise max_value_len")
            try:
                e = sampler.expr(rng, level)
            except _Retry:
                continue
            x = output = None
            other = inputs != "lowercase" and made % 2 == 1
            for _ in range(input_attempts):
                cand = carried_input(rng, cap, carrier) if other else random_input(rng)
                drawn = e if inputs == "lowercase" else with_first_leaf(e, cand)
                try:
                    output = evaluate(drawn, cand, cap)
                except ValueTooLong:
                    continue
                x, e = cand, drawn
                break
            if x is None:
                continue
            key = render_code(e)
            if key in seen or not in_partition(e, key, partition):
                continue
            if full_trace_only and shortcut_kinds(e, x, output, max_value_len):
                continue
            seen.add(key)
            out.append(Problem(e, x, output, level))
            made += 1
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return out


# ----------------------------------------------------------------------------- prompts and rows
_DEFINITIONS = {i: inspect.getsource(getattr(display, f"func_{i}")) for i in range(F.NUM_FUNCS)}


def definition_source(fn: int) -> str:
    """The definition a Stage-1 prompt prints for ``func_<fn>``."""
    return _DEFINITIONS[fn]


def program_code(e: Expr, stage: int) -> str:
    """Upstream's ``ref_code``: Stage 1 prints the used functions' definitions above main_solution."""
    main = main_solution_code(e)
    if stage == 1:
        # As upstream: definitions joined by blank lines, then "\n\n" + main_solution (so a
        # program without custom functions starts with two newlines, exactly as upstream's did).
        # Upstream listed the definitions in set order; fgx uses index order (deterministic).
        return "\n\n".join(_DEFINITIONS[i] for i in sorted(functions_used(e))) + "\n\n" + main
    return main


def paper_prompt(code: str, x: str) -> str:
    return FORWARD_PROMPT.format(code=code, input=x)


def compact_prompt(e: Expr, x: str) -> str:
    return render_chain(e, x) + "\n"


# A compact prompt that starts with this mark asks for the expression's first reduction step only,
# answered as that step's own Level-1 problem would be (``>"dcba".f3().f17()`` -> ``"dcba".f3()="abcd"``
# / ``{"output": "abcd"}``). Not part of the paper's task: the tiny model's pretraining stand-in for an
# LLM computing a call wherever it sits in longer code, without ever showing a composition evaluated.
FIRST_STEP_MARK = ">"


def make_row(p: Problem, *, stage: int, split: str, style: str, index: int, first_step: bool = False,
             marked: bool = True) -> dict:
    """One verl-schema row; compact rows carry their reference answer in ``extra_info.solution``
    (:func:`fgx.tasks.strings.trace.solution_text`).

    ``first_step`` (compact style, Level >= 2): the prompt is the expression after
    :data:`FIRST_STEP_MARK`, and the row asks for its first reduction step only: the solution is
    that step's Level-1 trace and ``ref_output`` its value (``ref_code`` stays the whole expression,
    which the leakage check and ``--exclude`` compare); ``extra_info.task`` says ``first_step``.
    ``marked=False`` leaves the mark out: the prompt is an ordinary composition's, answered after its
    first step (``extra_info.task`` says ``first_step_unmarked``)."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: use one of {', '.join(STYLES)}")
    if first_step and (style != "compact" or p.level < 2):
        raise ValueError(f"first-step problems are compact-style compositions (Level >= 2); got style {style!r}, "
                         f"Level {p.level}")
    code = program_code(p.expr, stage)
    output = p.output
    if style == "paper":
        content, solution = paper_prompt(code, p.x), None
    else:
        content = compact_prompt(p.expr, p.x)
        solution = solution_text(p.expr, p.x)
        if first_step:
            redex, output = reductions(p.expr, p.x)[0]
            content = (FIRST_STEP_MARK if marked else "") + content
            solution = solution_text(redex, p.x)
    if style == "paper":
        # upstream's extra_info, field for field, so fgx's rows and upstream's load together
        extra = {"index": index, "split": split, "depth": p.level}
    else:
        extra = {"depth": p.level, "index": index, "split": split, "solution": solution, "stage": stage,
                 "style": style}
        if first_step:
            extra["task"] = "first_step" if marked else "first_step_unmarked"
    return {
        "data_source": data_source(p.level),
        "prompt": [{"role": "user", "content": content}],
        "ability": "reasoning",
        "reward_model": {"style": "rule", "ground_truth": ground_truth(p.x, output, code)},
        "extra_info": extra,
    }


def generate(*, stage: int, split: str, min_level: int, max_level: int, num: int, seed: int,
             style: str = "paper", max_value_len: int | None = None, funcs: Iterable[int] | None = None,
             exclude: Iterable[str] = (), progress: bool = False, grammar: str = "upstream",
             partition: str = "none", inputs: str = "lowercase", first_step: bool = False,
             first_step_unmarked: float = 0.0, level_shares: list[int] | None = None,
             full_trace_only: bool = False):
    """Generate a verl-schema DataFrame (one row per problem): ``grammar``, ``inputs`` and the rest
    as :func:`generate_problems`; ``first_step`` asks each problem for its first reduction step only
    (see :func:`make_row`), and ``first_step_unmarked`` is the share of those rows, drawn with their
    own seeded stream, whose prompt goes without the mark."""
    import pandas as pd

    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: use one of {', '.join(STYLES)}")
    if not 0.0 <= first_step_unmarked <= 1.0:
        raise ValueError(f"first_step_unmarked is a share of the rows, 0..1; got {first_step_unmarked}")
    if first_step_unmarked and not first_step:
        raise ValueError("first_step_unmarked leaves the mark out of first-step problems: it needs first_step")
    problems = generate_problems(stage=stage, split=split, min_level=min_level, max_level=max_level,
                                 num=num, seed=seed, max_value_len=max_value_len, funcs=funcs,
                                 exclude=exclude, progress=progress, grammar=grammar, partition=partition,
                                 inputs=inputs, level_shares=level_shares, full_trace_only=full_trace_only)
    # a stream of its own, so the expressions (and the marked set at share 0) stay those of the plain split
    unmarked_rng = random.Random(f"{seed}/first_step_unmarked")
    rows = [make_row(p, stage=stage, split=split, style=style, index=i, first_step=first_step,
                     marked=not (unmarked_rng.random() < first_step_unmarked))
            for i, p in enumerate(problems)]
    return pd.DataFrame(rows, columns=["data_source", "prompt", "ability", "reward_model", "extra_info"])
