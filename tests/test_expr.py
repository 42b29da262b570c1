"""String task: expressions parsed, rendered (code, chain, nested) and executed without eval."""

import pytest

from fgx.tasks import strings as S
from fgx.tasks.strings.expr import Call, Concat, Int, Method, Str, UnsupportedCode, ValueTooLong, X

TRACE_EXPR = Concat(Call(1, (Call(17, (X,)), Int(2))), Method("upper", Call(9, (Str("ab"),))))

def test_parse_render_round_trip_and_compact():
    code = "def main_solution(x):\n    return func_5(interlace(x), 'ab')".replace("interlace(x)", "func_7(x, 'cd')")
    e = S.parse_code(code)
    assert e == Call(5, (Call(7, (X, Str("cd"))), Str("ab")))
    assert S.main_solution_code(e) == code
    assert S.render_compact(e, "xy") == 'f5(f7("xy","cd"),"ab")'
    e2 = S.parse_code("def main_solution(x):\n    return ((x + 'ab')).upper()")
    assert S.render_code(e2) == "((x + 'ab')).upper()" and S.render_compact(e2, "q") == 'upper(("q"+"ab"))'
    assert S.parse_compact(S.render_compact(e, "xy")) == Call(5, (Call(7, (Str("xy"), Str("cd"))), Str("ab")))
    assert S.depth(e) == 2 and S.depth(e2) == 2 and S.depth(Call(1, (X, Int(3)))) == 1


def test_chain_render_writes_calls_in_evaluation_order():
    assert S.render_chain(S.parse_compact('f17(f3("dcba"))'), "") == '"dcba".f3().f17()'
    assert S.render_chain(S.parse_compact('f7(f3("ab"),"cd")'), "") == '"ab".f3().f7("cd")'
    assert S.render_chain(S.parse_compact('upper(f1("ab",3))'), "") == '"ab".f1(3).upper()'
    assert S.render_chain(TRACE_EXPR, "xy") == '("xy".f17().f1(2)+"ab".f9().upper())'
    for bad in ('"ab".f3(2)', '"ab".f99()', '"ab".upper(1)', '"ab".strip()', '3.f3()', '"ab".f3'):
        with pytest.raises(ValueError):
            S.parse_chain(bad)
    assert S.parse_chain(S.render_chain(TRACE_EXPR, "xy")) == S.parse_compact(S.render_compact(TRACE_EXPR, "xy"))


def test_quoting_of_special_characters():
    e = Call(5, (X, Str('a"b\\c\n')))
    assert S.parse_compact(S.render_compact(e, "é«")) == Call(5, (Str("é«"), Str('a"b\\c\n')))
    assert S.parse_code(S.main_solution_code(e)) == e


def test_execute_upstream_stage1_program_and_other_param_names():
    code = S.program_code(S.parse_code("func_20(func_17(x), func_1('ab', 2))"), stage=1)
    assert code.startswith("def func_1(s, n):") and "def func_17" in code and "def func_20" in code
    assert S.execute(code, "xyz") == "zaybxab"
    assert S.execute("def main_solution(s):\n    '''doc'''\n    return func_8(s, -1)", "abc") == "cab"
    assert S.execute("func_3(x)", "cba") == "abc"  # a bare expression


@pytest.mark.parametrize("code", [
    "def main_solution(x):\n    return eval('x')",
    "def main_solution(x):\n    return __import__('os').system('true')",
    "import os\ndef main_solution(x):\n    return x",
    "def main_solution(x):\n    return x.join('ab')",
    "def main_solution(x):\n    return func_25(x)",
    "def main_solution(x):\n    return func_03(x)",
    "def main_solution(x):\n    return func_1(x)",
    "def main_solution(x):\n    return func_1(x, 'a')",
    "def main_solution(x):\n    return func_5(x, 3)",
    "def main_solution(x):\n    return x * 3",
    "def main_solution(x):\n    return (lambda: x)()",
    "def main_solution(x):\n    return y",
    "def main_solution(x):\n    return f'{x}'",
    "def main_solution(x):\n    return x[::-1]",
    "def main_solution(x):\n    return 3",
    "def main_solution(x):\n    return x + 1",
    "def main_solution(x):\n    return func_3(x=x)",
    "def main_solution(x):\n    return func_3(*x)",
    "def main_solution(x):\n    y = x\n    return y",
    "def main_solution(x, y):\n    return x",
    "def main_solution(x):\n    return b'ab'",
    "def main_solution(x):\n    return True",
    "def main_solution(x):\n    return (x).title()",
    "def main_solution(x):\n    return",
    "def main_solution(x) return x",
    "x = 1",
    "(" * 300 + "x" + ")" * 300,
    "func_3(" * 150 + "x" + ")" * 150,
])
def test_execute_rejects_everything_else(code):
    with pytest.raises(ValueError):
        S.execute(code, "abc")


def test_execute_refuses_runaway_sizes():
    with pytest.raises(ValueTooLong):
        S.execute("def main_solution(x):\n    return func_1(x, 10**9)".replace("10**9", "1000000000"), "ab")
    with pytest.raises(ValueTooLong):
        S.execute("func_13(func_1(x, 2000), func_1('-', 2000))", "abcdefghij")
    with pytest.raises(ValueTooLong):
        S.execute("func_9(x)", "abcdef", max_len=10)
    assert S.execute("func_9(x)", "abcde", max_len=10) == "abcdeedcba"
    assert S.execute("func_23(func_19(func_24(x, 1000000000), 1000000000000), 99999999999)", "ab") == "abba1"
    with pytest.raises(ValueError):
        S.execute("func_3(x)", 3)


def test_parse_compact_rejects_code_names():
    for bad in ['func_3("a")', 'f25("a")', 'x', 'upper("a","b")', '("a").upper()']:
        with pytest.raises(UnsupportedCode):
            S.parse_compact(bad)


def test_helper_functions_are_none_of_the_25_and_round_trip_through_code_and_compact_text():
    """The helper_call prior's helpers must not teach any task function under another name, and
    their rows must score and parse like every other row."""
    import random
    from fgx.tasks.strings.functions import FUNCS, HELPERS, SIGNATURES
    from fgx.tasks.strings.generate import random_input

    rng = random.Random(0)
    inputs = ["a", "ab", "abc", "Hello", "xyzzy"] + [random_input(rng) for _ in range(50)]
    params = {"i": [0, 1, 2, 3], "p": ["-", "ab"], "s": ["ab", "xyz"]}
    for name, helper in HELPERS.items():
        assert helper("") == ""
        for fn, sig in SIGNATURES.items():
            for extra in (params[sig[1]] if len(sig) > 1 else [None]):
                same = all(helper(x) == (FUNCS[fn](x) if extra is None else FUNCS[fn](x, extra)) for x in inputs)
                assert not same, f"helper {name} behaves as func_{fn}{'' if extra is None else (extra,)}"
    e = S.parse_compact('g4(upper(g0("abcd")))')
    assert S.render_compact(e, "") == 'g4(upper(g0("abcd")))'
    assert S.evaluate(e, "") == "DCB"  # "abcd" -> "bcd" -> "BCD" -> ends swapped
    code = S.main_solution_code(S.parse_compact('f17(g2("q"))'))
    assert "g2('q')" in code and S.execute(code, "zz") == "qq"  # "q" -> "qq" -> reversed
    assert S.parse_code(S.render_code(e)) == e
    with pytest.raises(S.UnsupportedCode, match="g1"):
        S.parse_compact('g1("a","b")')
    with pytest.raises(S.UnsupportedCode, match="g9"):
        S.parse_compact('g9("a")')
