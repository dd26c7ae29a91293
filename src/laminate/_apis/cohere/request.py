"""Cohere v2 ``/v2/chat`` requests, read and written.

Reading: ``messages`` (``system``, ``user``, ``assistant``, ``tool``) whose ``content`` is a
string or a list of parts (``text``, ``image_url``, ``thinking``, ``document``: a text
:class:`Document` of its ``data``, the part kept whole for Cohere), the message's own
fields (its ``extra``: written back to Cohere, a loss elsewhere), an
assistant's ``tool_plan`` (reasoning with the id :data:`PLAN_ID`, as Cohere's streams give
it), ``tool_calls`` (arguments as JSON text) and ``citations``; ``tools``;
``tool_choice`` (``REQUIRED``, ``NONE``); ``max_tokens``, ``temperature``, ``p``, ``k``,
``stop_sequences``, ``thinking`` with its ``token_budget``, ``response_format``,
``stream``. Leading system messages are the system text; what is left is ``extra``.

Writing: the same shapes. A content list only where a string cannot say it (images,
thinking); reasoning text as ``thinking`` parts (a signature stays behind, a loss), the
plan only back to Cohere; one ``tool`` message per result, a failed one's content starting
with ``Error:`` (no error flag). Cohere's tool choice has no single tool: the tools are
narrowed to that one and a call is required (an ``approximated`` loss).
"""

from __future__ import annotations

import json
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
    copy_json,
    extra_fields,
    get,
    invalid,
    items,
    need,
    object_at,
)
from ..shapes import ERROR_PREFIX, arguments_text, copy_value, described
from ..spec import DEFAULT_WRITE_OPTIONS, ToolDefinition, ToolOutcome, WriteOptions, WrittenBody
from ..spec import JsonObject as Json
from .read import PLAN_ID

__all__ = ["PATH", "assistant", "read_request", "results", "tool", "write_request"]

NAME: Final = "cohere"
PATH: Final = "/v2/chat"
_TOP: Final = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "max_tokens",
        "temperature",
        "p",
        "k",
        "stop_sequences",
        "thinking",
        "response_format",
        "stream",
    }
)
_CHOICES: Final[Mapping[str, str]] = {"REQUIRED": "any", "NONE": "none"}

_TOOL_KEYS: Final = frozenset({"role", "tool_call_id", "content"})
_ASSISTANT_KEYS: Final = frozenset({"role", "content", "tool_plan", "tool_calls"})
_DOCUMENT: Final = "document"
"""The key of a document's own object in the ``extra`` of the document it is read as."""


# -- reading --------------------------------------------------------------------------------


def read_request(body: Mapping[str, Any], path: str | None) -> Request:
    """The neutral request of a ``/v2/chat`` body."""
    if "messages" not in body:
        raise invalid("messages", "missing")
    messages = [
        _read_message(object_at(m, where), where) for where, m in items(body, "messages", "")
    ]
    system: list[Text | CachePoint] = []
    while messages and messages[0].role == "system":
        system.extend(b for b in messages.pop(0).content if isinstance(b, Text))
    extra = {key: copy_json(value) for key, value in body.items() if key not in _TOP}
    choice = get(body, "tool_choice", str, "")
    if choice is not None and choice not in _CHOICES:
        raise invalid("tool_choice", f"expected REQUIRED or NONE, got {choice!r}")
    return Request(
        model=get(body, "model", str, "") or "",
        system=system,
        messages=messages,
        tools=[_read_tool(object_at(t, where), where) for where, t in items(body, "tools", "")],
        tool_choice=_CHOICES[choice] if choice else None,
        max_tokens=get(body, "max_tokens", int, ""),
        temperature=get(body, "temperature", float, ""),
        top_p=get(body, "p", float, ""),
        top_k=get(body, "k", int, ""),
        stop=list(get(body, "stop_sequences", list, "") or ()),
        reasoning=_read_thinking(body, extra),
        response_format=_read_format(body, extra),
        stream=get(body, "stream", bool, ""),
        extra=extra,
        api=NAME,
    )


def _read_thinking(body: Mapping[str, Any], extra: dict[str, Any]) -> int | None:
    thinking = get(body, "thinking", dict, "")
    if thinking is None:
        return None
    budget = get(thinking, "token_budget", int, "thinking")
    if (
        thinking.get("type") != "enabled"
        or budget is None
        or set(thinking) != {"type", "token_budget"}
    ):
        extra["thinking"] = copy_json(dict(thinking))  # written back as it came
    return budget if thinking.get("type") == "enabled" else None


