"""A tool's description and the JSON Schema of its parameters, read from a typed function.

The rules (the README's "Tools" section repeats them for users):

* ``str``, ``int``, ``float``, ``bool`` and ``None`` are ``string``, ``integer``,
  ``number``, ``boolean`` and ``null``; ``Any`` is ``{}`` (anything).
* ``list[T]`` / ``Sequence[T]`` / ``tuple[T, ...]`` are arrays of ``T``; ``tuple[A, B]`` is
  an array of exactly those items; ``dict[str, T]`` is an object whose values are ``T``.
* ``Literal[...]`` and ``enum.Enum`` subclasses are an ``enum`` of their (member) values.
* ``T | None`` is ``{"type": [T, "null"]}`` where ``T`` is a scalar, ``anyOf`` otherwise;
  any other union is ``anyOf``.
* Dataclasses and ``TypedDict`` are objects: ``properties``, ``required`` (the fields and
  keys without a default / marked ``Required``) and ``"additionalProperties": false``.
* ``datetime``, ``date``, ``time`` and ``UUID`` are strings with a ``format``
  (``date-time``, ``date``, ``time``, ``uuid``): JSON has no such types, and the formats
  are the ones JSON Schema defines and every provider reads.
* A pydantic model (see ``_core/coerce.py`` for how one is recognised without importing
  pydantic) is its own ``model_json_schema()``, with every ``$ref`` replaced by the
  definition it points to: a tool's schema is then self-contained and one plain tree, the
  form every provider's ``tools`` array takes (Ollama's and Cohere's models read the schema
  as text; references would make them look elsewhere). The model decides its own
  ``additionalProperties``; a strict tool closes the objects that do not say
  (:func:`strict_schema`).
* ``Annotated[T, "text"]`` adds ``"description": "text"`` (the first ``str`` in the
  metadata); a Google-style ``Args:`` section of the docstring describes parameters that
  have no ``Annotated`` description. ``NewType`` is read as its supertype.
* A parameter with a default is not required; a default that is JSON (or an enum member,
  a date, time, UUID or pydantic model, in their JSON form) is written as the property's
  ``default``.

Anything else (an unannotated parameter, ``*args``, a positional-only parameter, a
recursive type, a recursive pydantic model, a type the coercion engine cannot convert to)
raises ``TypeError`` when the tool is defined, never when the model calls it.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import functools
import inspect
import json
import re
import types
import typing
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from .._core.coerce import (
    _DICT_ORIGINS,
    _LIST_ORIGINS,
    _dataclass_fields,
    _is_pydantic_model,
    _is_typeddict,
    _typeddict_fields,
    coerce,
)
from .._core.errors import ExtractError

__all__ = [
    "FunctionSpec",
    "Parameter",
    "describe_function",
    "schema_for",
    "strict_problem",
    "strict_schema",
]

_SCALARS: Mapping[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    types.NoneType: "null",
}
_FORMATS: Mapping[Any, str] = {
    datetime.datetime: "date-time",
    datetime.date: "date",
    datetime.time: "time",
    uuid.UUID: "uuid",
}


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter of a tool function, as dispatch needs it."""

    name: str
    annotation: Any
    required: bool
    default: Any
    accepts_none: bool


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """What a typed function says about itself: description, parameters, schema."""

    description: str
    parameters: tuple[Parameter, ...]
    schema: dict[str, Any]


# --- types -------------------------------------------------------------------------------


def schema_for(tp: Any) -> dict[str, Any]:
    """The JSON Schema of the annotation ``tp`` (see the module's rules)."""
    return _schema(tp, ())


def _schema(tp: Any, stack: tuple[type, ...]) -> dict[str, Any]:
    tp, description = _split_annotated(tp)
    schema = _bare_schema(tp, stack)
    if description is not None:
        schema["description"] = description
    return schema


def _split_annotated(tp: Any) -> tuple[Any, str | None]:
    """Strip ``Annotated`` and ``NewType``; the outermost ``str`` metadata describes."""
    description = None
    while True:
        if get_origin(tp) is typing.Annotated:
            if description is None:
                description = next((m for m in tp.__metadata__ if isinstance(m, str)), None)
            tp = get_args(tp)[0]
        elif isinstance(tp, typing.NewType):
            tp = tp.__supertype__
        else:
            return tp, description


