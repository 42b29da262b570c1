"""Structured expressions of the string task: parse (ast, whitelist), render, evaluate, trace.

An expression is a tree of small frozen dataclasses:

- ``Var()``                    the input ``x``
- ``Str(value)``               a string literal
- ``Int(value)``               an int literal (only as a function's int parameter)
- ``Call(fn, args)``           ``func_<fn>(*args)``
- ``Concat(left, right)``      ``(left + right)``
- ``Method(name, arg)``        ``(arg).upper()`` / lower / capitalize / swapcase, or a helper
  function ``g0(arg)`` .. ``g5(arg)`` (``functions.HELPERS``; only the tiny model's
  ``helper_call`` / ``helper_context`` pretraining priors use them)

Renderings:

- ``render_code``: upstream's code text, e.g. ``func_17(func_3(x))``, ``(x + 'ab')``,
  ``func_5(x, 'ab')``, ``(x).upper()`` (the body of ``def main_solution(x): return ...``).
- ``render_compact``: docs/architecture.md's compact text with the input inlined, e.g.
  ``f17(f3("dcba"))``, ``("ab"+f3("cd"))``, ``upper("ab")``; string values via
  ``json.dumps(v, ensure_ascii=False)``.

Nothing here calls eval/exec: code is parsed with ``ast`` and only the whitelisted node kinds
above are accepted; anything else raises ``UnsupportedCode`` (a ValueError) that says what and
where. Every intermediate value is checked against a length cap (``ValueTooLong``), and growth
by a user-chosen factor (``func_1(x, 10**9)``) is refused before it is computed.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Union

from . import functions as F

DEFAULT_MAX_LEN = 100_000  # hard cap on any intermediate value, in characters
MAX_CODE_CHARS = 200_000  # refuse longer programs before parsing
MAX_NODES = 10_000
MAX_DEPTH = 100


class UnsupportedCode(ValueError):
    """The program uses something outside the task's vocabulary."""


class ValueTooLong(ValueError):
    """An intermediate value would exceed the length cap."""


@dataclass(frozen=True, slots=True)
class Var:
    pass


@dataclass(frozen=True, slots=True)
class Str:
    value: str


@dataclass(frozen=True, slots=True)
class Int:
    value: int


@dataclass(frozen=True, slots=True)
class Call:
    fn: int
    args: tuple


@dataclass(frozen=True, slots=True)
class Concat:
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    arg: "Expr"


Expr = Union[Var, Str, Int, Call, Concat, Method]
X = Var()


def children(e: Expr) -> tuple:
    if type(e) is Call:
        return e.args
    if type(e) is Concat:
        return (e.left, e.right)
    if type(e) is Method:
        return (e.arg,)
    return ()


def depth(e: Expr) -> int:
    """Expression depth (= the task's level): leaves and int parameters count 0."""
    kids = [c for c in children(e) if type(c) is not Int]
    return 1 + max(map(depth, kids)) if kids else 0


def functions_used(e: Expr) -> set[int]:
    out: set[int] = set()
    stack = [e]
    while stack:
        n = stack.pop()
        if type(n) is Call:
            out.add(n.fn)
        stack.extend(children(n))
    return out


# ----------------------------------------------------------------------------- rendering
def render_code(e: Expr) -> str:
    """Upstream's code text of an expression (literals in Python repr, i.e. 'abc')."""
    t = type(e)
    if t is Var:
        return "x"
    if t is Str:
        return repr(e.value)
    if t is Int:
        return str(e.value)
    if t is Call:
        return f"func_{e.fn}(" + ", ".join([render_code(a) for a in e.args]) + ")"
    if t is Concat:
        return f"({render_code(e.left)} + {render_code(e.right)})"
    if t is Method:
        if e.name in F.HELPERS:
            return f"{e.name}({render_code(e.arg)})"
        return f"({render_code(e.arg)}).{e.name}()"
    raise TypeError(f"not an expression node: {e!r}")


def quote(value: str) -> str:
    """A string value as written in compact text and traces."""
    return json.dumps(value, ensure_ascii=False)


