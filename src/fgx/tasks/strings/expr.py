"""Structured expressions of the string task: parse (ast, whitelist), render, evaluate, reduce.

An expression is a tree of small frozen dataclasses:

- ``Var()``                    the input ``x``
- ``Str(value)``               a string literal
- ``Int(value)``               an int literal (only as a function's int parameter)
- ``Call(fn, args)``           ``func_<fn>(*args)``
- ``Concat(left, right)``      ``(left + right)``
- ``Method(name, arg)``        ``(arg).upper()`` / lower / capitalize / swapcase, or a helper
  function ``g0(arg)`` .. ``g5(arg)`` (``functions.HELPERS``; only the tiny model's pretraining
  prior uses them)

Renderings:

- ``render_code``: upstream's code text, e.g. ``func_17(func_3(x))``, ``(x + 'ab')``,
  ``func_5(x, 'ab')``, ``(x).upper()`` (the body of ``def main_solution(x): return ...``).
- ``render_chain``: the compact prompt, in evaluation order with the input inlined, e.g.
  ``"dcba".f3().f17()``, ``("ab"+"cd".f3())``, ``"ab".upper()``.
- ``render_compact``: the same nested, ``f17(f3("dcba"))``: the form the failure-mode classifier
  reasons in. String values are written ``json.dumps(v, ensure_ascii=False)``.

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
    (one token each in the tiny model's tokenizer)."""
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
    what is left to learn."""
    t = type(e)
    if _is_literal(e):
        return render_compact(e, x)  # literals are written alike in both renderings
    if t is Concat:
        return "(" + render_chain(e.left, x) + "+" + render_chain(e.right, x) + ")"
    if t is Call:
        first, rest = render_chain(e.args[0], x), [render_chain(a, x) for a in e.args[1:]]
        return f"{first}.f{e.fn}(" + ",".join(rest) + ")"
    return f"{render_chain(e.arg, x)}.{e.name}()"  # Method (builtin or helper)


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
