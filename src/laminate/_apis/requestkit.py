"""What every API's request reader and writer share.

Readers take a body as parsed JSON and must turn anything that is not a valid request into
a :class:`TranslationError` that names the path (``messages[2].content``), never a
``KeyError`` or ``TypeError`` from inside: the typed getters below do that once. Writers
collect :class:`Loss` records in a :class:`Losses` list as they leave something out.

A request read from a body shares its nested values (a tool's schema, a call's
arguments, ``extra``) with that body: reading copies nothing, so it costs about one walk
of the body. Writers copy every nested value they write (:func:`copy_json`), so a written
body shares nothing with the request or with the body it was read from.

A loss's path names the place in the neutral request (``messages[2].content[1]``,
``top_k``, ``extra.metadata``, ``tools[0]``), which is where it was in the source body for
every API whose conversation is a ``messages`` list.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any, Final, TypeVar, cast

from .._core.errors import TranslationError
from .._core.flex import FlexValue
from .._core.request import LOSS_REASONS, Block, CachePoint, Loss, Message, Request, ToolResult
from .._core.response import InvalidToolUse, Reasoning, Text, ToolUse, Unknown
from .shapes import ERROR_PREFIX

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "Losses",
    "at",
    "budget_of",
    "call_of",
    "copy_json",
    "custom_call",
    "data_url",
    "effort_of",
    "extra_fields",
    "flagged_output",
    "get",
    "invalid",
    "is_custom",
    "items",
    "merged",
    "model_for_path",
    "need",
    "object_at",
    "opaque_for",
    "parse_data_url",
    "plain_text",
    "strict_compatible",
    "system_text",
]

DEFAULT_MAX_TOKENS: Final = 4096
"""The ``max_tokens`` written for an API that requires one when the source has none."""

T = TypeVar("T")

_TYPE_NAMES: Final[Mapping[type, str]] = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "true or false",
    int: "an integer",
    float: "a number",
}


def invalid(path: str, message: str) -> TranslationError:
    """The error for a body that is not a valid request at ``path``."""
    where = f" at {path}" if path else ""
    return TranslationError(f"not a valid request{where}: {message}", path=path, reason="invalid")


def model_for_path(model: str, api: str, pattern: re.Pattern[str], shape: str) -> str:
    """``model`` as the one path segment ``api``'s servers route on, when ``pattern`` takes
    it whole; else the error that says so. A name no such server can serve (a router's
    ``anthropic/claude-haiku-4.5`` for Gemini) is not guessed at or escaped into a path the
    server refuses: a translator maps it to one of the backend's models first. An empty
    model (a body read without the path that names it) is written as it came."""
    if model and pattern.fullmatch(model) is None:
        raise TranslationError(
            f"the model name {model!r} cannot be a {api} model ({shape}): map the client's "
            "model to one of the backend's (the proxy's --model)",
            path="model",
            reason="model",
        )
    return model


def at(path: str, key: str | int) -> str:
    """``path`` one step further: ``at("messages", 2)`` is ``"messages[2]"``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _typed(value: Any, kind: type[T] | tuple[type, ...], path: str) -> T:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if type(value) in kinds:  # the usual case: exactly the JSON type wanted
        return cast(T, value)
    # JSON numbers: an integer is a number too; a boolean is never a number.
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if dict in kinds and isinstance(value, Mapping):
        ok = True
    if not ok:
        wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise invalid(path, f"expected {wanted}, got {_json_type(value)}")
    return cast(T, value)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in _TYPE_NAMES.items():
        if isinstance(value, kind):
            return name.split(" ", 1)[1] if " " in name else name
    return type(value).__name__


def need(obj: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], path: str) -> T:
    """``obj[key]``, which must be there and of ``kind``."""
    if key not in obj or obj[key] is None:
        raise invalid(at(path, key), "missing")
    return _typed(obj[key], kind, at(path, key))


def get(obj: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], path: str) -> T | None:
    """``obj[key]`` when present and not null (then of ``kind``), else ``None``."""
    value = obj.get(key)
    if value is None:
        return None
    return _typed(value, kind, at(path, key))


def object_at(value: Any, path: str) -> Mapping[str, Any]:
    """``value``, which must be a JSON object."""
    return _typed(value, dict, path)


def items(obj: Mapping[str, Any], key: str, path: str) -> list[tuple[str, Any]]:
    """``(path, item)`` for each item of the array ``obj[key]`` (none when absent)."""
    array = get(obj, key, list, path)
    if array is None:
        return []
    where = at(path, key)
    return [(at(where, i), item) for i, item in enumerate(array)]


def extra_fields(obj: Mapping[str, Any], known: frozenset[str] | set[str]) -> dict[str, Any]:
    """The fields of ``obj`` that are not ``known`` (their values shared, as a reader
    shares every value with the body it read)."""
    return {k: v for k, v in obj.items() if k not in known}


def copy_json(value: T) -> T:
    """A deep copy of JSON data, so nothing written shares state with what was read.

    Plain dicts and lists are rebuilt (several times faster than ``copy.deepcopy``, which
    keeps a memo for cycles JSON cannot have); anything else is deep-copied."""
    kind = type(value)
    if kind is dict:
        return {k: copy_json(v) for k, v in value.items()}  # type: ignore[attr-defined,return-value]
    if kind is list:
        return [copy_json(v) for v in value]  # type: ignore[attr-defined,return-value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


_ATOMS: Final = frozenset({str, int, float, bool, type(None)})


def plain_text(blocks: list[Block]) -> str:
    """The text of the ``Text`` blocks, joined."""
    return "".join(b.text for b in blocks if isinstance(b, Text))