def _compose(e: Expr, parts: list[str]) -> str:
    t = type(e)
    if t is Call:
        return f"f{e.fn}(" + ",".join(parts) + ")"
    if t is Concat:
        return "(" + parts[0] + "+" + parts[1] + ")"
    return e.name + "(" + parts[0] + ")"  # Method


def compact_call_names() -> tuple[str, ...]:
    """Every name written before ``(`` in compact text: ``f0``..``f24`` and the builtin methods
    (the tiny model's optional name tokens, ``base.tokenizer: chars+names`` / ``chars+calls``)."""
    return tuple(f"f{i}" for i in range(F.NUM_FUNCS)) + tuple(F.BUILTIN_METHODS)


def render_compact(e: Expr, x: str) -> str:
    """Compact text with the input ``x`` inlined, e.g. ``f17(f3("dcba"))``."""
    t = type(e)
    if t is Var:
        return quote(x)
    if t is Str:
        return quote(e.value)
    if t is Int:
        return str(e.value)
    return _compose(e, [render_compact(c, x) for c in children(e)])


def render_chain(e: Expr, x: str) -> str:
    """Compact text in evaluation order, each call written after its first argument as a method
    chain: ``f17(f3("dcba"))`` -> ``"dcba".f3().f17()``, ``f7(f3("ab"),"cd")`` -> ``"ab".f3().f7("cd")``,
    ``upper(f3(x))`` -> ``"dcba".f3().upper()``; a concatenation stays ``("ab"+"cd")``. The
    innermost call of a chain is then the first one after its literal, so locating the next step
    is reading on from the left, as an LLM reads nested code without effort, and composing is
    what is left to learn (``task.render: chain``)."""
    t = type(e)
    if _is_literal(e):
        return render_compact(e, x)  # literals are written alike in both renderings
    if t is Concat:
        return "(" + render_chain(e.left, x) + "+" + render_chain(e.right, x) + ")"
    if t is Call:
        first, rest = render_chain(e.args[0], x), [render_chain(a, x) for a in e.args[1:]]
        return f"{first}.f{e.fn}(" + ",".join(rest) + ")"
    return f"{render_chain(e.arg, x)}.{e.name}()"  # Method (builtin or helper)


RENDERS = ("nested", "chain")
CHAIN_TRACES = ("redex", "redex_full", "steps", "call_steps")  # the traces a chain rendering writes (its steps are first argument first)


def render_expr(e: Expr, x: str, render: str = "nested") -> str:
    """Compact text of ``e`` in the given rendering: ``nested`` (:func:`render_compact`, the
    default) or ``chain`` (:func:`render_chain`)."""
    if render == "nested":
        return render_compact(e, x)
    if render == "chain":
        return render_chain(e, x)
    raise ValueError(f"unknown render {render!r}: use one of {', '.join(RENDERS)}")


def main_solution_code(e: Expr) -> str:
    return f"def main_solution(x):\n    return {render_code(e)}"


# ----------------------------------------------------------------------------- evaluation
def _apply(e: Expr, vals: list, cap: int):
    t = type(e)
    if t is Call:
        if e.fn in (1, 18, 13) and F.output_len_bound(e.fn, tuple(vals)) > cap:
            raise ValueTooLong(f"func_{e.fn} would produce more than {cap} characters")
        out = F.FUNCS[e.fn](*vals)
    elif t is Concat:
        out = vals[0] + vals[1]
    elif e.name in F.HELPERS:
        out = F.HELPERS[e.name](vals[0])
    else:
        out = getattr(vals[0], e.name)()
    if len(out) > cap:
        raise ValueTooLong(f"an intermediate value has {len(out)} characters (cap {cap})")
    return out


def _eval(e: Expr, x: str, cap: int, trace: list | None):
    t = type(e)
    if t is Var:
        return x
    if t is Str:
        if len(e.value) > cap:
            raise ValueTooLong(f"a literal has {len(e.value)} characters (cap {cap})")
        return e.value
    if t is Int:
        return e.value
    vals = [_eval(c, x, cap, trace) for c in children(e)]
    out = _apply(e, vals, cap)
    if trace is not None:
        trace.append(out)
    return out


