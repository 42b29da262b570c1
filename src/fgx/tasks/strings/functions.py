"""The 25 atomic string functions (fast versions), their names, signatures and sets.

Index N is the ``func_N`` a prompt shows. Behaviour follows upstream PRIME-RL/RL-Compositionality
(``examples/data_preprocess/string_manipulation_*``); ``display.py`` holds the literal definitions
a Stage-1 prompt prints, and the tests check both agree on edge cases and random inputs.

Closed forms used here (all proven equal to the searches they replace, see the tests):
- backchain_add_digit(s, d): the depth-first search tries ``t + "1"`` first, which always holds a
  digit, so for any d != 0 the answer is ``s + "1"`` unless s already holds a digit; for d == 0 it
  is s.
- backchain_palindrome(s, d): ``s + s[::-1]`` is always a palindrome, so at most one step happens.
- while_rotate(s, n): n single left rotations = rotation by n mod len(s) (none for n <= 0).

Upstream difference (not reproduced): upstream's recursive_reverse / recursive_interlace recurse
once per character and raise RecursionError on strings of roughly 1000+ characters, which made
its generator silently drop such programs; here they are plain reversal / interlacing (as the
reference specifies), and run-away sizes are bounded by the evaluator's length cap instead.
"""

from __future__ import annotations

from itertools import groupby
from math import gcd
from typing import Callable

NAMES: tuple[str, ...] = (
    "deterministic_shuffle", "repeat_str", "remove_vowels", "sort_chars", "reverse_words",
    "add_prefix", "add_suffix", "interlace_str", "rotate_str", "mirror_str",
    "alternate_case", "shift_chars", "vowel_to_number", "insert_separator", "duplicate_every_char",
    "fancy_brackets", "compress_repeats", "recursive_reverse", "loop_concat", "while_rotate",
    "recursive_interlace", "loop_filter_nonalpha", "verify_even_length", "backchain_add_digit",
    "backchain_palindrome",
)
NUM_FUNCS = len(NAMES)
INDEX = {name: i for i, name in enumerate(NAMES)}

TRAIN_FUNCS: frozenset[int] = frozenset({1, 3, 4, 5, 9, 11, 13, 15, 17, 19, 20, 22, 23})
EVAL_FUNCS: frozenset[int] = frozenset(range(NUM_FUNCS)) - TRAIN_FUNCS
ALL_FUNCS: frozenset[int] = frozenset(range(NUM_FUNCS))

# Generator pools in upstream's list order (the order matters for rng.choice reproducibility;
# note 19 before 18 in the parameterised list, as upstream writes it).
NO_PARAM_ORDER: tuple[int, ...] = (0, 2, 3, 4, 9, 10, 12, 14, 15, 16, 17, 21, 22)
PARAM_ORDER: tuple[int, ...] = (1, 5, 6, 8, 11, 13, 19, 18, 23, 24)
BINARY_FUNCS: tuple[int, ...] = (7, 20)
BUILTIN_METHODS: tuple[str, ...] = ("upper", "lower", "capitalize", "swapcase")

# Argument kinds per function: "s" = string operand (an expression), "i" = int parameter,
# "p" = string parameter (a literal in generated code, any string expression is accepted).
SIGNATURES: dict[int, str] = {i: "s" for i in NO_PARAM_ORDER}
SIGNATURES.update({1: "si", 5: "sp", 6: "sp", 8: "si", 11: "si", 13: "sp", 18: "si", 19: "si",
                   23: "si", 24: "si", 7: "ss", 20: "ss"})

_VOWELS_DELETE = str.maketrans("", "", "aeiouAEIOU")
_VOWEL_DIGITS = str.maketrans("aeiouAEIOU", "1234512345")
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_SHIFT_TABLES = [
    str.maketrans(_LOWER + _UPPER, _LOWER[k:] + _LOWER[:k] + _UPPER[k:] + _UPPER[:k]) for k in range(26)
]


def deterministic_shuffle(s: str) -> str:
    n = len(s)
    if n == 0:
        return s
    m = 3
    while gcd(m, n) != 1:
        m += 2
    return "".join([s[(i * m) % n] for i in range(n)])


