"""Chat Completions requests: read a ``/v1/chat/completions`` body, write one.

Reading: ``system`` messages before the conversation are the system text; a ``developer``
message, or a system message later on, stays a ``system`` message where it was (its role
kept in the message's ``extra``). Content parts (``text``, ``image_url`` with a ``data:``
URL or a link, ``file``, Mistral's ``thinking`` as reasoning), ``tool_calls``
(functions, and custom tools whose input is text), ``tool`` messages (each a user turn of
one :class:`ToolResult`, named after its call), ``tools``, ``tool_choice`` (an
``allowed_tools`` one as its mode and ``allowed_tools``), ``parallel_tool_calls``,
``max_completion_tokens`` or ``max_tokens`` (the spelling kept: ``extra["max_tokens"]``
is ``None`` when the client said ``max_tokens``), ``stop``, ``reasoning_effort``,
``response_format``, ``user``, ``stream`` (``stream_options`` asking only for usage is
implied by it). What is left is ``extra``.

Writing: the system text as one ``system`` message per block, tool results as ``tool``
messages right after the call (a failed one's content starting with ``Error:``, the
format has no error flag; images of a result follow in a user message), the assistant's
text and calls as one message (its ``content`` ``None`` when it only calls tools), no
message with an empty content list (a cache breakpoint is a mark, not a block), the
output limit under the client's spelling or, translated, the one
:class:`~laminate._apis.spec.WriteOptions` picks, ``stream_options.include_usage``
whenever the request streams (else the stream has no usage), a token budget as the
nearest effort. Another provider's reasoning, cache breakpoints, ``top_k`` and another
API's blocks cannot be carried: losses.

The tool loop's shapes (``tool``, ``assistant``, ``results``) are this writer's.
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
from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..requestkit import (
    Losses,
    at,
    call_of,
    copy_json,
    custom_call,
    data_url,
    effort_of,
    extra_fields,
    flagged_output,
    get,
    invalid,
    is_custom,
    items,
    need,
    object_at,
    parse_data_url,
    strict_compatible,
)
from ..shapes import arguments_text, reasoning_text
from ..spec import DEFAULT_WRITE_OPTIONS, ToolDefinition, ToolOutcome, WriteOptions, WrittenBody
from ..spec import JsonObject as Json

__all__ = ["PATH", "assistant", "read_request", "results", "tool", "write_request"]

NAME: Final = "openai"
PATH: Final = "/v1/chat/completions"

_TOP: Final = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_completion_tokens",
        "max_tokens",
        "temperature",
        "top_p",
        "stop",
        "reasoning_effort",
        "response_format",
        "user",
        "stream",
    }
)
_INCLUDE_USAGE: Final = {"include_usage": True}
_DETAILS: Final = frozenset({"auto", "low", "high"})
# OpenAI's reasoning models, which refuse ``max_tokens`` (a name with a ``provider/``
# prefix is a compatible server's, which reads ``max_tokens``).
_REASONING_MODEL: Final = re.compile(r"(o[1-9]|gpt-[5-9]|gpt-[1-9][0-9])(\b|[-.])")


# -- reading --------------------------------------------------------------------------------


def read_request(body: Mapping[str, Any], path: str | None) -> Request:
    system: list[Text | CachePoint] = []
    messages: list[Message] = []
    names: dict[str, str] = {}
    for where, item in items(body, "messages", ""):
        message = object_at(item, where)
        role = need(message, "role", str, where)
        if role == "system" and not messages and isinstance(message.get("content"), str):
            if set(message) != {"role", "content"}:
                messages.append(_read_system(message, where))
                continue
            system.append(Text(message["content"]))
            continue
        messages.append(_read_message(message, role, where, names))
    extra = extra_fields(body, _TOP)
    options = body.get("stream_options")
    if options == _INCLUDE_USAGE and body.get("stream") is True:
        del extra["stream_options"]  # implied by streaming: written whenever it streams
    choice = _read_choice(body, extra)
    allowed = None
    if isinstance(choice, tuple):
        choice, allowed = choice
    max_tokens = get(body, "max_completion_tokens", int, "")
    older = get(body, "max_tokens", int, "")
    if max_tokens is None and older is not None:
        max_tokens = older
        extra["max_tokens"] = None  # the spelling its client used, kept for this API
    elif older is not None:
        extra["max_tokens"] = older  # both given: the older one is kept as it came
    stop = body.get("stop")
    return Request(
        model=need(body, "model", str, ""),
        system=system,
        messages=messages,
        tools=[_read_tool(object_at(t, p), p) for p, t in items(body, "tools", "")],
        tool_choice=choice,
        allowed_tools=allowed,
        parallel_tool_calls=get(body, "parallel_tool_calls", bool, ""),
        max_tokens=max_tokens,
        temperature=get(body, "temperature", float, ""),
        top_p=get(body, "top_p", float, ""),
        stop=[stop]
        if isinstance(stop, str)
        else [need({"s": s}, "s", str, p) for p, s in items(body, "stop", "")],
        reasoning=get(body, "reasoning_effort", str, ""),
        response_format=_read_format(body, extra),
        user=get(body, "user", str, ""),
        stream=get(body, "stream", bool, ""),
        extra=extra,
        api=NAME,
    )


def _read_system(message: Mapping[str, Any], path: str) -> Message:
    role = message["role"]
    blocks = _read_content(message, path)
    extra = extra_fields(message, {"role", "content"})
    if role != "system":
        extra["role"] = role
    return Message("system", blocks, extra)


def _read_message(
    message: Mapping[str, Any], role: str, path: str, names: dict[str, str]
) -> Message:
    match role:
        case "system" | "developer":
            return _read_system(message, path)
        case "user":
            return Message(
                "user", _read_content(message, path), extra_fields(message, {"role", "content"})
            )
        case "assistant":
            blocks = _read_content(message, path)
            for p, item in items(message, "tool_calls", path):
                call = _read_call(object_at(item, p), p)
                names[call.id] = call.name
                blocks.append(call)
            known = {"role", "content", "tool_calls"}
            return Message("assistant", blocks, extra_fields(message, known))
        case "tool":
            ident = need(message, "tool_call_id", str, path)
            content = message.get("content")
            parts: str | list[Any] = (
                content if isinstance(content, str) else _read_content(message, path)
            )
            result = ToolResult(ident, names.get(ident, ""), is_error=False, content=parts)
            known = {"role", "content", "tool_call_id"}
            return Message("user", [result], extra_fields(message, known))
        case _:
            raise invalid(at(path, "role"), f"unknown role {role!r}")


def _read_content(message: Mapping[str, Any], path: str) -> list[Block]:
    content = message.get("content")
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content or message.get("role") != "assistant" else []
    blocks: list[Block] = []
    for p, item in items(message, "content", path):
        part = object_at(item, p)
        blocks.append(_read_part(part, p))
    return blocks


def _read_part(part: Mapping[str, Any], path: str) -> Block:
    kind = need(part, "type", str, path)
    match kind:
        case "text" if set(part) == {"type", "text"}:
            return Text(need(part, "text", str, path))
        case "image_url":
            image = need(part, "image_url", dict, path)
            url = need(image, "url", str, at(path, "image_url"))
            rest = extra_fields(image, {"url"})
            inline = parse_data_url(url)
            if inline is not None:
                return Image(inline[0], data=inline[1], extra=rest)
            return Image("", url=url, extra=rest)
        case "thinking" if set(part) == {"type", "thinking"}:
            chunks = part["thinking"]
            if isinstance(chunks, list) and all(
                isinstance(c, Mapping)
                and c.get("type") == "text"
                and set(c) == {"type", "text"}
                and isinstance(c["text"], str)
                for c in chunks
            ):
                return Reasoning("".join(c["text"] for c in chunks))
        case "file":
            file = need(part, "file", dict, path)
            data = get(file, "file_data", str, at(path, "file"))
            inline = parse_data_url(data) if data is not None else None
            if inline is not None and set(file) <= {"file_data", "filename"}:
                title = get(file, "filename", str, at(path, "file"))
                return Document(inline[0], data=inline[1], title=title)
    return Unknown(kind, FlexValue({k: v for k, v in part.items() if k != "type"}))


def _read_call(call: Mapping[str, Any], path: str) -> ToolUse | InvalidToolUse:
    kind = call.get("type", "function")
    ident = need(call, "id", str, path)
    if kind == "custom":
        custom = need(call, "custom", dict, path)
        where = at(path, "custom")
        return custom_call(
            ident, need(custom, "name", str, where), need(custom, "input", str, where)
        )
    function = need(call, "function", dict, path)
    where = at(path, "function")
    name = need(function, "name", str, where)
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        raise invalid(at(where, "arguments"), "expected a string")
    return call_of(ident, name, arguments)


def _read_tool(tool: Mapping[str, Any], path: str) -> ToolSpec:
    kind = need(tool, "type", str, path)
    if kind == "function":
        function = need(tool, "function", dict, path)
        where = at(path, "function")
        return ToolSpec(
            need(function, "name", str, where),
            get(function, "description", str, where) or "",
            get(function, "parameters", dict, where) or {},
            get(function, "strict", bool, where),
            extra=extra_fields(function, {"name", "description", "parameters", "strict"}),
        )
    if kind == "custom":
        custom = need(tool, "custom", dict, path)
        where = at(path, "custom")
        return ToolSpec(
            need(custom, "name", str, where),
            get(custom, "description", str, where) or "",
            kind="custom",
            extra=extra_fields(custom, {"name", "description"}),
        )
    return ToolSpec(str(tool.get("name", "")), kind=kind, extra=dict(tool))


def _allowed_names(choice: Mapping[str, Any]) -> list[str] | None:
    """The tool names of an ``allowed_tools`` choice, when it is only names of function
    and custom tools (as this writer writes it); else ``None``."""
    allowed = choice["allowed_tools"]
    tools = allowed.get("tools")
    if len(choice) != 2 or set(allowed) != {"mode", "tools"} or not isinstance(tools, list):
        return None
    names = []
    for tool in tools:
        match tool:
            case {"type": "function", "function": {"name": str(name)}} if len(tool) == 2:
                names.append(name)
            case {"type": "custom", "custom": {"name": str(name)}} if len(tool) == 2:
                names.append(name)
            case _:
                return None
    return names


def _read_choice(
    body: Mapping[str, Any], extra: dict[str, Any]
) -> str | tuple[str, list[str]] | None:
    choice = body.get("tool_choice")
    match choice:
        case None:
            return None
        case "auto" | "none":
            return str(choice)
        case "required":
            return "any"
        case {"type": "function", "function": {"name": str(name)}} if len(choice) == 2:
            return name
        case {"type": "custom", "custom": {"name": str(name)}} if len(choice) == 2:
            return name
        case {"type": "allowed_tools", "allowed_tools": {"mode": "auto" | "required" as mode}}:
            names = _allowed_names(choice)
            if names is not None:
                return ("any" if mode == "required" else "auto"), names
            extra["tool_choice"] = choice
            return None
        case dict():
            extra["tool_choice"] = choice  # another kind of choice: written back as it came
            return None
        case _:
            raise invalid("tool_choice", "expected a string or an object")


def _read_format(
    body: Mapping[str, Any], extra: dict[str, Any]
) -> JsonSchema | Literal["json"] | None:
    form = get(body, "response_format", dict, "")
    if form is None:
        return None
    kind = form.get("type")
    if kind == "json_object" and set(form) == {"type"}:
        return "json"
    schema = form.get("json_schema")
    if (
        kind == "json_schema"
        and isinstance(schema, Mapping)
        and set(schema) <= {"name", "schema", "strict"}
    ):
        where = "response_format.json_schema"
        return JsonSchema(
            need(schema, "name", str, where),
            get(schema, "schema", dict, where) or {},
            get(schema, "strict", bool, where),
        )
    extra["response_format"] = dict(form)
    return None


# -- writing --------------------------------------------------------------------------------


def write_request(request: Request, options: WriteOptions = DEFAULT_WRITE_OPTIONS) -> WrittenBody:
    losses = Losses()
    own = request.api == NAME
    extra = losses.source_only(request, NAME)
    body: dict[str, Any] = {"model": request.model}
    messages: list[Json] = []
    for i, block in enumerate(request.system):
        if isinstance(block, Text):
            messages.append({"role": "system", "content": block.text})
        else:
            losses.add(f"system[{i}]", "unsupported")
    for i, message in enumerate(request.messages):
        messages.extend(_message(message, own, f"messages[{i}]", losses))
    body["messages"] = messages
    tools = [
        t for i, spec in enumerate(request.tools) if (t := _tool(spec, own, f"tools[{i}]", losses))
    ]
    if tools:
        body["tools"] = tools
    if request.allowed_tools is not None and request.tool_choice not in (None, "auto", "any"):
        losses.add("allowed_tools", "unsupported")  # the choice says more
    choice = _write_choice(request)
    if choice is not None:
        body["tool_choice"] = choice
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    field = _limit_field(request, extra, options)
    if request.max_tokens is not None:
        body[field] = request.max_tokens
    for key in ("temperature", "top_p"):
        value = getattr(request, key)
        if value is not None:
            body[key] = value
    if request.top_k is not None:
        losses.add("top_k", "unsupported")
    if request.stop:
        body["stop"] = list(request.stop)
    match request.reasoning:
        case str(effort):
            body["reasoning_effort"] = effort
        case int(budget):
            losses.add("reasoning", "approximated")
            body["reasoning_effort"] = effort_of(budget)
    match request.response_format:
        case "json":
            body["response_format"] = {"type": "json_object"}
        case JsonSchema(name=name, schema=schema, strict=strict):
            described: Json = {"name": name or "response", "schema": copy_json(dict(schema))}
            if strict is not None:
                described["strict"] = strict
            body["response_format"] = {"type": "json_schema", "json_schema": described}
    if request.user is not None:
        body["user"] = request.user
    if request.stream is not None:
        body["stream"] = request.stream
        if request.stream:
            body["stream_options"] = dict(_INCLUDE_USAGE)
    body.update(extra)
    if options.cache_key is not None:
        body.setdefault("prompt_cache_key", options.cache_key)
    return body, PATH, losses


def _limit_field(request: Request, extra: Json, options: WriteOptions) -> str:
    """Where the output limit goes: the client's own spelling for a request read from
    this API (``extra["max_tokens"]`` is ``None`` when it said ``max_tokens``), else the
    caller's choice (see :class:`~laminate._apis.spec.WriteOptions`)."""
    if request.api == NAME:
        if "max_tokens" in extra and extra["max_tokens"] is None:
            del extra["max_tokens"]
            return "max_tokens"
        return "max_completion_tokens"
    if options.max_tokens_field != "auto":
        return options.max_tokens_field
    return "max_completion_tokens" if _REASONING_MODEL.match(request.model) else "max_tokens"