def evaluate(e: Expr, x: str, max_len: int | None = DEFAULT_MAX_LEN) -> str:
    """Value of ``e`` on input ``x``; ValueTooLong if any value (input included) exceeds max_len."""
    cap = DEFAULT_MAX_LEN if max_len is None else max_len
    if len(x) > cap:
        raise ValueTooLong(f"the input has {len(x)} characters (cap {cap})")
    return _eval(e, x, cap, None)


def trace_values(e: Expr, x: str, max_len: int | None = DEFAULT_MAX_LEN) -> list[str]:
    """Values of the reducible nodes in rewrite order (leftmost-innermost = post-order).

    The last item is the expression's value; one item per trace line before the output line.
    """
    cap = DEFAULT_MAX_LEN if max_len is None else max_len
    if len(x) > cap:
        raise ValueTooLong(f"the input has {len(x)} characters (cap {cap})")
    out: list[str] = []
    _eval(e, x, cap, out)
    return out


def _trace(e: Expr, x: str, cap: int, lines: list[str]):
    """Append the rewrite lines of subtree ``e`` (as its own text) and return its value."""
    kids = children(e)
    if not kids:
        return _eval(e, x, cap, None)
    parts = [render_compact(c, x) for c in kids]
    vals = []
    for i, c in enumerate(kids):
        sub: list[str] = []
        vals.append(_trace(c, x, cap, sub))
        for line in sub:
            parts[i] = line
            lines.append(_compose(e, parts))
    value = _apply(e, vals, cap)
    lines.append(quote(value))
    return value


def _is_literal(e: Expr) -> bool:
    return type(e) in (Var, Str, Int)


def with_child(e: Expr, i: int, new: Expr) -> Expr:
    """``e`` with its ``i``-th child (``children(e)[i]``) replaced by ``new``."""
    t = type(e)
    if t is Call:
        return Call(e.fn, e.args[:i] + (new,) + e.args[i + 1:])
    if t is Concat:
        return Concat(new, e.right) if i == 0 else Concat(e.left, new)
    return Method(e.name, new)


def replace_at(e: Expr, path: tuple, new: Expr) -> Expr:
    """``e`` with the node at ``path`` (child indices from the root, as ``children`` numbers them)
    replaced by ``new``."""
    if not path:
        return new
    return with_child(e, path[0], replace_at(children(e)[path[0]], path[1:], new))


def _reduce_step(e: Expr, x: str, cap: int):
    """One leftmost-innermost reduction: (rewritten e, the reduced node, its value)."""
    kids = children(e)
    for i, c in enumerate(kids):
        if not _is_literal(c):
            new_c, redex, value = _reduce_step(c, x, cap)
            return with_child(e, i, new_c), redex, value
    value = _apply(e, [_eval(c, x, cap, None) for c in kids], cap)
    return Str(value), e, value


def _reduction_chain(e: Expr, x: str, cap: int):
    """Yield (rewritten e, reduced node, its value) for every reduction step until a literal is left."""
    while not _is_literal(e):
        e, redex, value = _reduce_step(e, x, cap)
        yield e, redex, value


def reductions(e: Expr, x: str, max_len: int | None = DEFAULT_MAX_LEN) -> list[tuple[Expr, str]]:
    """The reduction steps of ``e`` on input ``x`` in trace order (leftmost-innermost first): each
    reduced node with its arguments as they stand at that step (literals, or ``x``) and its value."""
    cap = DEFAULT_MAX_LEN if max_len is None else max_len
    return [(redex, value) for _, redex, value in _reduction_chain(e, x, cap)]


def render_arg_first(e: Expr, x: str) -> str:
    """A reducible node written with its first argument first: ``"dcba".f3()``, ``"ab".f7(2)``,
    ``"ab".upper()``, ``"a"+"b"``. A step line then starts with the node's first literal, which
    in a chain of calls is the expression's leftmost string at any depth, as in a Level-1 prompt."""
    t = type(e)
    if t is Concat:
        return render_compact(e.left, x) + "+" + render_compact(e.right, x)
    if t is Call:
        first, rest = render_compact(e.args[0], x), [render_compact(a, x) for a in e.args[1:]]
        return f"{first}.f{e.fn}(" + ",".join(rest) + ")"
    if t is Method:
        return f"{render_compact(e.arg, x)}.{e.name}()"
    return render_compact(e, x)


