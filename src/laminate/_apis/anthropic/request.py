"""Anthropic Messages requests: read a ``/v1/messages`` body, write one.

Reading: ``system`` (a string or text blocks), ``messages`` (a ``system`` role inside them,
as recent Claude Code sends it, is kept as a system message), content blocks (``text``,
``image``, ``document``, ``search_result`` (a text :class:`Document`, the block kept for
Anthropic), ``thinking`` with its signature, ``redacted_thinking``,
``tool_use``, ``tool_result``; any other type is an ``Unknown`` kept whole),
``cache_control`` on any block (a :class:`CachePoint` after it), ``tools`` (server tools
kept whole as their own kind), ``tool_choice`` with ``disable_parallel_tool_use``,
``thinking`` (``enabled`` with a budget, or ``adaptive`` with ``output_config.effort``),
``output_config.format``, ``metadata.user_id``, sampling and ``stop_sequences``. What is
left is ``extra``.

Writing: the same, and what Messages requires of a request from elsewhere: ``max_tokens``
(:data:`DEFAULT_MAX_TOKENS` when the source has none); tool results first in ONE user turn
right after the call (consecutive user turns are merged); no empty text blocks;
parameterless tools as ``{"type": "object", "properties": {}}``; thinking blocks and
signatures only when the request came from Anthropic (another provider's reasoning is a
loss); a system message inside the conversation kept as such for Anthropic's own clients,
otherwise hoisted into ``system``.

The tool loop's shapes (``tool``, ``assistant``, ``results``) are this writer's.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Final

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
    DEFAULT_MAX_TOKENS,
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
from ..shapes import chat_request
from ..spec import DEFAULT_WRITE_OPTIONS, ToolDefinition, ToolOutcome, WriteOptions, WrittenBody
from ..spec import JsonObject as Json

__all__ = [
    "PATH",
    "assistant",
    "first_request",
    "read_request",
    "results",
    "tool",
    "write_request",
]

NAME: Final = "anthropic"
PATH: Final = "/v1/messages"

_TOP: Final = frozenset(
    {
        "model",
        "system",
        "messages",
        "tools",
        "tool_choice",
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "stream",
        "metadata",
        "thinking",
        "output_config",
    }
)
_EFFORTS: Final = ("low", "medium", "high", "max")

_SEARCH: Final = "search_result"
"""The key of a search result's own block in the ``extra`` of the document it is read as."""


# -- reading --------------------------------------------------------------------------------


def read_request(body: Mapping[str, Any], path: str | None) -> Request:
    model = need(body, "model", str, "")
    system = _read_system(body)
    messages = [_read_message(object_at(m, p), p) for p, m in items(body, "messages", "")]
    tools = [_read_tool(object_at(t, p), p) for p, t in items(body, "tools", "")]
    choice, parallel, choice_extra = _read_choice(body)
    extra = extra_fields(body, _TOP)
    reasoning, response_format = _read_settings(body, extra)
    metadata = get(body, "metadata", dict, "")
    user = None
    if metadata is not None:
        user = get(metadata, "user_id", str, "metadata")
        if set(metadata) - {"user_id"}:
            extra["metadata"] = dict(metadata)
            user = None
    if choice_extra:
        extra["tool_choice"] = choice_extra
    stop = [need({"s": s}, "s", str, p) for p, s in items(body, "stop_sequences", "")]
    return Request(
        model=model,
        system=system,
        messages=messages,
        tools=tools,
        tool_choice=choice,
        parallel_tool_calls=parallel,
        max_tokens=get(body, "max_tokens", int, ""),
        temperature=get(body, "temperature", float, ""),
        top_p=get(body, "top_p", float, ""),
        top_k=get(body, "top_k", int, ""),
        stop=stop,
        reasoning=reasoning,
        response_format=response_format,
        user=user,
        stream=get(body, "stream", bool, ""),
        extra=extra,
        api=NAME,
    )


def _read_system(body: Mapping[str, Any]) -> list[Text | CachePoint]:
    system = body.get("system")
    if system is None:
        return []
    if isinstance(system, str):
        return [Text(system)]
    out: list[Text | CachePoint] = []
    for path, item in items(body, "system", ""):
        block = object_at(item, path)
        if block.get("type") != "text":
            raise invalid(at(path, "type"), "a system block must be a text block")
        out.append(Text(need(block, "text", str, path)))
        out.extend(_cache(block, path))
    return out


