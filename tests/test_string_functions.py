"""String task: the 25 functions and the definitions Stage-1 prompts print."""

import random

import pytest

from fgx.tasks import strings as S
from fgx.tasks.strings import display, functions as F

# ----------------------------------------------------------------------------- the 25 functions
CASES = [
    (0, ("",), ""), (0, ("a",), "a"), (0, ("abc",), "acb"), (0, ("abcd",), "adcb"),
    (0, ("abcdef",), "afedcb"), (0, ("abcdefghijklmno",), "ahognfmeldkcjbi"),  # m = 5, 5, 7
    (1, ("ab", 3), "ababab"), (1, ("ab", 0), ""), (1, ("ab", -2), ""),
    (2, ("Education",), "dctn"), (2, ("",), ""),
    (3, ("dcBa",), "Bacd"), (3, ("«b»a",), "ab«»"),
    (4, ("  hello   big\tworld ",), "world big hello"), (4, ("abc",), "abc"), (4, ("   ",), ""),
    (5, ("cd", "ab"), "abcd"), (6, ("ab", "cd"), "abcd"),
    (7, ("abc", "12345"), "a1b2c345"), (7, ("", "xy"), "xy"), (7, ("xyz", ""), "xyz"),
    (8, ("abcde", 2), "cdeab"), (8, ("abc", 7), "bca"), (8, ("", 3), ""), (8, ("abc", -1), "cab"),
    (8, ("abc", 3), "abc"),
    (9, ("ab",), "abba"), (9, ("",), ""),
    (10, ("abcd",), "aBcD"), (10, ("ABCDE",), "aBcDe"), (10, ("a1b",), "a1b"),
    (11, ("xyz", 3), "abc"), (11, ("XyZ-1", 1), "YzA-1"), (11, ("abc", 27), "bcd"), (11, ("é«", 1), "é«"),
    (11, ("abc", -1), "zab"),
    (12, ("AEIOUaeiouxyz",), "1234512345xyz"),
    (13, ("abc", "-"), "a-b-c"), (13, ("", "-"), ""), (13, ("a", "|"), "a"),
    (14, ("ab",), "aabb"), (15, ("ab",), "«a»«b»"), (15, ("",), ""),
    (16, ("aaabccdaa",), "abcda"), (16, ("",), ""), (16, ("aAa",), "aAa"),
    (17, ("abc",), "cba"), (17, ("",), ""),
    (18, ("ab", 3), "ababab"), (18, ("ab", 0), ""), (18, ("ab", -1), ""),
    (19, ("abcde", 2), "cdeab"), (19, ("abc", 5), "cab"), (19, ("", 3), ""), (19, ("abc", 0), "abc"),
    (19, ("abc", -2), "abc"),
    (20, ("abc", "12345"), "a1b2c345"), (20, ("", "xy"), "xy"), (20, ("xyz", ""), "xyz"),
    (21, ("a1-b_Cé2«",), "abCé"),
    (22, ("abc",), "ab"), (22, ("abcd",), "abcd"), (22, ("",), ""), (22, ("a",), ""),
    (23, ("abc", 1), "abc1"), (23, ("ab3", 2), "ab3"), (23, ("abc", 0), "abc"), (23, ("", 1), "1"),
    (23, ("abc", -1), "abc1"), (23, ("a²", 1), "a²"),
    (24, ("abc", 1), "abccba"), (24, ("aba", 3), "aba"), (24, ("abc", 0), "abc"), (24, ("", 2), ""),
    (24, ("ab", 3), "abba"), (24, ("ab", -1), "ab"),
]


@pytest.mark.parametrize("fn,args,expected", CASES)
def test_function_edge_cases(fn, args, expected):
    assert F.FUNCS[fn](*args) == expected
    assert getattr(display, f"func_{fn}")(*args) == expected


def test_names_sets_and_pools():
    assert len(F.NAMES) == 25 and F.NAMES[15] == "fancy_brackets" and F.NAMES[24] == "backchain_palindrome"
    assert F.TRAIN_FUNCS == {1, 3, 4, 5, 9, 11, 13, 15, 17, 19, 20, 22, 23}
    assert F.EVAL_FUNCS == set(range(25)) - F.TRAIN_FUNCS and len(F.EVAL_FUNCS) == 12
    assert set(F.NO_PARAM_ORDER) | set(F.PARAM_ORDER) | {7, 20} == set(range(25))
    assert F.PARAM_ORDER == (1, 5, 6, 8, 11, 13, 19, 18, 23, 24)


def _random_text(rng, n):
    return "".join(rng.choice("abcAEIxyzou019 -_|«»é²") for _ in range(n))


def test_fast_functions_match_displayed_definitions():
    rng = random.Random(7)
    assert len(F.FUNCS) == len(F.SIGNATURES) == 25  # range(25) below covers every function
    for _ in range(400):
        s, t = _random_text(rng, rng.randint(0, 13)), _random_text(rng, rng.randint(0, 6))
        for fn in range(25):
            sig = F.SIGNATURES[fn]
            if sig == "s":
                args = (s,)
            elif sig == "si":
                args = (s, rng.randint(-4, 30))
            else:
                args = (s, t)
            assert F.FUNCS[fn](*args) == getattr(display, f"func_{fn}")(*args), (fn, args)


def test_display_sources_are_self_contained_and_named():
    for fn in range(25):
        src = S.definition_source(fn)
        assert src.startswith(f"def func_{fn}(") and src.endswith("\n")
        assert "fgx" not in src and "_VOWEL" not in src
    assert "from math import gcd" in S.definition_source(0)
    assert "func_17(s[1:])" in S.definition_source(17)  # recursion shown under the prompt name