def arg_first_to_compact(line: str) -> str:
    """A ``redex_arg_first`` step line in ``redex``'s form (``"dcba".f3()="abcd"`` ->
    ``f3("dcba")="abcd"``), so analyses of first lines read both; any other line is returned as is."""
    lit = r'("(?:[^"\\]|\\.)*")'
    m = re.match(r'\s*' + lit + r'\.(\w+)\(([^()]*)\)(.*)$', line, re.S)
    if m:
        first, name, rest, tail = m.groups()
        return f"{name}({first}{',' + rest if rest else ''}){tail}"
    m = re.match(r'\s*' + lit + r'\+' + lit + r'(=.*)$', line, re.S)
    if m:
        left, right, tail = m.groups()
        return f"({left}+{right}){tail}"
    return line


def _redex_trace(e: Expr, x: str, cap: int, lines: list[str], full: bool = False, arg_first: bool = False,
                 render: str = "nested", rewritten: bool = True, call_first: bool = False):
    """Append the "redex" trace of ``e`` and return its value: per step, the reduced call copied
    with its value (``f3("dcba")="abcd"``), then the rewritten expression unless it is a literal
    (``full``: always, so the last step also ends with the whole expression, ``"abcd"``;
    ``arg_first``: the call is written first argument first, ``"dcba".f3()="abcd"``; ``render``:
    how the steps and expressions are written, see :func:`render_expr`; ``rewritten=False``: the
    steps only, never the rewritten expression; ``call_first``: each step is preceded by its call
    alone on a line, ``"dcba".f3()``, as a Level-1 prompt)."""
    value = _eval(e, x, cap, None) if _is_literal(e) else None
    for e, redex, value in _reduction_chain(e, x, cap):
        step = render_arg_first(redex, x) if arg_first else render_expr(redex, x, render)
        if call_first:
            lines.append(step)
        lines.append(step + "=" + quote(value))
        if rewritten and (full or not _is_literal(e)):
            lines.append(render_expr(e, x, render))
    return value


TRACES = ("rewrite", "redex", "redex_full", "redex_arg_first", "steps", "call_steps")


def output_line(value: str) -> str:
    return json.dumps({"output": value}, ensure_ascii=False)