def repeat_str(s: str, n: int) -> str:
    return s * n


def remove_vowels(s: str) -> str:
    return s.translate(_VOWELS_DELETE)


def sort_chars(s: str) -> str:
    return "".join(sorted(s))


def reverse_words(s: str) -> str:
    return " ".join(s.split()[::-1])


def add_prefix(s: str, pre: str) -> str:
    return pre + s


def add_suffix(s: str, suf: str) -> str:
    return s + suf


def interlace_str(a: str, b: str) -> str:
    k = min(len(a), len(b))
    return "".join([a[i] + b[i] for i in range(k)]) + a[k:] + b[k:]


def rotate_str(s: str, n: int) -> str:
    if not s:
        return s
    n %= len(s)
    return s[n:] + s[:n]


def mirror_str(s: str) -> str:
    return s + s[::-1]


def alternate_case(s: str) -> str:
    return "".join([c.upper() if i % 2 else c.lower() for i, c in enumerate(s)])


def shift_chars(s: str, k: int) -> str:
    return s.translate(_SHIFT_TABLES[k % 26])


def vowel_to_number(s: str) -> str:
    return s.translate(_VOWEL_DIGITS)


def insert_separator(s: str, sep: str) -> str:
    return sep.join(s)


def duplicate_every_char(s: str) -> str:
    return "".join([c + c for c in s])


def fancy_brackets(s: str) -> str:
    return "".join(["«" + c + "»" for c in s])


def compress_repeats(s: str) -> str:
    return "".join([c for c, _ in groupby(s)])


def recursive_reverse(s: str) -> str:
    return s[::-1]


def loop_concat(s: str, n: int) -> str:
    return s * n


def while_rotate(s: str, n: int) -> str:
    if not s or n <= 0:
        return s
    n %= len(s)
    return s[n:] + s[:n]


def recursive_interlace(a: str, b: str) -> str:
    return interlace_str(a, b)


def loop_filter_nonalpha(s: str) -> str:
    return "".join([c for c in s if c.isalpha()])


def verify_even_length(s: str) -> str:
    return s if len(s) % 2 == 0 else s[:-1]


def backchain_add_digit(s: str, depth: int) -> str:
    if depth == 0 or any(c.isdigit() for c in s):
        return s
    return s + "1"


def backchain_palindrome(s: str, depth: int) -> str:
    r = s[::-1]
    if s == r or depth <= 0:
        return s
    return s + r


FUNCS: tuple[Callable[..., str], ...] = tuple(globals()[name] for name in NAMES)


# Helper functions: made-up one-argument string functions outside the 25, written ``g0(...)`` ..
# ``g5(...)`` in compact text and code. Not part of the paper's task: only the tiny model's
# ``helper_call`` / ``helper_context`` pretraining priors nest them, as its stand-in for the general knowledge of nested
# calls of arbitrary named functions that a pretrained LLM brings. None equals one of the 25
# (tests check it), so no composition of the task's functions is shown.
def _drop_first(s: str) -> str:
    return s[1:] if len(s) > 1 else s


def _drop_last(s: str) -> str:
    return s[:-1] if len(s) > 1 else s


def _append_first(s: str) -> str:
    return s + s[:1]


def _prepend_last(s: str) -> str:
    return s[-1:] + s


def _swap_ends(s: str) -> str:
    return s[-1] + s[1:-1] + s[0] if len(s) > 1 else s


def _every_other(s: str) -> str:
    return s[::2]


HELPERS: dict[str, Callable[[str], str]] = {
    "g0": _drop_first, "g1": _drop_last, "g2": _append_first,
    "g3": _prepend_last, "g4": _swap_ends, "g5": _every_other,
}


def output_len_bound(fn: int, args: tuple) -> int:
    """A cheap upper bound on the result length, checked before computing run-away sizes."""
    s = args[0]
    if fn in (1, 18):
        return len(s) * max(args[1], 0)
    if fn == 13:
        return len(s) + max(len(s) - 1, 0) * len(args[1])
    # Every other function grows its input by a small constant factor (case mapping can
    # triple a character, fancy_brackets triples) plus the other argument.
    return 3 * sum(len(a) for a in args if isinstance(a, str)) + 1