def _read_format(
    body: Mapping[str, Any], extra: dict[str, Any]
) -> JsonSchema | Literal["json"] | None:
    given = get(body, "response_format", dict, "")
    if given is None:
        return None
    kind = get(given, "type", str, "response_format")
    if kind != "json_object":
        extra["response_format"] = copy_json(dict(given))
        return None
    schema = get(given, "json_schema", dict, "response_format")
    return JsonSchema("response", copy_json(dict(schema))) if schema is not None else "json"


def _read_tool(tool: Mapping[str, Any], path: str) -> ToolSpec:
    function = object_at(need(tool, "function", dict, path), at(path, "function"))
    where = at(path, "function")
    return ToolSpec(
        need(function, "name", str, where),
        get(function, "description", str, where) or "",
        copy_json(dict(get(function, "parameters", dict, where) or {})),
    )


def _read_message(message: Mapping[str, Any], path: str) -> Message:
    role = need(message, "role", str, path)
    blocks = _read_content(message, path)
    match role:
        case "system" | "user":
            return Message(role, blocks, extra_fields(message, {"role", "content"}))
        case "tool":
            result = ToolResult(
                tool_use_id=need(message, "tool_call_id", str, path),
                content=_result_content(blocks),
                is_error=False,
            )
            return Message("user", [result], extra_fields(message, _TOOL_KEYS))
        case "assistant":
            plan = get(message, "tool_plan", str, path)
            head: list[Block] = [Reasoning(plan, id=PLAN_ID)] if plan is not None else []
            calls: list[Block] = []
            for where, call in items(message, "tool_calls", path):
                calls.append(_read_call(object_at(call, where), where))
            extra = extra_fields(message, _ASSISTANT_KEYS)  # its citations, ...
            return Message("assistant", [*head, *blocks, *calls], extra)
        case _:
            raise invalid(at(path, "role"), f"unknown role {role!r}")


def _read_content(message: Mapping[str, Any], path: str) -> list[Block]:
    content = message.get("content")
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)]
    where = at(path, "content")
    if not isinstance(content, list):
        raise invalid(where, "expected a string or an array of parts")
    blocks: list[Block] = []
    for place, part in items(message, "content", path):
        given = object_at(part, place)
        kind = need(given, "type", str, place)
        match kind:
            case "text":
                blocks.append(Text(need(given, "text", str, place)))
            case "thinking":
                blocks.append(Reasoning(need(given, "thinking", str, place)))
            case "image_url":
                image = object_at(need(given, "image_url", dict, place), at(place, "image_url"))
                blocks.append(_image(need(image, "url", str, at(place, "image_url"))))
            case "document":
                document = object_at(need(given, "document", dict, place), at(place, "document"))
                blocks.append(_read_document(document, at(place, "document")))
            case _:
                blocks.append(Unknown(kind, FlexValue(copy_json(dict(given)))))
    return blocks


def _read_document(document: Mapping[str, Any], path: str) -> Document:
    """A document (a tool's found record: its ``data`` fields) is a text document to every
    API, its ``text`` field (or the data as JSON) with its ``title``; the document as it
    came is kept for this one."""
    data = get(document, "data", dict, path) or {}
    text = data.get("text")
    if not isinstance(text, str):
        text = json.dumps(data, ensure_ascii=False)
    title = data.get("title")
    kept = {_DOCUMENT: copy_json(dict(document))}
    return Document(
        "text/plain", text=text, title=title if isinstance(title, str) else None, extra=kept
    )


def _image(url: str) -> Image:
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return Image(head.split(";", 1)[0], data=data)
    return Image("", url=url)


def _result_content(blocks: list[Block]) -> str | list[Any]:
    if len(blocks) == 1 and isinstance(blocks[0], Text):
        return blocks[0].text
    if not blocks:
        return ""
    return [b for b in blocks if isinstance(b, Text | Image | Document | Unknown)]