def trace_lines(e: Expr, x: str, max_len: int | None = DEFAULT_MAX_LEN, trace: str = "rewrite",
                render: str = "nested") -> list[str]:
    """The compact solution, one step per line, ending with ``{"output": ...}`` (no newlines).

    ``rewrite``: each line is the whole expression with its leftmost-innermost reducible node (a
    call, concat or method whose arguments are all literals) replaced by its quoted value; the
    value is computed inside the expression's context.
    ``redex``: each step first copies that node and gives its value (``f3("dcba")="abcd"``), then
    writes the rewritten expression; every value is computed right after a copy of its call, in
    the same local context as a Level-1 answer.
    ``redex_full``: as ``redex``, and the rewritten expression follows every step, also the last
    (``"abcd"``): whether to answer is then read off the line just written (a bare string), not
    by comparing the step with the prompt.
    ``redex_arg_first``: as ``redex``, each step written first argument first
    (``"dcba".f3()="abcd"``): a Level-1 step then starts with the prompt's first literal, not its
    first name, the same rule that finds the innermost call of a nest.
    ``steps``: the step lines of ``redex`` only, no rewritten expressions (chain render only: there the
    next step's call is the one after the last step's in the prompt, and its argument the last value,
    so nothing but the steps needs writing: ``"dcba".f3()="abcd"`` / ``"abcd".f17()="ABCD"``).
    ``call_steps``: as ``steps``, each step preceded by its call alone (``"dcba".f3()`` /
    ``"dcba".f3()="abcd"`` / ``"abcd".f17()`` / ``"abcd".f17()="ABCD"``; chain render only): every value
    is computed right after a line that reads as a Level-1 prompt, whatever calls the prompt has after it.
    ``render``: ``nested`` (``f17(f3("dcba"))``) or ``chain`` (``"dcba".f3().f17()``, every step and
    expression in evaluation order; with ``redex``, ``redex_full`` and ``steps`` only).
    """
    if trace not in TRACES:
        raise ValueError(f"unknown trace {trace!r}: use one of {', '.join(TRACES)}")
    if render not in RENDERS:
        raise ValueError(f"unknown render {render!r}: use one of {', '.join(RENDERS)}")
    if trace in ("steps", "call_steps") and render != "chain":
        raise ValueError(f"the {trace} trace needs render 'chain': in a nested expression the next step is "
                         "not read off from the prompt")
    if render == "chain" and trace not in CHAIN_TRACES:
        raise ValueError(f"render 'chain' writes {' or '.join(CHAIN_TRACES)} traces, not {trace!r}: its steps are "
                         "already first argument first")
    cap = DEFAULT_MAX_LEN if max_len is None else max_len
    if len(x) > cap:
        raise ValueTooLong(f"the input has {len(x)} characters (cap {cap})")
    lines: list[str] = []
    if trace == "rewrite":
        value = _trace(e, x, cap, lines)
    else:
        value = _redex_trace(e, x, cap, lines, full=trace == "redex_full", arg_first=trace == "redex_arg_first",
                             render=render, rewritten=trace not in ("steps", "call_steps"),
                             call_first=trace == "call_steps")
    lines.append(output_line(value))
    return lines


def solution_text(e: Expr, x: str, max_len: int | None = DEFAULT_MAX_LEN, trace: str = "rewrite",
                  render: str = "nested") -> str:
    """The reference response of a compact row: every trace line followed by ``\\n``."""
    return "".join(line + "\n" for line in trace_lines(e, x, max_len, trace, render))


# ----------------------------------------------------------------------------- parsing
_FUNC_RE = re.compile(r"func_(\d+)\Z")
_COMPACT_FUNC_RE = re.compile(r"f(\d+)\Z")
_ALLOWED = ("only func_N(...) calls (N = 0..24), string and int literals, x, '+' and "
            ".upper()/.lower()/.capitalize()/.swapcase() are allowed (and the pretraining prior's "
            "helpers g0(...)..g5(...))")


def _where(node: ast.AST) -> str:
    line, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
    return f" at line {line}, column {col + 1}" if line is not None and col is not None else ""


