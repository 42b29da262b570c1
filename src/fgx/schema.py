"""How a settings key is declared, the JSON schema a declaration means, and the one check of a value
against it.

A settings dataclass (:mod:`fgx.settings`) declares each key as a field: its annotation is its type,
:func:`knob` its bounds, choices and one-line description. :func:`object_schema` turns a dataclass into
the JSON schema (draft 2020-12) of a mapping of its keys; :mod:`fgx.knobs` writes the whole config's
into schemas/config.schema.yaml. :func:`problems` checks a value against such a schema and words each
violation with the key, the value found and what is allowed: config.yaml before any job
(:func:`fgx.config.validate_config`) and every job's ``--settings`` (``from_settings`` in
:mod:`fgx.settings`) go through it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from dataclasses import dataclass
from typing import Any, Iterator, Mapping


@dataclass(frozen=True)
class Knob:
    """What a config key allows besides its Python type (the field's annotation), and what it is for.

    ``ge``/``le``/``gt``/``lt`` bound a number (or, with ``each``, a list's items: a dict of the same
    keyword arguments); ``forms`` words a value of several forms (null or a list) the way an error
    message says what is wanted; ``partial`` makes a mapping's keys optional; ``optional`` lets a job's
    settings leave the key out; ``machine`` marks a knob that changes how a job runs, not what it
    computes (verl leaves it out of its resume fingerprint; ``compute``'s reach torch jobs on their command
    line, beside ``--threads``, so they rerun nothing)."""

    doc: str
    choices: tuple | None = None
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None
    pattern: str | None = None
    min_length: int | None = None
    each: Mapping[str, Any] | None = None
    min_items: int | None = None
    max_items: int | None = None
    unique: bool = False
    forms: str | None = None
    partial: bool = False
    optional: bool = False
    machine: bool = False


def knob(doc: str, **limits: Any) -> Any:
    """A settings field declared with :class:`Knob`'s limits and a one-line description (no default)."""
    if "choices" in limits:
        limits["choices"] = tuple(limits["choices"])
    return dataclasses.field(metadata={"knob": Knob(doc, **limits)})


def knob_of(field: dataclasses.Field) -> Knob:
    return field.metadata["knob"]


# ----------------------------------------------------------------------------- declarations -> schema
_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", dict: "object"}


def fields(cls) -> Iterator[tuple[dataclasses.Field, Any]]:
    """(field, resolved type) of every key of a settings dataclass, in declaration order."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        yield f, hints[f.name]


def split_optional(tp) -> tuple[Any, bool]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        assert len(args) == 1, tp
        return args[0], True
    return tp, False


def _bounds(k: Knob | dict) -> dict:
    get = k.get if isinstance(k, dict) else lambda name: getattr(k, name)
    names = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum",
             "pattern": "pattern", "min_length": "minLength"}
    return {schema_name: get(name) for name, schema_name in names.items() if get(name) is not None}


def _scalar(tp, limits: Knob | dict) -> dict:
    choices = limits.get("choices") if isinstance(limits, dict) else limits.choices
    if choices:  # the enum alone: a wrong type is one error naming the allowed values, not two
        return {"enum": list(choices)}
    return {"type": _JSON_TYPES[tp], **_bounds(limits)}


def _value(tp, k: Knob, defs: dict[type, str]) -> dict:
    inner, nullable = split_optional(tp)
    if dataclasses.is_dataclass(inner):
        node = {"$ref": f"#/$defs/{defs[inner]}"} if inner in defs else object_schema(inner, defs, partial=k.partial)
    elif typing.get_origin(inner) is list:
        (item,) = typing.get_args(inner)
        node = {"type": "array", "items": _scalar(item, dict(k.each or {}))}
        node.update({name: value for name, value in (("minItems", k.min_items), ("maxItems", k.max_items))
                     if value is not None})
        if k.unique:
            node["uniqueItems"] = True
    else:
        node = _scalar(inner, k)
    if not nullable:
        return node
    if k.forms:  # explain() says "want <description>" when no form fits
        return {"description": k.forms, "oneOf": [{"type": "null"}, node]}
    assert "type" in node and "enum" not in node, f"a nullable {tp} needs forms= words"
    return {**node, "type": [node["type"], "null"]}


def object_schema(cls, defs: dict[type, str] | None = None, partial: bool = False) -> dict:
    """The JSON schema of a mapping of ``cls``'s keys (nested dataclasses inline, or as ``$ref`` into
    ``defs``); ``partial``: every key optional, else all but those declared ``optional``."""
    defs = {} if defs is None else defs
    props, required = {}, []
    for f, tp in fields(cls):
        k = knob_of(f)
        props[f.name] = {"title": k.doc, **_value(tp, k, defs)}
        if not (partial or k.optional):
            required.append(f.name)
    node: dict[str, Any] = {"type": "object", "additionalProperties": False}
    if not partial:
        node["required"] = required
    node["properties"] = props
    return node


# the keywords of a schema that bound a value rather than type it
_BOUNDS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "minLength", "minItems",
           "maxItems", "uniqueItems"}


def types_only(node: Any) -> Any:
    """``node`` (a schema) less every bound: what it says of types, keys and choices alone."""
    if isinstance(node, list):
        return [types_only(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {k: ({name: types_only(v) for name, v in value.items()} if k == "properties" else types_only(value))
            for k, value in node.items() if k not in _BOUNDS}


# ----------------------------------------------------------------------------- checking
def _key_path(error) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def explain(error, prefix: str = "") -> str:
    """One jsonschema error in words: the key (``prefix`` + its dotted path), what was found, what is allowed."""
    key = prefix + _key_path(error)
    found = json.dumps(error.instance, default=str)
    if len(found) > 80:
        found = found[:77] + "..."
    v, s = error.validator, error.schema
    if v == "enum":
        return f"key '{key}': got {found}; allowed values: {', '.join(map(json.dumps, s['enum']))}"
    if v == "additionalProperties":
        allowed = sorted(s.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return (f"key '{key}': unknown key(s) {', '.join(extra)}; "
                f"allowed keys: {', '.join(allowed)}")
    if v == "required":
        return f"key '{key}': {error.message}"
    if v == "pattern":
        return f"key '{key}': got {found}; must match {s['pattern']}"
    if v in {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}:
        return f"key '{key}': got {found}; {v} is {s[v]}"
    if v == "type":
        want = s["type"] if isinstance(s["type"], list) else [s["type"]]
        return f"key '{key}': got {found}; expected type {' or '.join(want)}" + \
            "".join(_NEAR_MISS[t] for t in want if t in _NEAR_MISS and _near_miss(error.instance, t))
    if v in {"oneOf", "anyOf"} and "description" in s:  # a key of several forms says which ones in words
        return f"key '{key}': got {found}; want {s['description']}"
    return f"key '{key}': {error.message}"


# what a value YAML reads as a number lacks, when the type refuses it
_NEAR_MISS = {"integer": " (a whole number written without a decimal point, e.g. 2, not 2.0)",
              "number": " (a finite number: not .nan or .inf)"}


def _near_miss(value: Any, kind: str) -> bool:
    """A number the type ``kind`` refuses as the jobs read it: 2.0 for an integer, NaN or infinity."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not math.isfinite(value) or (kind == "integer" and isinstance(value, float))


def _is_integer(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker, instance) -> bool:
    # .nan passes every bound (each comparison is false) and .inf most: neither is a rate, a share or a size
    return isinstance(instance, (int, float)) and not isinstance(instance, bool) and math.isfinite(instance)


def validator(schema: Mapping):
    """A draft 2020-12 validator of ``schema`` with the types as the jobs read them: an integer is an int
    (jsonschema's default also takes 2.0, which Python's ``range`` and list indexing then refuse deep
    inside a job), a number is finite (NaN passes every bound)."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
    return jsonschema.validators.extend(base, type_checker=checker)(schema)


def problems(schema: Mapping, value: Any, prefix: str = "") -> list[str]:
    """Every way ``value`` breaks ``schema``, in words (:func:`explain`), ordered by key."""
    errors = sorted(validator(schema).iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    return [explain(e, prefix) for e in errors]