def _cache(block: Mapping[str, Any], path: str) -> list[CachePoint]:
    control = get(block, "cache_control", dict, path)
    if control is None:
        return []
    return [CachePoint(get(control, "ttl", str, at(path, "cache_control")))]


def _read_message(message: Mapping[str, Any], path: str) -> Message:
    role = need(message, "role", str, path)
    if role not in ("user", "assistant", "system"):
        raise invalid(at(path, "role"), f"unknown role {role!r}")
    content = message.get("content")
    if isinstance(content, str):
        blocks: list[Block] = [Text(content)]
    else:
        blocks = []
        for p, block in items(message, "content", path):
            blocks.extend(_read_block(object_at(block, p), p))
    return Message(role, blocks, extra_fields(message, {"role", "content"}))  # type: ignore[arg-type]


def _read_block(block: Mapping[str, Any], path: str) -> list[Block]:
    kind = need(block, "type", str, path)
    read: Block
    known = {"type", "cache_control"}
    match kind:
        case "text":
            read = Text(need(block, "text", str, path))
            known |= {"text"}
        case "thinking":
            read = Reasoning(need(block, "thinking", str, path), get(block, "signature", str, path))
            known |= {"thinking", "signature"}
        case "redacted_thinking":
            read = Reasoning("", need(block, "data", str, path), redacted=True)
            known |= {"data"}
        case "tool_use":
            read = ToolUse(
                need(block, "id", str, path),
                need(block, "name", str, path),
                FlexValue(need(block, "input", dict, path)),
            )
            known |= {"id", "name", "input"}
        case "tool_result":
            read = _read_result(block, path)
            known |= {"tool_use_id", "content", "is_error"}
        case "image":
            read = _read_image(block, path)
            known |= {"source"}
        case "document":
            read = _read_document(block, path)
            known |= {"source", "title"}
        case "search_result":
            return [_read_search_result(block, path), *_cache(block, path)]
        case _:
            data = {k: v for k, v in block.items() if k != "type"}
            return [Unknown(kind, FlexValue(data))]
    rest = extra_fields(block, known)
    if rest and not isinstance(read, Image | Document):
        # Fields of a block laminate does not model (a text block's citations): the
        # block is kept whole, so nothing is dropped.
        return [Unknown(kind, FlexValue({k: v for k, v in block.items() if k != "type"}))]
    return [read, *_cache(block, path)]


def _read_result(block: Mapping[str, Any], path: str) -> ToolResult:
    content = block.get("content", "")
    parts: str | list[Any]
    if isinstance(content, str):
        parts = content
    else:
        parts = []
        for p, part in items(block, "content", path):
            for read in _read_block(object_at(part, p), p):
                if isinstance(read, ToolResult | Reasoning | ToolUse | CachePoint):
                    raise invalid(p, f"a tool result cannot hold a {part.get('type')} block")
                parts.append(read)
    return ToolResult(
        tool_use_id=need(block, "tool_use_id", str, path),
        content=parts,
        is_error=bool(get(block, "is_error", bool, path)),
    )


def _read_image(block: Mapping[str, Any], path: str) -> Image:
    source = need(block, "source", dict, path)
    where = at(path, "source")
    kind = need(source, "type", str, where)
    rest = extra_fields(block, {"type", "source", "cache_control"})
    if kind == "base64":
        return Image(
            need(source, "media_type", str, where),
            data=need(source, "data", str, where),
            extra=rest,
        )
    if kind == "url":
        return Image("", url=need(source, "url", str, where), extra=rest)
    raise invalid(at(where, "type"), f"unknown image source {kind!r}")


def _read_document(block: Mapping[str, Any], path: str) -> Document:
    source = need(block, "source", dict, path)
    where = at(path, "source")
    kind = need(source, "type", str, where)
    title = get(block, "title", str, path)
    rest = extra_fields(block, {"type", "source", "title", "cache_control"})
    match kind:
        case "base64":
            media = need(source, "media_type", str, where)
            return Document(media, data=need(source, "data", str, where), title=title, extra=rest)
        case "text":
            media = get(source, "media_type", str, where) or "text/plain"
            return Document(media, text=need(source, "data", str, where), title=title, extra=rest)
        case "url":
            url = need(source, "url", str, where)
            return Document("application/pdf", url=url, title=title, extra=rest)
        case _:
            rest["source"] = dict(source)
            return Document("", title=title, extra=rest)