def _read_call(call: Mapping[str, Any], path: str) -> ToolUse | InvalidToolUse:
    function = object_at(need(call, "function", dict, path), at(path, "function"))
    where = at(path, "function")
    ident = need(call, "id", str, path)
    name = need(function, "name", str, where)
    arguments = get(function, "arguments", str, where) or ""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return InvalidToolUse(ident, name, arguments, "arguments are not valid JSON")
    if not isinstance(value, dict):
        return InvalidToolUse(ident, name, arguments, "arguments are not a JSON object")
    return ToolUse(ident, name, FlexValue(value))


# -- writing --------------------------------------------------------------------------------


def write_request(request: Request, options: WriteOptions = DEFAULT_WRITE_OPTIONS) -> WrittenBody:
    """``request`` as a ``/v2/chat`` body, its path and what it lost."""
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
    for index, message in enumerate(request.messages):
        messages.extend(_message(message, own, at("messages", index), losses))
    body: Json = {"model": request.model, "messages": messages}
    tools = [t for t in request.tools if t.kind == "function"]
    for index, spec in enumerate(request.tools):
        if spec.kind != "function":
            losses.add(at("tools", index), "unsupported")
    choice = request.tool_choice
    if tools and choice not in (None, "auto", "any", "none"):
        # No single-tool choice: only that tool, and a call required.
        for index, spec in enumerate(request.tools):
            if spec.kind == "function" and spec.name != choice:
                losses.add(at("tools", index), "approximated")
        tools = [t for t in tools if t.name == choice] or tools
        losses.add("tool_choice", "approximated")
        choice = "any"
    elif tools and choice == "auto":
        losses.add("tool_choice", "approximated")  # not said: what Cohere does by default
    if tools:
        body["tools"] = [
            _tool(spec, own, at("tools", request.tools.index(spec)), losses) for spec in tools
        ]
        if choice in ("any", "none"):
            body["tool_choice"] = "REQUIRED" if choice == "any" else "NONE"
    elif choice not in (None, "auto", "none"):
        losses.add("tool_choice", "unsupported")
    if request.parallel_tool_calls is False:
        losses.add("parallel_tool_calls", "unsupported")
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["p"] = request.top_p
    if request.top_k is not None:
        body["k"] = request.top_k
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if request.reasoning is not None:
        budget = request.reasoning
        if isinstance(budget, str):
            budget = {"minimal": 1024, "low": 2048, "medium": 8192}.get(budget, 24576)
            losses.add("reasoning", "approximated")
        body["thinking"] = {"type": "enabled", "token_budget": budget}
    if request.response_format is not None:
        written: Json = {"type": "json_object"}
        if isinstance(request.response_format, JsonSchema):
            written["json_schema"] = copy_json(dict(request.response_format.schema))
        body["response_format"] = written
    if request.stream is not None:
        body["stream"] = request.stream
    if request.user is not None:
        losses.add("user", "unsupported")
    body.update(extra)
    return body, PATH, losses