class _Converter:
    def __init__(self, var_name: str | None, compact: bool):
        self.var_name = var_name
        self.compact = compact
        self.nodes = 0

    def fail(self, node: ast.AST, what: str) -> UnsupportedCode:
        return UnsupportedCode(f"unsupported {what}{_where(node)}: {_ALLOWED}")

    def int_literal(self, node: ast.AST) -> int | None:
        if type(node) is ast.Constant and type(node.value) is int:
            return node.value
        if (type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd)
                and type(node.operand) is ast.Constant and type(node.operand.value) is int):
            return -node.operand.value if type(node.op) is ast.USub else node.operand.value
        return None

    def convert(self, node: ast.AST, level: int = 0) -> Expr:
        self.nodes += 1
        if self.nodes > MAX_NODES or level > MAX_DEPTH:
            raise UnsupportedCode(f"expression too large (over {MAX_NODES} nodes or {MAX_DEPTH} levels deep)")
        t = type(node)
        if t is ast.Name:
            if self.var_name is not None and node.id == self.var_name:
                return X
            raise self.fail(node, f"name {node.id!r}")
        if t is ast.Constant:
            if type(node.value) is str:
                return Str(node.value)
            if type(node.value) is int:
                return Int(node.value)
            raise self.fail(node, f"constant {node.value!r}")
        if t is ast.UnaryOp:
            v = self.int_literal(node)
            if v is not None:
                return Int(v)
            raise self.fail(node, "unary operator")
        if t is ast.BinOp:
            if type(node.op) is not ast.Add:
                raise self.fail(node, f"operator {type(node.op).__name__}")
            return Concat(self.convert(node.left, level + 1), self.convert(node.right, level + 1))
        if t is ast.Call:
            if node.keywords or any(type(a) is ast.Starred for a in node.args):
                raise self.fail(node, "keyword or starred argument")
            f = node.func
            if type(f) is ast.Attribute:  # (expr).upper()
                if self.compact or f.attr not in F.BUILTIN_METHODS or node.args:
                    raise self.fail(node, f"method call .{f.attr}()")
                return Method(f.attr, self.convert(f.value, level + 1))
            if type(f) is not ast.Name:
                raise self.fail(node, "call target")
            if (self.compact and f.id in F.BUILTIN_METHODS) or f.id in F.HELPERS:
                if len(node.args) != 1:
                    raise UnsupportedCode(f"{f.id}() takes 1 argument{_where(node)}, got {len(node.args)}")
                return Method(f.id, self.convert(node.args[0], level + 1))
            m = (_COMPACT_FUNC_RE if self.compact else _FUNC_RE).match(f.id)
            if not m or int(m[1]) >= F.NUM_FUNCS or (m[1] != "0" and m[1].startswith("0")):
                raise self.fail(node, f"function {f.id!r}")
            fn = int(m[1])
            sig = F.SIGNATURES[fn]
            if len(node.args) != len(sig):
                raise UnsupportedCode(
                    f"{f.id} takes {len(sig)} argument(s){_where(node)}, got {len(node.args)}")
            return Call(fn, tuple(self.convert(a, level + 1) for a in node.args))
        raise self.fail(node, f"syntax {t.__name__}")


def validate(e: Expr) -> Expr:
    """Static type check: ints only as int parameters, strings everywhere else."""
    def is_str(n: Expr) -> bool:
        return type(n) is not Int

    stack = [e]
    if not is_str(e):
        raise UnsupportedCode("the expression must produce a string, not an int")
    while stack:
        n = stack.pop()
        t = type(n)
        if t is Call:
            for kind, a in zip(F.SIGNATURES[n.fn], n.args):
                if (kind == "i") == is_str(a):
                    want = "an int literal" if kind == "i" else "a string"
                    raise UnsupportedCode(
                        f"func_{n.fn} ({F.NAMES[n.fn]}) expects {want} as argument, got {render_code(a)}")
        elif t in (Concat, Method):
            for a in children(n):
                if not is_str(a):
                    raise UnsupportedCode(f"'+' and string methods need strings, got {render_code(a)}")
        stack.extend(children(n))
    return e


def _parse(text: str, mode: str) -> ast.AST:
    if not isinstance(text, str):
        raise UnsupportedCode(f"code must be a str, got {type(text).__name__}")
    if len(text) > MAX_CODE_CHARS:
        raise UnsupportedCode(f"code has {len(text)} characters (limit {MAX_CODE_CHARS})")
    try:
        return ast.parse(text, mode=mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as err:
        raise UnsupportedCode(f"cannot parse code: {type(err).__name__}: {err}") from None


def _return_expr(fdef: ast.FunctionDef) -> ast.AST:
    body = list(fdef.body)
    if body and type(body[0]) is ast.Expr and type(body[0].value) is ast.Constant \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # docstring
    if len(body) != 1 or type(body[0]) is not ast.Return or body[0].value is None:
        raise UnsupportedCode("main_solution must consist of a single 'return <expression>' statement")
    return body[0].value


def parse_code(code: str) -> Expr:
    """Parse a ``main_solution`` program (preceding definitions ignored) or a bare expression.

    Preceding ``def``s (Stage-1 prompts print the functions' definitions) are ignored: calls to
    ``func_N`` always mean the task's function N. Any other top-level statement, any name other
    than main_solution's parameter, or any construct outside the vocabulary raises
    UnsupportedCode (a ValueError).
    """
    tree = _parse(code, "exec")
    mains = [n for n in tree.body if type(n) is ast.FunctionDef and n.name == "main_solution"]
    if not mains:
        if len(tree.body) == 1 and type(tree.body[0]) is ast.Expr:  # a bare expression
            return _convert(tree.body[0].value, "x", compact=False)
        raise UnsupportedCode("no 'def main_solution(x): return ...' found in the code")
    for n in tree.body:
        if type(n) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Expr) or (
                type(n) is ast.Expr and not (type(n.value) is ast.Constant and isinstance(n.value.value, str))):
            raise UnsupportedCode(f"unsupported top-level statement {type(n).__name__}{_where(n)}: "
                                  "only function definitions may precede main_solution")
    main = mains[-1]
    a = main.args
    if (len(a.args) != 1 or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults
            or main.decorator_list):
        raise UnsupportedCode("main_solution must take exactly one plain parameter")
    return _convert(_return_expr(main), a.args[0].arg, compact=False)