def _read_search_result(block: Mapping[str, Any], path: str) -> Document:
    """A search result (a tool's found passage, with its source and title) is a text
    document to every API; the block as it came is kept for this one."""
    texts = []
    for p, part in items(block, "content", path):
        given = object_at(part, p)
        if given.get("type") == "text":
            texts.append(need(given, "text", str, p))
    title = get(block, "title", str, path)
    kept = {k: v for k, v in block.items() if k not in ("type", "cache_control")}
    return Document("text/plain", text="\n\n".join(texts), title=title, extra={_SEARCH: kept})


def _read_tool(tool: Mapping[str, Any], path: str) -> ToolSpec:
    kind = tool.get("type", "custom")
    if kind != "custom":  # a server tool (web search, bash, ...): kept whole
        return ToolSpec(
            get(tool, "name", str, path) or "",
            kind=need(tool, "type", str, path),
            extra=dict(tool),
        )
    return ToolSpec(
        need(tool, "name", str, path),
        get(tool, "description", str, path) or "",
        need(tool, "input_schema", dict, path),
        get(tool, "strict", bool, path),
        extra=extra_fields(
            tool, {"name", "description", "input_schema", "strict", "cache_control"}
        ),
        cache=next(iter(_cache(tool, path)), None),
    )


def _read_choice(body: Mapping[str, Any]) -> tuple[str | None, bool | None, dict[str, Any]]:
    choice = get(body, "tool_choice", dict, "")
    if choice is None:
        return None, None, {}
    kind = need(choice, "type", str, "tool_choice")
    disable = get(choice, "disable_parallel_tool_use", bool, "tool_choice")
    parallel = None if disable is None else not disable
    rest = extra_fields(choice, {"type", "name", "disable_parallel_tool_use"})
    match kind:
        case "auto" | "any" | "none":
            return kind, parallel, rest
        case "tool":
            return need(choice, "name", str, "tool_choice"), parallel, rest
        case _:
            raise invalid("tool_choice.type", f"unknown tool choice {kind!r}")


def _read_settings(
    body: Mapping[str, Any], extra: dict[str, Any]
) -> tuple[str | int | None, JsonSchema | None]:
    reasoning: str | int | None = None
    thinking = get(body, "thinking", dict, "")
    output = dict(get(body, "output_config", dict, "") or {})
    if thinking is not None:
        kind = need(thinking, "type", str, "thinking")
        if kind == "enabled" and set(thinking) <= {"type", "budget_tokens"}:
            reasoning = need(thinking, "budget_tokens", int, "thinking")
        elif kind == "adaptive" and set(thinking) == {"type"} and "effort" in output:
            reasoning = get(output, "effort", str, "output_config")
            del output["effort"]
        else:
            extra["thinking"] = dict(thinking)
    response_format = None
    form = output.get("format")
    if (
        isinstance(form, Mapping)
        and form.get("type") == "json_schema"
        and set(form)
        <= {
            "type",
            "schema",
        }
    ):
        response_format = JsonSchema("", need(form, "schema", dict, "output_config.format"))
        del output["format"]
    if output:
        extra["output_config"] = output
    return reasoning, response_format


# -- writing --------------------------------------------------------------------------------