def system_text(request: Request) -> str:
    """The system text as one string (blocks joined with a blank line)."""
    return "\n\n".join(b.text for b in request.system if isinstance(b, Text) and b.text)


class Losses(list[Loss]):
    """The losses of one write, in the order found."""

    def add(self, path: str, reason: str) -> None:
        if reason not in LOSS_REASONS:  # the vocabulary is fixed and documented
            raise ValueError(f"unknown loss reason {reason!r}")
        self.append(Loss(path, reason))

    def source_only(self, request: Request, target: str) -> dict[str, Any]:
        """The request's ``extra`` when it came from ``target``; otherwise each of its
        fields is a loss and nothing is returned."""
        if request.api == target:
            return copy_json(dict(request.extra))
        for key, value in request.extra.items():
            if value is not None:  # an explicit null carries nothing
                self.add(at("extra", key), "source-only")
        return {}


def opaque_for(request_api: str | None, target: str, block: Block) -> bool:
    """Whether ``block`` carries something only its source API can read (reasoning with a
    signature, an opaque token, an ``Unknown`` block) and so goes to ``target`` only when
    that is the API the request came from."""
    if request_api == target:
        return False
    match block:
        case Reasoning(signature=str()) | Reasoning(redacted=True) | Unknown():
            return True
        case Text(signature=str()) | ToolUse(signature=str()):
            return True
        case _:
            return False


def is_cache_point(block: Block) -> bool:
    return isinstance(block, CachePoint)


_DATA_URL: Final = re.compile(r"data:([^;,]*)(?:;[^,]*)?;base64,(.*)", re.DOTALL)


def parse_data_url(url: str) -> tuple[str, str] | None:
    """``(media type, base64 data)`` of a ``data:`` URL, ``None`` for any other URL."""
    found = _DATA_URL.fullmatch(url)
    return (found.group(1), found.group(2)) if found else None


def data_url(media_type: str, data: str) -> str:
    """A ``data:`` URL of base64 ``data``."""
    return f"data:{media_type};base64,{data}"


# Effort levels and token budgets map onto each other by these bounds (a budget up to the
# first is "low", up to the second "medium", above "high"); an effort becomes the budget
# in the middle of its range.
_BUDGETS: Final = (("low", 2048), ("medium", 8192), ("high", 24576))


def effort_of(budget: int) -> str:
    """The effort level a token budget falls in."""
    for effort, bound in _BUDGETS[:-1]:
        if budget <= bound:
            return effort
    return "high"


def budget_of(effort: str) -> int:
    """A token budget for an effort level (``"minimal"`` is the smallest)."""
    for name, budget in _BUDGETS:
        if name == effort:
            return budget
    return 1024 if effort in ("minimal", "none") else _BUDGETS[-1][1]


def call_of(ident: str, name: str, arguments: str) -> ToolUse | InvalidToolUse:
    """A call whose arguments came as JSON text: a ``ToolUse`` when they are an object,
    else an ``InvalidToolUse`` that keeps the text."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return InvalidToolUse(ident, name, arguments, "arguments are not valid JSON")
    if not isinstance(value, dict):
        return InvalidToolUse(ident, name, arguments, "arguments are not a JSON object")
    return ToolUse(ident, name, FlexValue(value))


_CUSTOM: Final[dict[str, Any]] = (
    {"kind": "custom"} if "kind" in getattr(ToolUse, "__dataclass_fields__", {}) else {}
)


def custom_call(ident: str, name: str, text: str) -> ToolUse:
    """A call of a custom (free-form) tool: its input is text."""
    return ToolUse(ident, name, FlexValue(text), **_CUSTOM)


def is_custom(call: ToolUse) -> bool:
    """Whether ``call`` is a custom tool's (its input is text, not an object)."""
    return isinstance(call.input.value, str)


def flagged_output(result: ToolResult) -> str:
    """A result's text, starting with ``Error:`` when it failed, for an API that has no
    error flag."""
    output = result.output
    if not result.is_error or output.startswith(ERROR_PREFIX.strip()):
        return output
    return ERROR_PREFIX + output


def merged(messages: list[Message]) -> list[Message]:
    """Consecutive messages of the same role as one (their ``extra`` merged), for an API
    that wants turns to alternate, or one turn per answer (a Responses conversation is a
    list of items, one message each)."""
    out: list[Message] = []
    for message in messages:
        if out and out[-1].role == message.role and message.role != "system":
            last = out[-1]
            out[-1] = Message(
                last.role, [*last.content, *message.content], {**last.extra, **message.extra}
            )
        else:
            out.append(message)
    return out


def strict_compatible(schema: Any) -> bool:
    """Whether a schema keeps OpenAI's strict-mode rules: every object closed
    (``additionalProperties: false``) with every property required, all the way down."""
    if not isinstance(schema, Mapping):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or not isinstance(properties, Mapping):
            return False
        required = schema.get("required", [])
        if not isinstance(required, list) or {r for r in required if isinstance(r, str)} != set(
            properties
        ):
            return False
        if not all(strict_compatible(p) for p in properties.values()):
            return False
    return _nested_ok(schema)


def _nested_ok(schema: Mapping[str, Any]) -> bool:
    for key in ("items", "anyOf", "allOf", "oneOf", "$defs", "definitions"):
        value = schema.get(key)
        if isinstance(value, list):
            if not all(strict_compatible(v) for v in value):
                return False
        elif key in ("$defs", "definitions") and isinstance(value, Mapping):
            if not all(strict_compatible(v) for v in value.values()):
                return False
        elif value is not None and not strict_compatible(value):
            return False
    return True