def _message(message: Message, own: bool, path: str, losses: Losses) -> list[Json]:
    extra = _extra(message, own, path, losses)
    match message.role:
        case "system":
            role = extra.pop("role", "system")
            return [
                {"role": role, "content": _content(message.content, own, path, losses), **extra}
            ]
        case "assistant":
            return [_assistant(message.content, own, path, losses, extra)]
        case _:
            return _user(message.content, own, path, losses, extra)


def _extra(message: Message, own: bool, path: str, losses: Losses) -> Json:
    if own:
        return copy_json(dict(message.extra))
    for key in message.extra:
        losses.add(at(path, key), "source-only")
    return {}


def _content(blocks: Sequence[Block], own: bool, path: str, losses: Losses) -> str | list[Json]:
    parts: list[Json] = []
    for j, block in enumerate(blocks):
        part = _part(block, own, f"{path}.content[{j}]", losses)
        if part is not None:
            parts.append(part)
    if all(p["type"] == "text" for p in parts) and len(parts) <= 1:
        return str(parts[0]["text"]) if parts else ""
    return parts


def _part(block: Block, own: bool, path: str, losses: Losses) -> Json | None:
    match block:
        case Text(text=text):
            if block.signature is not None:
                losses.add(path, "foreign-reasoning")
            return {"type": "text", "text": text}
        case Image():
            url = block.url if block.data is None else data_url(block.media_type, block.data)
            image: Json = {"url": url or ""}
            if own:
                image.update(copy_json(dict(block.extra)))
            else:
                for key, value in block.extra.items():
                    if (
                        key == "detail" and isinstance(value, str) and value in _DETAILS
                    ):  # the Responses API's too
                        image["detail"] = value
                    else:
                        losses.add(at(path, key), "source-only")
            return {"type": "image_url", "image_url": image}
        case Document(data=str(data)):
            file: Json = {"file_data": data_url(block.media_type, data)}
            if block.title is not None:
                file["filename"] = block.title
            return {"type": "file", "file": file}
        case Document(text=str(text)):
            losses.add(path, "approximated")
            return {"type": "text", "text": text}
        case Unknown(block_type=kind, data=data) if own:
            return {"type": kind, **copy_json(data.value or {})}
        case CachePoint():
            losses.add(path, "unsupported")
            return None
        case Reasoning():
            losses.add(path, "foreign-reasoning")
            return None
        case _:
            losses.add(path, "source-only" if isinstance(block, Unknown) else "unsupported")
            return None