def write_request(request: Request, options: WriteOptions = DEFAULT_WRITE_OPTIONS) -> WrittenBody:
    losses = Losses()
    if request.allowed_tools is not None:
        losses.add("allowed_tools", "unsupported")  # every tool stays offered
    own = request.api == NAME
    extra = losses.source_only(request, NAME)
    body: dict[str, Any] = {"model": request.model}
    system, messages = _write_conversation(request, own, losses)
    if system:
        body["system"] = system
    body["messages"] = messages
    body["max_tokens"] = (
        request.max_tokens if request.max_tokens is not None else DEFAULT_MAX_TOKENS
    )
    tools = [
        t for i, spec in enumerate(request.tools) if (t := _tool(spec, own, f"tools[{i}]", losses))
    ]
    if tools:
        body["tools"] = tools
    thinking = request.reasoning is not None and not own
    choice = _write_choice(request, losses)
    if thinking and choice is not None and choice["type"] in ("any", "tool"):
        # With thinking on, Messages takes only "auto" or "none" as the tool choice.
        losses.add("tool_choice", "approximated")
        choice["type"] = "auto"
        choice.pop("name", None)
    if choice is not None:
        body["tool_choice"] = {**choice, **extra.pop("tool_choice", {})}
    for key in ("temperature", "top_p", "top_k"):
        value = getattr(request, key)
        if value is None:
            continue
        if thinking and key != "top_p" and not (key == "temperature" and value == 1):
            # With thinking on, Messages refuses another temperature and any top_k.
            losses.add(key, "unsupported")
            continue
        body[key] = value
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if request.stream is not None:
        body["stream"] = request.stream
    if request.user is not None:
        body["metadata"] = {"user_id": request.user}
    output: dict[str, Any] = extra.pop("output_config", {})
    match request.reasoning:
        case int(budget):
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        case str(effort):
            if effort not in _EFFORTS:
                losses.add("reasoning", "approximated")
                effort = "low" if effort in ("minimal", "none") else "high"
            body["thinking"] = {"type": "adaptive"}
            output["effort"] = effort
    match request.response_format:
        case JsonSchema(schema=schema):
            output["format"] = {"type": "json_schema", "schema": copy_json(dict(schema))}
        case "json":
            losses.add("response_format", "unsupported")
    if output:
        body["output_config"] = output
    body.update(extra)
    return body, PATH, losses


def _write_conversation(
    request: Request, own: bool, losses: Losses
) -> tuple[str | list[Json], list[Json]]:
    system = _write_system(request.system, losses)
    out: list[Json] = []
    orphans = set() if own else _orphans(request.messages)
    for i, given in enumerate(request.messages):
        path = f"messages[{i}]"
        message = given
        if any(i == n for n, _ in orphans):
            kept = [b for j, b in enumerate(given.content) if (i, j) not in orphans]
            for n, j in sorted(orphans):
                if n == i:
                    losses.add(f"{path}.content[{j}]", "unsupported")
            message = Message(given.role, kept, given.extra)
        if message.role == "system" and not own:
            # Messages takes system text only at the top: hoisted there, in order (a
            # loss of its place when the conversation had begun).
            text = "".join(b.text for b in message.content if isinstance(b, Text))
            if text:
                system = _joined_system(system, text)
            for j, block in enumerate(message.content):
                if not isinstance(block, Text):
                    losses.add(f"{path}.content[{j}]", "unsupported")
            if out:
                losses.add(path, "reordered")
            continue
        written = _message(message, own, path, losses)
        if not written["content"]:
            continue
        previous = out[-1] if out else None
        if previous is not None and previous["role"] == written["role"] and not own:
            # One turn per role: another API's consecutive messages (a Responses
            # conversation has one item each, Chat Completions one per tool result).
            blocks = _as_list(previous["content"]) + _as_list(written["content"])
            previous["content"] = _results_first(blocks) if written["role"] == "user" else blocks
            continue
        out.append(written)
    return system, out


def _orphans(messages: Sequence[Message]) -> set[tuple[int, int]]:
    """Where the tool results are that answer no call of the assistant turn before them,
    or answer one a second time: Messages refuses both (each call gets exactly one
    result, in the next user turn)."""
    found: set[tuple[int, int]] = set()
    open_calls: set[str] = set()
    answering = False  # whether the user turn after the calls has begun
    for i, message in enumerate(messages):
        if message.role == "assistant":
            if answering:
                open_calls, answering = set(), False
            open_calls |= {b.id for b in message.content if isinstance(b, ToolUse | InvalidToolUse)}
        elif message.role == "user":
            answering = True
            for j, block in enumerate(message.content):
                if isinstance(block, ToolResult):
                    if block.tool_use_id in open_calls:
                        open_calls.discard(block.tool_use_id)
                    else:
                        found.add((i, j))
            if any(not isinstance(b, ToolResult) for b in message.content):
                open_calls = set()
    return found


def _joined_system(system: str | list[Json], text: str) -> str | list[Json]:
    if isinstance(system, str):
        return f"{system}\n\n{text}" if system else text
    return [*system, {"type": "text", "text": text}]