def _tool(spec: ToolSpec, own: bool, path: str, losses: Losses) -> Json:
    for key in spec.extra if not own else ():
        losses.add(at(path, key), "source-only")
    function: Json = {"name": spec.name}
    if spec.description:
        function["description"] = spec.description
    function["parameters"] = copy_json(dict(spec.schema)) or {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def _message(message: Message, own: bool, path: str, losses: Losses) -> list[Json]:
    written = _turns(message, own, path, losses)
    if own and written:
        keys = _ASSISTANT_KEYS if message.role == "assistant" else {"role"}
        written[-1].update(copy_json({k: v for k, v in message.extra.items() if k not in keys}))
    elif not own:
        for key in message.extra:
            losses.add(at(path, key), "source-only")
    return written


def _turns(message: Message, own: bool, path: str, losses: Losses) -> list[Json]:
    if message.role == "assistant":
        return [_assistant(message, own, path, losses, thinking=True)]
    out: list[Json] = []
    parts: list[Json] = []
    for index, block in enumerate(message.content):
        where = at(at(path, "content"), index)
        match block:
            case ToolResult():
                out.append(_result(block, own, where, losses))
            case Text(text=text):
                parts.append({"type": "text", "text": text})
            case Image():
                parts.append(_image_part(block))
            case Document() if own and _DOCUMENT in block.extra:
                parts.append({"type": "document", "document": copy_json(block.extra[_DOCUMENT])})
            case Document(text=str(text)):
                parts.append(
                    {"type": "text", "text": f"{block.title}\n\n{text}" if block.title else text}
                )
                losses.add(where, "approximated")
            case Unknown(data=data) if own and isinstance(data.value, dict):
                parts.append(copy_json(data.value))
            case _:
                losses.add(where, "unsupported")
    if parts or not out:
        out.append({"role": message.role, "content": _content(parts)})
    return out


def _content(parts: list[Json]) -> str | list[Json]:
    """A string when the parts are all text, else the parts."""
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _image_part(image: Image) -> Json:
    url = image.url if image.url is not None else f"data:{image.media_type};base64,{image.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _assistant(message: Message, own: bool, path: str, losses: Losses, *, thinking: bool) -> Json:
    """One assistant message: the plan (to Cohere only), the calls, the content (text, and
    the reasoning text as ``thinking`` parts when ``thinking``), the citations."""
    written: Json = {"role": "assistant"}
    plan: list[str] = []
    parts: list[Json] = []
    calls: list[Json] = []
    for index, block in enumerate(message.content):
        where = at(at(path, "content"), index)
        match block:
            case Reasoning(id=str(ident)) if ident == PLAN_ID:
                if own:
                    plan.append(block.text)
            case Reasoning():
                if thinking and block.text and not block.redacted:
                    parts.append({"type": "thinking", "thinking": block.text})
                if block.signature and not own:
                    losses.add(where, "foreign-reasoning")
            case Text(text=text):
                if text:
                    parts.append({"type": "text", "text": text})
            case ToolUse() | InvalidToolUse():
                arguments = arguments_text(block)
                function = {"name": block.name, "arguments": arguments}
                calls.append({"id": block.id, "type": "function", "function": function})
            case Unknown(block_type="citation"):
                if not own:  # the citations go back with the message, below, to Cohere
                    losses.add(where, "unsupported")
            case _:
                losses.add(where, "unsupported")
    if plan:
        written["tool_plan"] = "".join(plan)
    if calls:
        written["tool_calls"] = calls
    if parts or not calls:
        written["content"] = _content(parts)
    citations = message.extra.get("citations") or [
        copy_value(b.data.value)
        for b in message.content
        if isinstance(b, Unknown) and b.block_type == "citation" and isinstance(b.data.value, dict)
    ]
    if citations and own:
        written["citations"] = copy_json(citations)
    return written


def _result(result: ToolResult, own: bool, path: str, losses: Losses) -> Json:
    if isinstance(result.content, str) or result.is_error:
        return _tool_message(result, _flagged(result))
    parts: list[Json] = []
    for index, block in enumerate(result.content):
        where = at(at(path, "content"), index)
        match block:
            case Text(text=text):
                parts.append({"type": "text", "text": text})
            case Document() if own and _DOCUMENT in block.extra:
                parts.append({"type": "document", "document": copy_json(block.extra[_DOCUMENT])})
            case Document(text=str(text)):
                # A tool's document: its text and title as a document's data.
                data: Json = {"title": block.title} if block.title else {}
                parts.append({"type": "document", "document": {"data": {**data, "text": text}}})
                for key in block.extra:
                    losses.add(at(where, key), "source-only")
            case _:
                losses.add(where, "source-only" if isinstance(block, Unknown) else "unsupported")
    if all(p["type"] == "text" for p in parts):
        return _tool_message(result, "".join(p["text"] for p in parts))
    return _tool_message(result, parts)


def _flagged(result: ToolResult) -> str:
    output = result.output
    if result.is_error and not output.startswith(ERROR_PREFIX.strip()):
        output = ERROR_PREFIX + output
    return output


def _tool_message(result: ToolResult, content: str | list[Json]) -> Json:
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": content}


# -- the tool loop's shapes -----------------------------------------------------------------


def tool(tool: ToolDefinition) -> Json:
    """One ``tools`` entry."""
    function = {"name": tool.name, **described(tool), "parameters": copy_value(tool.parameters)}
    return {"type": "function", "function": function}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Json:
    """The assistant turn: the plan (Cohere's own), the calls, the text, the citations;
    thinking is not echoed."""
    message = Message("assistant", list(response.content))
    own = response.provider == NAME
    return _assistant(message, own, "", Losses(), thinking=False)


def results(results: Sequence[ToolOutcome]) -> list[Json]:
    """One ``tool`` message per result."""
    return [
        _result(ToolResult(r.call_id, r.name, r.output, r.ok), False, "", Losses()) for r in results
    ]