def _user(blocks: Sequence[Block], own: bool, path: str, losses: Losses, extra: Json) -> list[Json]:
    out: list[Json] = []
    rest: list[tuple[str, Block]] = []
    after: list[tuple[str, Block]] = []
    for j, block in enumerate(blocks):
        where = f"{path}.content[{j}]"
        if isinstance(block, ToolResult):
            message, images = _tool_message(block, own, where, losses)
            out.append({**message, **(extra if own else {})})
            after.extend((f"{where}.content[{k}]", image) for k, image in images)
        else:
            rest.append((where, block))
    rest = after + rest
    if rest or not out:
        content = _user_content(rest, own, losses)
        if content != [] or (own and not rest):
            # A message whose every block was left out (a cache breakpoint is a mark
            # on the block before it, never a block) is not written: servers refuse an
            # empty content list.
            out.append({"role": "user", "content": content, **extra})
    return out


def _user_content(
    blocks: Sequence[tuple[str, Block]], own: bool, losses: Losses
) -> str | list[Json]:
    parts = [p for where, b in blocks if (p := _part(b, own, where, losses))]
    if len(parts) == 1 and parts[0]["type"] == "text" and not own:
        return str(parts[0]["text"])
    return parts


def _tool_message(
    result: ToolResult, own: bool, path: str, losses: Losses
) -> tuple[Json, list[tuple[int, Block]]]:
    images: list[tuple[int, Block]] = []
    content: str | list[Json]
    if isinstance(result.content, str) or result.is_error:
        content = flagged_output(result)
    else:
        texts: list[Json] = []
        for k, part in enumerate(result.content):
            if isinstance(part, Text):
                texts.append({"type": "text", "text": part.text})
            elif isinstance(part, Document) and part.text is not None:
                losses.add(f"{path}.content[{k}]", "approximated")  # its text, as text
                texts.append({"type": "text", "text": part.text})
            elif isinstance(part, Image):
                images.append((k, part))  # a tool message holds text only: the image follows
                losses.add(f"{path}.content[{k}]", "reordered")
            else:
                losses.add(f"{path}.content[{k}]", "unsupported")
        content = texts if (own and texts) or len(texts) > 1 else _joined(texts)
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": content}, images


