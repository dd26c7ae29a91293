"""Ollama ``/api/chat`` requests, read and written.

Reading: ``messages`` (``system``, ``user``, ``assistant``, ``tool``) with string
``content``, ``images`` (base64, their type told by their first bytes), ``thinking``,
``tool_calls`` (arguments as an object; a call without an ``id`` gets ``call_<n>``) and a
tool message's ``tool_name`` and ``tool_call_id`` (a result without an id answers the
earliest open call of its tool); ``tools``; ``options`` (``num_predict``, sampling,
``stop``); ``format`` (``"json"`` or a schema); ``think``; ``stream``. Leading system
messages are the system text; what is left is ``extra``.

Writing: text only in ``content`` (images in ``images``; the order of text, images and
calls within a turn is not kept), reasoning text as ``thinking``, one ``tool`` message per
result (a failed one's content starting with ``Error:``), ``stream`` always said (Ollama
streams unless told not to). Ollama has no tool choice, parallel-call switch, cache
points or documents other than text: those are losses. Call ids are written when they are
the client's (``tool_call_id`` pairs results on newer servers), not when laminate made them
up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from ..._core.flex import FlexValue
from ..._core.request import (
    Block,
    CachePoint,
    Document,
    Image,
    JsonSchema,
    Message,
    Request,
    ToolResult,
    ToolSpec,
)
from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse
from ..requestkit import Losses, at, copy_json, get, invalid, items, need, object_at
from ..shapes import ERROR_PREFIX, arguments_object, described
from ..spec import DEFAULT_WRITE_OPTIONS, ToolDefinition, ToolOutcome, WriteOptions, WrittenBody
from ..spec import JsonObject as Json

__all__ = ["PATH", "assistant", "read_request", "results", "tool", "write_request"]

NAME: Final = "ollama"
PATH: Final = "/api/chat"
_MADE_UP: Final = re.compile(r"call_\d+(?:_\d+)*")
_TOP: Final = frozenset({"model", "messages", "tools", "options", "format", "think", "stream"})
_OPTIONS: Final[Mapping[str, str]] = {
    "num_predict": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "stop": "stop",
}
# The first bytes of an image, base64-encoded, and its type.
_MAGIC: Final = (
    ("iVBORw0KGgo", "image/png"),
    ("/9j/", "image/jpeg"),
    ("R0lGOD", "image/gif"),
    ("UklGR", "image/webp"),
)


# -- reading --------------------------------------------------------------------------------


def read_request(body: Mapping[str, Any], path: str | None) -> Request:
    """The neutral request of an ``/api/chat`` body."""
    if "messages" not in body:
        raise invalid("messages", "missing")
    reader = _Reader()
    messages = [
        reader.message(object_at(m, where), where) for where, m in items(body, "messages", "")
    ]
    system: list[Text | CachePoint] = []
    while messages and messages[0].role == "system" and not messages[0].extra:
        system.extend(b for b in messages.pop(0).content if isinstance(b, Text))
    extra = {key: copy_json(value) for key, value in body.items() if key not in _TOP}
    options = get(body, "options", dict, "") or {}
    settings: dict[str, Any] = {}
    for key, field in _OPTIONS.items():
        kind: Any = {"stop": list, "temperature": float, "top_p": float}.get(key, int)
        value = get(options, key, kind, "options")
        if value is not None:
            settings[field] = list(value) if key == "stop" else value
    leftover = {k: copy_json(v) for k, v in options.items() if k not in _OPTIONS}
    if leftover:
        extra["options"] = leftover
    settings["response_format"] = _read_format(body)
    think = body.get("think")
    if think is not None:
        if isinstance(think, bool):
            settings["reasoning"] = "medium" if think else None
            extra["think"] = think  # written back as it came
        elif isinstance(think, str):
            settings["reasoning"] = think
        else:
            raise invalid("think", "expected true, false or an effort level")
    return Request(
        model=get(body, "model", str, "") or "",
        system=system,
        messages=messages,
        tools=[_read_tool(object_at(t, where), where) for where, t in items(body, "tools", "")],
        stream=get(body, "stream", bool, ""),
        extra=extra,
        api=NAME,
        **settings,
    )


def _read_format(body: Mapping[str, Any]) -> JsonSchema | Literal["json"] | None:
    value = body.get("format")
    if value is None or value == "":
        return None
    if value == "json":
        return "json"
    if isinstance(value, Mapping):
        return JsonSchema("response", copy_json(dict(value)))
    raise invalid("format", 'expected "json" or a JSON schema')


def _read_tool(tool: Mapping[str, Any], path: str) -> ToolSpec:
    function = object_at(need(tool, "function", dict, path), at(path, "function"))
    where = at(path, "function")
    return ToolSpec(
        need(function, "name", str, where),
        get(function, "description", str, where) or "",
        copy_json(dict(get(function, "parameters", dict, where) or {})),
    )


class _Reader:
    """Reads the messages in order, pairing results with the calls before them."""

    def __init__(self) -> None:
        self.calls = 0
        self.open: list[tuple[str, str]] = []  # (name, id) of calls not yet answered

    def message(self, message: Mapping[str, Any], path: str) -> Message:
        role = need(message, "role", str, path)
        content = get(message, "content", str, path) or ""
        blocks: list[Block] = []
        match role:
            case "tool":
                return Message("user", [self.result(message, content, path)])
            case "assistant":
                thinking = get(message, "thinking", str, path)
                if thinking:
                    blocks.append(Reasoning(thinking))
                if content:
                    blocks.append(Text(content))
                for where, call in items(message, "tool_calls", path):
                    blocks.append(self.call(object_at(call, where), where))
                return Message("assistant", blocks)
            case "user" | "system":
                blocks.append(Text(content))
                for where, image in items(message, "images", path):
                    if not isinstance(image, str):
                        raise invalid(where, "expected a base64 string")
                    blocks.append(Image(_image_type(image), data=image))
                return Message(role, blocks)
            case _:
                raise invalid(at(path, "role"), f"unknown role {role!r}")

    def call(self, call: Mapping[str, Any], path: str) -> ToolUse:
        function = object_at(need(call, "function", dict, path), at(path, "function"))
        where = at(path, "function")
        name = need(function, "name", str, where)
        args = get(function, "arguments", dict, where) or {}
        ident = get(call, "id", str, path) or f"call_{self.calls}"
        self.calls += 1
        self.open.append((name, ident))
        return ToolUse(ident, name, FlexValue(copy_json(dict(args))))

    def result(self, message: Mapping[str, Any], content: str, path: str) -> ToolResult:
        name = get(message, "tool_name", str, path) or ""
        ident = get(message, "tool_call_id", str, path)
        if ident is None:
            ident = next((i for n, i in self.open if n == name or not name), f"call_{self.calls}")
        self.open = [(n, i) for n, i in self.open if i != ident]
        return ToolResult(tool_use_id=ident, content=content, is_error=False, name=name)


def _image_type(data: str) -> str:
    return next((kind for magic, kind in _MAGIC if data.startswith(magic)), "image/png")


# -- writing --------------------------------------------------------------------------------


def write_request(
    request: Request, write_options: WriteOptions = DEFAULT_WRITE_OPTIONS
) -> WrittenBody:
    """``request`` as an ``/api/chat`` body, its path and what it lost."""
    losses = Losses()
    if request.allowed_tools is not None:
        losses.add("allowed_tools", "unsupported")  # every tool stays offered
    own = request.api == NAME
    extra = losses.source_only(request, NAME)
    messages: list[Json] = []
    for index, block in enumerate(request.system):
        if isinstance(block, Text):
            messages.append({"role": "system", "content": block.text})
        else:
            losses.add(at("system", index), "unsupported")
    names = {
        b.id: b.name
        for m in request.messages
        for b in m.content
        if isinstance(b, ToolUse | InvalidToolUse)
    }
    for index, message in enumerate(request.messages):
        messages.extend(_message(message, own, names, at("messages", index), losses))
    body: Json = {"model": request.model, "messages": messages}
    tools = [_tool(spec, own, at("tools", i), losses) for i, spec in enumerate(request.tools)]
    if any(tools):
        body["tools"] = [t for t in tools if t is not None]
    if request.tool_choice == "auto":
        losses.add("tool_choice", "approximated")  # not said: what Ollama always does
    elif request.tool_choice is not None:
        losses.add("tool_choice", "unsupported")
    if request.parallel_tool_calls is False:
        losses.add("parallel_tool_calls", "unsupported")
    options: Json = {}
    for key, field in _OPTIONS.items():
        value = getattr(request, field)
        if value is not None and value != []:
            options[key] = list(value) if key == "stop" else value
    options.update(extra.pop("options", {}))
    if options:
        body["options"] = options
    if request.response_format is not None:
        body["format"] = (
            "json"
            if request.response_format == "json"
            else copy_json(dict(request.response_format.schema))
        )
    if request.reasoning is not None:
        body["think"] = _think(request.reasoning, losses)
    if request.stream is not None or not own:
        body["stream"] = bool(request.stream)  # Ollama streams unless told not to
    if request.user is not None:
        losses.add("user", "unsupported")
    body.update(extra)
    return body, PATH, losses


def _think(reasoning: str | int, losses: Losses) -> bool | str:
    if isinstance(reasoning, str) and reasoning in ("low", "medium", "high"):
        return reasoning
    losses.add("reasoning", "approximated")
    return True


def _tool(spec: ToolSpec, own: bool, path: str, losses: Losses) -> Json | None:
    if spec.kind != "function":
        losses.add(path, "unsupported")
        return None
    for key in spec.extra if not own else ():
        losses.add(at(path, key), "source-only")
    function: Json = {"name": spec.name}
    if spec.description:
        function["description"] = spec.description
    schema = copy_json(dict(spec.schema)) or {"type": "object", "properties": {}}
    function["parameters"] = schema if own else _ollama_schema(schema, at(path, "schema"), losses)
    if spec.strict:
        losses.add(at(path, "strict"), "unsupported")
    return {"type": "function", "function": function}


# The parts of a JSON Schema Ollama reads (its server's tool types): the rest is dropped.
_SCHEMA_KEYS: Final = frozenset({"type", "$defs", "items", "required", "properties"})
_PROPERTY_KEYS: Final = frozenset({"type", "items", "description", "enum"})


def _ollama_schema(schema: dict[str, Any], path: str, losses: Losses) -> dict[str, Any]:
    kept = {k: v for k, v in schema.items() if k in _SCHEMA_KEYS}
    dropped = len(kept) < len(schema)
    properties = kept.get("properties")
    if isinstance(properties, dict):
        kept["properties"] = {}
        for name, given in properties.items():
            if isinstance(given, dict):
                trimmed = {k: v for k, v in given.items() if k in _PROPERTY_KEYS}
                dropped = dropped or len(trimmed) < len(given)
                kept["properties"][name] = trimmed
            else:
                kept["properties"][name] = given
    if dropped:
        losses.add(path, "schema")
    return kept


def _message(
    message: Message, own: bool, names: Mapping[str, str], path: str, losses: Losses
) -> list[Json]:
    if message.role == "assistant":
        return [_assistant(message.content, own, path, losses, ids=False)]
    out: list[Json] = []
    texts: list[str] = []
    images: list[str] = []
    for index, block in enumerate(message.content):
        where = at(at(path, "content"), index)
        match block:
            case ToolResult():
                out.append(_result(block, names, where, losses, ids=False))
            case Text(text=text):
                texts.append(text)
            case Image(data=str(data)):
                images.append(data)
            case Document(text=str(text)):
                texts.append(f"{block.title}\n\n{text}" if block.title else text)
                losses.add(where, "approximated")
            case _:
                losses.add(where, "unsupported")
    if texts or images or not out:
        written: Json = {"role": message.role, "content": "".join(texts)}
        if images:
            written["images"] = images
        out.append(written)
    return out


def _assistant(blocks: Sequence[Block], own: bool, path: str, losses: Losses, *, ids: bool) -> Json:
    """One assistant message: the text, the reasoning text as ``thinking``, the calls
    (``ids``: every call's id and index, as the tool loop pairs results on them;
    otherwise only the ids the client gave)."""
    message: Json = {"role": "assistant", "content": ""}
    thinking: list[str] = []
    calls: list[Json] = []
    for index, block in enumerate(blocks):
        where = at(at(path, "content"), index)
        match block:
            case Text(text=text):
                message["content"] += text
            case Reasoning():
                if block.text and not block.redacted:
                    thinking.append(block.text)
                if block.signature and not own:
                    losses.add(where, "foreign-reasoning")  # the text goes, not the token
            case ToolUse() | InvalidToolUse():
                call: Json = {
                    "function": {"name": block.name, "arguments": arguments_object(block)}
                }
                if ids or not _MADE_UP.fullmatch(block.id):
                    call = {"id": block.id, "function": {"index": len(calls), **call["function"]}}
                calls.append(call)
            case _:
                losses.add(where, "unsupported")
    if thinking:
        message["thinking"] = "".join(thinking)
    if calls:
        message["tool_calls"] = calls
    return message


def _result(
    result: ToolResult, names: Mapping[str, str], path: str, losses: Losses, *, ids: bool
) -> Json:
    written: Json = {"role": "tool"}
    name = result.name or names.get(result.tool_use_id, "")
    if name:
        written["tool_name"] = name
    if ids or not _MADE_UP.fullmatch(result.tool_use_id):
        written["tool_call_id"] = result.tool_use_id
    output = result.output
    if not isinstance(result.content, str):
        texts: list[str] = []
        for index, block in enumerate(result.content):
            match block:
                case Text(text=text):
                    texts.append(text)
                case Document(text=str(text)):  # a tool's document: its text
                    texts.append(f"{block.title}\n\n{text}" if block.title else text)
                    losses.add(at(at(path, "content"), index), "approximated")
                case _:
                    losses.add(at(at(path, "content"), index), "unsupported")
        output = "".join(texts)
    if result.is_error and not output.startswith(ERROR_PREFIX.strip()):
        output = ERROR_PREFIX + output
    written["content"] = output
    return written


# -- the tool loop's shapes -----------------------------------------------------------------


def tool(tool: ToolDefinition) -> Json:
    """One ``tools`` entry."""
    function = {"name": tool.name, **described(tool), "parameters": copy_json(tool.parameters)}
    return {"type": "function", "function": function}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Json:
    """The assistant turn: text, reasoning text as ``thinking``, every call with an id."""
    own = response.provider == NAME
    return _assistant(list(response.content), own, "", Losses(), ids=True)


def results(results: Sequence[ToolOutcome]) -> list[Json]:
    """One ``tool`` message per result, with ``tool_name`` and ``tool_call_id``."""
    return [
        _result(ToolResult(r.call_id, r.name, r.output, r.ok), {}, "", Losses(), ids=True)
        for r in results
    ]