def parse_compact(text: str) -> Expr:
    """Parse one compact line (``f17(f3("dcba"))``, ``upper("ab")``, ``"dcba"``) into an Expr."""
    tree = _parse(text.strip(), "eval")
    return _convert(tree.body, None, compact=True)


def parse_chain(text: str) -> Expr:
    """Parse one chain line (``"dcba".f3().f17()``, ``("ab"+"cd").upper()``; see :func:`render_chain`)."""
    tree = _parse(text.strip(), "eval")
    try:
        return validate(_chain_node(tree.body))
    except RecursionError:
        raise UnsupportedCode("expression nested too deeply") from None


def _chain_node(node: ast.AST) -> Expr:
    if isinstance(node, ast.Constant) and type(node.value) in (str, int):
        return Str(node.value) if type(node.value) is str else Int(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return Concat(_chain_node(node.left), _chain_node(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        name, recv = node.func.attr, _chain_node(node.func.value)
        args = tuple(_chain_node(a) for a in node.args)
        m = _COMPACT_FUNC_RE.match(name)
        if m and int(m[1]) < F.NUM_FUNCS and len(F.SIGNATURES[int(m[1])]) == 1 + len(args):
            return Call(int(m[1]), (recv, *args))
        if (name in F.BUILTIN_METHODS or name in F.HELPERS) and not args:
            return Method(name, recv)
    raise UnsupportedCode(f"not a chain expression{_where(node)}: only \"literal\".fN(...), .upper() etc. "
                          "and (a+b)")


def top_level_eq(line: str) -> int:
    """Index of the first ``=`` outside string literals, or -1."""
    in_str = esc = False
    for i, ch in enumerate(line):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "=":
            return i
    return -1


def chain_to_compact(line: str) -> str:
    """A chain trace line in the nested form (``"ab".f3().f10()`` -> ``f10(f3("ab"))``,
    ``"dcba".f3()="abcd"`` -> ``f3("dcba")="abcd"``), so analyses read both renderings; a line that
    is no chain expression (a nested one, the answer) is returned as it is."""
    i = top_level_eq(line)
    lhs, tail = (line[:i], line[i:]) if i >= 0 else (line, "")
    try:
        e = parse_chain(lhs)
    except (ValueError, SyntaxError, RecursionError):
        return line
    return render_compact(e, "") + tail


def _convert(node: ast.AST, var_name: str | None, compact: bool) -> Expr:
    try:
        e = _Converter(var_name, compact).convert(node)
    except RecursionError:
        raise UnsupportedCode("expression nested too deeply") from None
    return validate(e)


def execute(code: str, x: str, max_len: int | None = DEFAULT_MAX_LEN) -> str:
    """Run a main_solution program of the task's vocabulary on ``x``, without eval/exec.

    Raises UnsupportedCode (ValueError) for code outside the vocabulary and ValueTooLong
    (ValueError) when any value would exceed ``max_len`` characters.
    """
    if not isinstance(x, str):
        raise UnsupportedCode(f"x must be a str, got {type(x).__name__}")
    return evaluate(parse_code(code), x, max_len)


def normalise_code(code: str) -> str:
    """Canonical text of a program's main_solution expression (leakage comparisons)."""
    return render_code(parse_code(code))