def _joined(texts: list[Json]) -> str:
    return "".join(str(t["text"]) for t in texts)


def _assistant(blocks: Sequence[Block], own: bool, path: str, losses: Losses, extra: Json) -> Json:
    texts: list[str] = []
    parts: list[Json] = []  # the content as parts, in order: when it holds more than text
    listed = False
    calls: list[Json] = []
    for j, block in enumerate(blocks):
        where = f"{path}.content[{j}]"
        match block:
            case Text(text=text):
                if calls and text:
                    losses.add(where, "reordered")  # text after a call goes before it
                if block.signature is not None:
                    losses.add(where, "foreign-reasoning")
                texts.append(text)
                parts.append({"type": "text", "text": text})
            case ToolUse() | InvalidToolUse():
                if isinstance(block, ToolUse) and block.signature is not None:
                    losses.add(where, "foreign-reasoning")
                calls.append(_call(block))
            case Reasoning(signature=None, redacted=False) if own:
                # A thinking part (Mistral's), back where it was.
                parts.append(
                    {"type": "thinking", "thinking": [{"type": "text", "text": block.text}]}
                )
                listed = True
            case Unknown(block_type=kind, data=data) if own:
                parts.append({"type": kind, **copy_json(data.value or {})})
                listed = True
            case _:
                if _part(block, own, where, losses) is not None:
                    losses.add(where, "unsupported")
    text = "".join(texts)
    content: str | list[Json] | None = text or (None if calls else "")
    if listed:
        content = [p for p in parts if p["type"] != "text" or p["text"]]
    message: Json = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    message.update(extra)
    return message