def _bare_schema(tp: Any, stack: tuple[type, ...]) -> dict[str, Any]:
    if tp is Any or tp is object:
        return {}
    if tp is None:
        tp = types.NoneType
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if tp in _FORMATS:
        return {"type": "string", "format": _FORMATS[tp]}
    origin, args = get_origin(tp) or tp, get_args(tp)
    if origin is Union or origin is types.UnionType:
        return _union(args, stack)
    if origin is Literal:
        return _enum([a.value if isinstance(a, enum.Enum) else a for a in args])
    if origin in _LIST_ORIGINS:
        return {"type": "array", "items": _schema(args[0], stack) if args else {}}
    if origin is tuple:
        return _tuple(tp, args, stack)
    if origin in _DICT_ORIGINS:
        if args and _split_annotated(args[0])[0] not in (str, Any):
            raise TypeError(f"cannot describe {tp!r}: JSON object keys are strings")
        values = _schema(args[1], stack) if args else {}
        return {"type": "object", "additionalProperties": values}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum([member.value for member in tp])
    if isinstance(tp, type) and (dataclasses.is_dataclass(tp) or _is_typeddict(tp)):
        return _class(tp, stack)
    if _is_pydantic_model(tp):
        return _model(tp)
    raise TypeError(f"cannot describe {tp!r} as JSON Schema: unsupported type")


def _union(members: tuple[Any, ...], stack: tuple[type, ...]) -> dict[str, Any]:
    schemas = [_schema(m, stack) for m in members]
    others = [s for s in schemas if s != {"type": "null"}]
    if len(others) == 1 and len(schemas) == 2:
        # ``T | None`` with a plain ``T``: the compact form every provider reads.
        (only,) = others
        if isinstance(only.get("type"), str) and set(only) <= {"type", "format", "description"}:
            return {**only, "type": [only["type"], "null"]}
    return {"anyOf": schemas}


def _enum(values: list[Any]) -> dict[str, Any]:
    for value in values:
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise TypeError(f"cannot describe the choice {value!r}: not a JSON value") from None
    kinds = {_SCALARS.get(type(v), "object") for v in values}
    if "number" in kinds:
        kinds.discard("integer")  # every integer is a number already
    ordered = sorted(kinds)
    return {"type": ordered[0] if len(ordered) == 1 else ordered, "enum": values}


def _tuple(tp: Any, args: tuple[Any, ...], stack: tuple[type, ...]) -> dict[str, Any]:
    if tp is tuple or (len(args) == 2 and args[1] is Ellipsis):
        return {"type": "array", "items": _schema(args[0], stack) if args else {}}
    items = [_schema(a, stack) for a in args]
    return {
        "type": "array",
        "prefixItems": items,
        "minItems": len(items),
        "maxItems": len(items),
    }


def _class(cls: type, stack: tuple[type, ...]) -> dict[str, Any]:
    if cls in stack:
        raise TypeError(f"cannot describe {cls.__qualname__}: it refers to itself")
    stack = (*stack, cls)
    fields = _dataclass_fields(cls) if dataclasses.is_dataclass(cls) else _typeddict_fields(cls)
    schema = _object(
        ((f.name, _schema(f.tp, stack)) for f in fields), [f.name for f in fields if f.required]
    )
    doc = inspect.cleandoc(cls.__doc__ or "")
    # A dataclass without a docstring gets a generated one ("Point(x: int, y: int)").
    if doc and not doc.startswith(f"{cls.__name__}("):
        schema = {"description": _first_paragraph(doc), **schema}
    return schema


# JSON Schema keywords whose value is a map of names to schemas, and those whose value is
# data (a default that happens to hold a "$ref" key is not a reference).
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
)
_DATA = frozenset({"default", "examples", "enum", "const"})


def _model(cls: Any) -> dict[str, Any]:
    where = cls.__qualname__
    try:
        generated = cls.model_json_schema()
    except Exception as exc:  # pydantic's PydanticUserError and friends: not describable
        raise TypeError(f"cannot describe {where}: {type(exc).__name__}: {exc}") from None
    if not isinstance(generated, dict):
        raise TypeError(f"cannot describe {where}: model_json_schema() gave no object")
    definitions = generated.pop("$defs", {})
    schema = _inline(generated, definitions, (), where)
    if not isinstance(schema, dict):  # pragma: no cover - a dict stays a dict
        raise TypeError(f"cannot describe {where}")
    return schema