def _as_list(content: str | list[Json]) -> list[Json]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _results_first(blocks: list[Json]) -> list[Json]:
    # Messages wants the results of the calls before anything else in the turn.
    results = [b for b in blocks if b.get("type") == "tool_result"]
    return results + [b for b in blocks if b.get("type") != "tool_result"]


def _write_system(system: Sequence[Text | CachePoint], losses: Losses) -> str | list[Json]:
    if len(system) == 1 and isinstance(system[0], Text):
        return system[0].text
    blocks: list[Json] = []
    for i, block in enumerate(system):
        if isinstance(block, CachePoint):
            if blocks:
                blocks[-1]["cache_control"] = _cache_control(block)
            continue
        if block.text:
            blocks.append({"type": "text", "text": block.text})
        elif i == 0 and len(system) == 1:
            return ""
    return blocks


def _cache_control(point: CachePoint) -> Json:
    control: Json = {"type": "ephemeral"}
    if point.ttl is not None:
        control["ttl"] = point.ttl
    return control


def _message(message: Message, own: bool, path: str, losses: Losses) -> Json:
    role = message.role if message.role != "system" else "system"
    content = message.content
    if role == "user" and len(content) == 1 and isinstance(content[0], Text) and content[0].text:
        return {"role": role, "content": content[0].text, **_extra(message, own, path, losses)}
    blocks: list[Json] = []
    for j, block in enumerate(content):
        where = f"{path}.content[{j}]"
        if isinstance(block, CachePoint):
            if blocks:
                blocks[-1]["cache_control"] = _cache_control(block)
            else:
                losses.add(where, "unsupported")
            continue
        written = _block(block, own, where, losses)
        if written is not None:
            blocks.append(written)
    return {"role": role, "content": blocks, **_extra(message, own, path, losses)}


def _extra(message: Message, own: bool, path: str, losses: Losses) -> Json:
    if own:
        return copy_json(dict(message.extra))
    for key in message.extra:
        losses.add(at(path, key), "source-only")
    return {}


def _block(block: Block, own: bool, path: str, losses: Losses) -> Json | None:
    match block:
        case Text(text=text):
            # Messages refuses an empty text block, and one of whitespace alone ("text
            # content blocks must contain non-whitespace text"), which other APIs carry; a
            # signature is another provider's.
            if block.signature is not None and not own:
                losses.add(path, "foreign-reasoning")
            if text and not own and text.isspace():
                losses.add(path, "unsupported")
                return None
            return {"type": "text", "text": text} if text else None
        case Reasoning(redacted=True, signature=str(data)) if own:
            return {"type": "redacted_thinking", "data": data}
        case Reasoning(signature=str(signature)) if own:
            return {"type": "thinking", "thinking": block.text, "signature": signature}
        case Reasoning():
            losses.add(path, "foreign-reasoning")
            return None
        case ToolUse(id=ident, name=name, input=arguments):
            if block.signature is not None and not own:
                losses.add(path, "foreign-reasoning")
            value = arguments.value
            if not isinstance(value, dict):  # a custom tool's text: Messages wants an object
                losses.add(path, "approximated")
                value = {"input": value}
            return {"type": "tool_use", "id": ident, "name": name, "input": copy_json(value)}
        case InvalidToolUse(id=ident, name=name):
            losses.add(path, "approximated")
            return {"type": "tool_use", "id": ident, "name": name, "input": {}}
        case ToolResult():
            return _result(block, own, path, losses)
        case Image():
            return _image(block, own, path, losses)
        case Document():
            return _document(block, own, path, losses)
        case Unknown(block_type="citation"):
            losses.add(path, "unsupported")  # it annotates an answer's text: not a block
            return None
        case Unknown(block_type=kind, data=data) if own:
            return {"type": kind, **copy_json(data.value or {})}
        case _:
            losses.add(path, "source-only" if isinstance(block, Unknown) else "unsupported")
            return None


def _result(block: ToolResult, own: bool, path: str, losses: Losses) -> Json:
    content: str | list[Json]
    if isinstance(block.content, str):
        content = block.content
    else:
        content = []
        for k, part in enumerate(block.content):
            part_written = _block(part, own, f"{path}.content[{k}]", losses)
            if part_written is not None:
                content.append(part_written)
    written: Json = {"type": "tool_result", "tool_use_id": block.tool_use_id}
    if content or own or not block.content:
        written["content"] = content  # an empty list when every part was left out: none
    written["is_error"] = block.is_error
    return written


