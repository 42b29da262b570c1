"""String task: the shortcuts an outcome reward pays for (wrong traces that reach the answer)."""

from fgx.tasks.strings import functions as F
from fgx.tasks.strings.expr import Call, Int, X

def test_shortcuts_are_wrong_traces_that_reach_the_answer():
    from fgx.tasks.strings.shortcuts import shortcut_kinds, shortcut_variants

    # "abcd".f22() keeps an even-length string: leaving the call out gives the answer
    assert shortcut_kinds(Call(22, (X,)), "abcd", "abcd", 8) == {"skip"}
    assert shortcut_kinds(Call(22, (X,)), "abc", "ab", 8) == set()
    # x.f3().f17(): sort, then reverse; "cba" sorted is "abc", reversed "cba" -- the input itself
    e = Call(17, (Call(3, (X,)),))
    assert F.FUNCS[17](F.FUNCS[3]("cba")) == "cba"
    assert sorted(k for k, _ in shortcut_variants(e)) == ["other_call", "other_call", "skip", "skip"]
    # the other call in place of the first: f17(f17(x)) = x; nothing short of the two calls gives "dcba"
    assert "other_call" in shortcut_kinds(e, "cba", "cba", 8)
    assert shortcut_kinds(e, "bdca", "dcba", 8) == set()
    # another call keeps its own extra arguments: f8(x, 2) in place of f8(x, 1)
    two = Call(8, (Call(8, (X, Int(1))), Int(2)))
    assert {v for k, v in shortcut_variants(two) if k == "other_call"} == {
        Call(8, (Call(8, (X, Int(2))), Int(2))), Call(8, (Call(8, (X, Int(1))), Int(1)))}