def _inline(node: Any, definitions: Mapping[str, Any], seen: tuple[str, ...], where: str) -> Any:
    """A fresh copy of the schema ``node`` with each ``#/$defs/...`` reference replaced by a
    copy of its definition; ``seen`` holds the definitions being expanded (a recursion)."""
    if isinstance(node, list):
        return [_inline(item, definitions, seen, where) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = _definition(ref, definitions, where)
        if name in seen:
            raise TypeError(f"cannot describe {where}: {name} refers to itself")
        result = _inline(definitions[name], definitions, (*seen, name), where)
    for key, value in node.items():
        if key == "$ref" and isinstance(ref, str):
            continue
        if key in _DATA:
            result[key] = copy.deepcopy(value)
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {k: _inline(v, definitions, seen, where) for k, v in value.items()}
        else:
            # Keywords beside a reference (a field's description) win over the definition's.
            result[key] = _inline(value, definitions, seen, where)
    wrapped = result.get("allOf")
    if isinstance(wrapped, list) and len(wrapped) == 1 and isinstance(wrapped[0], dict):
        # ``allOf: [{"$ref": ...}]`` is how older generators put keywords beside a reference.
        del result["allOf"]
        result = {**wrapped[0], **result}
    return result


def _definition(ref: str, definitions: Mapping[str, Any], where: str) -> str:
    if ref.startswith("#/$defs/"):
        # A JSON Pointer token: ``~1`` is ``/`` and ``~0`` is ``~`` (RFC 6901).
        name = ref.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~")
        if name in definitions:
            return name
    raise TypeError(f"cannot describe {where}: the reference {ref!r} is not one of its $defs")


def _object(
    properties: Iterable[tuple[str, dict[str, Any]]], required: list[str]
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


# --- functions ---------------------------------------------------------------------------


def describe_function(fn: Callable[..., Any], *, description: str | None = None) -> FunctionSpec:
    """Read ``fn``'s signature, annotations and docstring (see the module's rules)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot read the signature of {fn!r}: {exc}") from exc
    hints = _hints(fn)
    summary, documented = _parse_docstring(inspect.getdoc(fn) or "")
    where = getattr(fn, "__qualname__", repr(fn))
    parameters = []
    properties = []
    for param in signature.parameters.values():
        parameter, prop = _parameter(param, hints, where)
        if "description" not in prop and param.name in documented:
            prop = {**prop, "description": documented[param.name]}
        parameters.append(parameter)
        properties.append((param.name, prop))
    schema = _object(properties, [p.name for p in parameters if p.required])
    return FunctionSpec(summary if description is None else description, tuple(parameters), schema)


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.isclass(target):
        target = target.__init__
    elif not inspect.isroutine(target):
        target = type(target).__call__  # a callable object: its ``__call__`` is annotated
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # NameError and friends: the annotations cannot be resolved
        raise TypeError(f"cannot resolve the annotations of {fn!r}: {exc}") from exc


_NOT_KEYWORD = {
    inspect.Parameter.POSITIONAL_ONLY: "is positional-only",
    inspect.Parameter.VAR_POSITIONAL: "is *args",
    inspect.Parameter.VAR_KEYWORD: "is **kwargs",
}


def _parameter(
    param: inspect.Parameter, hints: Mapping[str, Any], where: str
) -> tuple[Parameter, dict[str, Any]]:
    # Tools receive a JSON object: every parameter must be a named keyword.
    if param.kind in _NOT_KEYWORD:
        raise TypeError(f"parameter {param.name!r} of {where} {_NOT_KEYWORD[param.kind]}")
    if param.name not in hints:
        raise TypeError(f"parameter {param.name!r} of {where} has no type annotation")
    annotation = hints[param.name]
    try:
        prop = schema_for(annotation)
    except TypeError as exc:
        raise TypeError(f"parameter {param.name!r} of {where}: {exc}") from None
    required = param.default is inspect.Parameter.empty
    if not required:
        default = _json_default(param.default)
        if default is not _NO_DEFAULT:
            prop["default"] = default
    parameter = Parameter(
        param.name, annotation, required, param.default, _accepts_none(annotation)
    )
    return parameter, prop


_NO_DEFAULT: Any = object()


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    elif isinstance(value, datetime.date | datetime.time):
        value = value.isoformat()
    elif isinstance(value, uuid.UUID):
        value = str(value)
    elif _is_pydantic_model(type(value)):
        try:
            value = value.model_dump(mode="json")
        except Exception:  # a model that cannot be dumped has no JSON default to show
            return _NO_DEFAULT
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return _NO_DEFAULT
    return value


def _accepts_none(annotation: Any) -> bool:
    try:
        coerce(None, annotation, strict=True)
    except ExtractError:
        return False
    return True


# --- docstrings --------------------------------------------------------------------------

_SECTION = re.compile(r"^(?P<name>[A-Z][A-Za-z ]*):\s*$")
_ARG_SECTIONS = frozenset({"Args", "Arguments", "Parameters", "Params", "Keyword Args"})
_ARG_LINE = re.compile(r"^\s+\**(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")


def _first_paragraph(doc: str) -> str:
    lines = []
    for line in doc.splitlines():
        if not line.strip() or _SECTION.match(line):
            break
        lines.append(line.strip())
    return " ".join(lines)


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and the descriptions of a Google-style ``Args:`` section."""
    described: dict[str, str] = {}
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        section = _SECTION.match(lines[i])
        i += 1
        if section and section["name"] in _ARG_SECTIONS:
            i = _read_args(lines, i, described)
    return _first_paragraph(doc), described


def _read_args(lines: list[str], start: int, described: dict[str, str]) -> int:
    """Read ``name (type): text`` entries from ``start``; return where the section ends.
    Lines indented deeper than the entries continue the entry above them."""
    entry_indent: int | None = None
    current: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            return i
        entry = _ARG_LINE.match(line)
        if entry and (entry_indent is None or indent <= entry_indent):
            entry_indent, current = indent, entry["name"]
            described[current] = entry["text"].strip()
        elif current is not None:
            described[current] = f"{described[current]} {line.strip()}".strip()
    return len(lines)


# --- strict mode -------------------------------------------------------------------------


def strict_problem(schema: Mapping[str, Any], path: str = "parameters") -> str | None:
    """Why ``schema`` cannot be sent with ``strict: true`` (OpenAI's Structured Outputs
    subset: every object closed, every property required), or ``None`` when it can."""
    if schema.get("type") == "object" or "properties" in schema:
        problem = _strict_object(schema, path)
        if problem:
            return problem
    for key in ("items", "additionalProperties"):
        sub = schema.get(key)
        if isinstance(sub, Mapping):
            problem = strict_problem(sub, f"{path}.{key}")
            if problem:
                return problem
    for i, sub in enumerate(schema.get("anyOf", ()) or schema.get("prefixItems", ())):
        problem = strict_problem(sub, f"{path}[{i}]")
        if problem:
            return problem
    return None


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` in which every object schema that does not say whether it
    takes other keys says it does not (``"additionalProperties": false``), as strict mode
    requires. Objects that say (a ``dict[str, T]``, a model with ``extra="allow"``) are
    kept as they are, for :func:`strict_problem` to report."""
    closed = _closed(schema)
    if not isinstance(closed, dict):  # pragma: no cover - a mapping stays a dict
        raise TypeError("a schema is a JSON object")
    return closed


def _closed(node: Any) -> Any:
    if isinstance(node, list):
        return [_closed(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA:
            result[key] = copy.deepcopy(value)
        elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
            result[key] = {k: _closed(v) for k, v in value.items()}
        else:
            result[key] = _closed(value)
    kind = result.get("type")
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    if (is_object or "properties" in result) and "additionalProperties" not in result:
        result["additionalProperties"] = False
    return result


def _strict_object(schema: Mapping[str, Any], path: str) -> str | None:
    if schema.get("additionalProperties") is not False:
        return f"{path}: an object must have additionalProperties false (no dict[str, T])"
    properties = schema.get("properties", {})
    missing = [name for name in properties if name not in schema.get("required", ())]
    if missing:
        return f"{path}: every property must be required; {', '.join(missing)} is not"
    for name, sub in properties.items():
        problem = strict_problem(sub, f"{path}.{name}")
        if problem:
            return problem
    return None