def _image(block: Image, own: bool, path: str, losses: Losses) -> Json:
    if block.data is not None:
        source: Json = {"type": "base64", "media_type": block.media_type, "data": block.data}
    else:
        source = {"type": "url", "url": block.url or ""}
    written: Json = {"type": "image", "source": source}
    return _with_extra(written, block.extra, own, path, losses)


def _decoded(data: str) -> str | None:
    try:
        return base64.b64decode(data, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _document(block: Document, own: bool, path: str, losses: Losses) -> Json | None:
    extra = dict(block.extra)
    if own and _SEARCH in extra:
        return {"type": "search_result", **copy_json(extra[_SEARCH])}
    if "source" in extra and own:
        source = extra.pop("source")
    elif block.data is not None and block.media_type.startswith("text/"):
        # A base64 source is for PDFs only: a text document goes as a text source.
        text = _decoded(block.data)
        if text is None:
            losses.add(path, "unsupported")
            return None
        source = {"type": "text", "media_type": "text/plain", "data": text}
        if block.media_type != "text/plain":
            losses.add(at(path, "media_type"), "approximated")
    elif block.data is not None:
        source = {"type": "base64", "media_type": block.media_type, "data": block.data}
    elif block.text is not None:
        source = {
            "type": "text",
            "media_type": block.media_type or "text/plain",
            "data": block.text,
        }
    else:
        source = {"type": "url", "url": block.url or ""}
    written: Json = {"type": "document", "source": source}
    if block.title is not None:
        written["title"] = block.title
    return _with_extra(written, extra, own, path, losses)


def _with_extra(
    written: Json, extra: Mapping[str, Any], own: bool, path: str, losses: Losses
) -> Json:
    if own:
        written.update(copy_json(dict(extra)))
    else:
        for key in extra:
            losses.add(at(path, key), "source-only")
    return written


def _tool(spec: ToolSpec, own: bool, path: str, losses: Losses) -> Json | None:
    if spec.kind == "function":
        return _function(spec, own, path, losses)
    if own:
        return copy_json(dict(spec.extra))
    losses.add(path, "unsupported")
    return None


def _function(spec: ToolSpec, own: bool, path: str, losses: Losses) -> Json:
    schema = copy_json(dict(spec.schema)) or {"type": "object", "properties": {}}
    written: Json = {"name": spec.name}
    if spec.description:
        written["description"] = spec.description
    written["input_schema"] = schema
    if spec.strict is not None:
        written["strict"] = spec.strict
    if spec.cache is not None:
        written["cache_control"] = _cache_control(spec.cache)
    return _with_extra(written, spec.extra, own, path, losses)


def _write_choice(request: Request, losses: Losses) -> Json | None:
    choice = request.tool_choice
    parallel = request.parallel_tool_calls
    written: Json | None
    match choice:
        case None:
            written = None if parallel is not False else {"type": "auto"}
        case "auto" | "any" | "none":
            written = {"type": choice}
        case str(name):
            written = {"type": "tool", "name": name}
    if written is not None and parallel is not None and written["type"] != "none":
        written["disable_parallel_tool_use"] = not parallel
    return written


# -- the tool loop's shapes -----------------------------------------------------------------


def tool(tool: ToolDefinition) -> Json:
    spec = ToolSpec(tool.name, tool.description, tool.parameters, tool.strict or None)
    return _function(spec, False, "", Losses())


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Json:
    message = Message("assistant", list(response.content))
    return _message(message, response.provider == NAME, "", Losses())


def results(results: Sequence[ToolOutcome]) -> list[Json]:
    if not results:
        return []
    blocks = [_result(_outcome(r), False, "", Losses()) for r in results]
    return [{"role": "user", "content": blocks}]


def _outcome(result: ToolOutcome) -> ToolResult:
    if isinstance(result, ToolResult):
        return result
    return ToolResult(result.call_id, result.name, result.output, result.ok)


def first_request(model: str, prompt: str, tools: list[Json]) -> Json:
    """A streamed first request (Messages requires ``max_tokens``)."""
    return {**chat_request(model, prompt, tools), "max_tokens": 2048}