def _call(call: ToolUse | InvalidToolUse) -> Json:
    if isinstance(call, ToolUse) and is_custom(call):
        custom = {"name": call.name, "input": call.input.value}
        return {"id": call.id, "type": "custom", "custom": custom}
    function = {"name": call.name, "arguments": arguments_text(call)}
    return {"id": call.id, "type": "function", "function": function}


def _tool(spec: ToolSpec, own: bool, path: str, losses: Losses) -> Json | None:
    if spec.cache is not None:
        losses.add(at(path, "cache"), "unsupported")  # caching is the API's own business
    extra: Json = {}
    if own:
        extra = copy_json(dict(spec.extra))
    elif spec.kind in ("function", "custom"):
        for key in spec.extra:
            if not (spec.kind == "custom" and key == "format"):
                losses.add(at(path, key), "source-only")
        if spec.kind == "custom" and "format" in spec.extra:
            extra["format"] = _nested_format(spec.extra["format"])
    match spec.kind:
        case "function":
            function: Json = {"name": spec.name}
            if spec.description:
                function["description"] = spec.description
            function["parameters"] = copy_json(dict(spec.schema)) or {
                "type": "object",
                "properties": {},
            }
            strict = spec.strict
            if strict and not own and not strict_compatible(spec.schema):
                # Strict mode would refuse this schema: the tool is sent without it.
                losses.add(at(path, "strict"), "schema")
                strict = False
            if strict is not None:
                function["strict"] = strict
            return {"type": "function", "function": {**function, **extra}}
        case "custom":
            custom: Json = {"name": spec.name}
            if spec.description:
                custom["description"] = spec.description
            return {"type": "custom", "custom": {**custom, **extra}}
        case _ if own:
            return extra
        case _:
            losses.add(path, "unsupported")
            return None


def _write_choice(request: Request) -> Json | str | None:
    if request.allowed_tools is not None and request.tool_choice in (None, "auto", "any"):
        customs = {t.name for t in request.tools if t.kind == "custom"}
        tools = [
            {"type": "custom", "custom": {"name": n}}
            if n in customs
            else {"type": "function", "function": {"name": n}}
            for n in request.allowed_tools
        ]
        mode = "required" if request.tool_choice == "any" else "auto"
        return {"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": tools}}
    match request.tool_choice:
        case None:
            return None
        case "auto" | "none":
            return request.tool_choice
        case "any":
            return "required"
        case str(name):
            custom = any(t.name == name and t.kind == "custom" for t in request.tools)
            if custom:
                return {"type": "custom", "custom": {"name": name}}
            return {"type": "function", "function": {"name": name}}


# -- the tool loop's shapes -----------------------------------------------------------------


def tool(tool: ToolDefinition) -> Json:
    if tool.input_format is not None:  # a custom (free-form) tool
        extra = {"format": tool.input_format}
        spec = ToolSpec(tool.name, tool.description, kind="custom", extra=extra)
    else:
        spec = ToolSpec(tool.name, tool.description, tool.parameters, tool.strict or None)
    written = _tool(spec, False, "", Losses())
    return written if written is not None else {}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Json:
    message = _assistant(response.content, False, "", Losses(), {})
    if reasoning_field is not None:
        reasoning = reasoning_text(response)
        if reasoning:
            calls = message.pop("tool_calls", None)
            message[reasoning_field] = reasoning
            if calls is not None:
                message["tool_calls"] = calls
    return message


def results(results: Sequence[ToolOutcome]) -> list[Json]:
    return [_tool_message(_outcome(r), False, "", Losses())[0] for r in results]


def _outcome(result: ToolOutcome) -> ToolResult:
    if isinstance(result, ToolResult):
        return result
    return ToolResult(result.call_id, result.name, result.output, result.ok, result.kind)


def _nested_format(input_format: Any) -> Any:
    """A custom tool's format as this API spells it: a grammar's ``syntax`` and
    ``definition`` nested in ``grammar`` (the Responses API puts them beside ``type``)."""
    flat = isinstance(input_format, Mapping) and "grammar" not in input_format
    if flat and input_format.get("type") == "grammar":
        fields = {k: v for k, v in input_format.items() if k != "type"}
        return {"type": "grammar", "grammar": copy_json(fields)}
    return copy_json(input_format)
