"""Responses requests: read a ``/v1/responses`` body, write one.

Reading: ``instructions`` is the system text; ``input`` (a string, or items) becomes one
message per item: ``message`` items (any role; ``developer`` kept in the message's
``extra``) with ``input_text`` / ``output_text`` / ``input_image`` (written with its
``detail``, ``"auto"`` when none is said) / ``input_file`` parts,
``function_call`` and ``custom_tool_call`` (an assistant message of one call),
``function_call_output`` and ``custom_tool_call_output`` (a user message of one result,
named after its call), ``reasoning`` (the summary's text, ``encrypted_content`` as the
signature, the item id); an item of any other type is an ``Unknown`` kept whole. An
item's fields that have no neutral name (``id``, ``status``) stay in its message's
``extra``. Then ``tools`` (functions, custom tools, built-in tools kept whole),
``tool_choice`` (an ``allowed_tools`` one as its mode and ``allowed_tools``),
``parallel_tool_calls``, ``max_output_tokens``, ``reasoning.effort``,
``text.format``, ``user``, ``stream``; what is left is ``extra``.

Writing: the same items (an assistant's text as a ``message`` item, calls as
``function_call`` items with ``call_id`` only: an item ``id`` is the API's own and is
written back only to it; results as ``*_output`` items, a failed one's output starting
with ``Error:``); reasoning only when it was this API's (``encrypted_content`` back as it
came); a token budget as the nearest effort. ``stop`` and ``top_k`` have no field here:
losses.

The tool loop's shapes (``tool``, ``assistant``, ``results``) are this writer's.
"""

from __future__ import annotations

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
    Role,
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
from ..shapes import arguments_text, chat_request
from ..spec import DEFAULT_WRITE_OPTIONS, ToolDefinition, ToolOutcome, WriteOptions, WrittenBody
from ..spec import JsonObject as Json

__all__ = [
    "PATH",
    "assistant",
    "count_tokens_body",
    "first_request",
    "read_request",
    "results",
    "tool",
    "write_request",
]

NAME: Final = "openai-responses"
PATH: Final = "/v1/responses"

_TOP: Final = frozenset(
    {
        "model",
        "instructions",
        "input",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_output_tokens",
        "temperature",
        "top_p",
        "reasoning",
        "text",
        "user",
        "stream",
    }
)
_OUTPUTS: Final = ("function_call_output", "custom_tool_call_output")


# -- reading --------------------------------------------------------------------------------


def read_request(body: Mapping[str, Any], path: str | None) -> Request:
    extra = extra_fields(body, _TOP)
    instructions = get(body, "instructions", str, "")
    system: list[Text | CachePoint] = [Text(instructions)] if instructions is not None else []
    messages: list[Message] = []
    source = body.get("input")
    if isinstance(source, str):
        messages.append(Message("user", [Text(source)]))
    else:
        names: dict[str, str] = {}
        for where, item in items(body, "input", ""):
            messages.append(_read_item(object_at(item, where), where, names))
    choice = _read_choice(body, extra)
    allowed = None
    if isinstance(choice, tuple):
        choice, allowed = choice
    return Request(
        model=need(body, "model", str, ""),
        system=system,
        messages=messages,
        tools=[_read_tool(object_at(t, p), p) for p, t in items(body, "tools", "")],
        tool_choice=choice,
        allowed_tools=allowed,
        parallel_tool_calls=get(body, "parallel_tool_calls", bool, ""),
        max_tokens=get(body, "max_output_tokens", int, ""),
        temperature=get(body, "temperature", float, ""),
        top_p=get(body, "top_p", float, ""),
        reasoning=_read_reasoning(body, extra),
        response_format=_read_format(body, extra),
        user=get(body, "user", str, ""),
        stream=get(body, "stream", bool, ""),
        extra=extra,
        api=NAME,
    )


def _read_item(item: Mapping[str, Any], path: str, names: dict[str, str]) -> Message:
    kind = get(item, "type", str, path) or ("message" if "role" in item else None)
    match kind:
        case "message":
            return _read_message(item, path)
        case "function_call":
            ident = need(item, "call_id", str, path)
            name = need(item, "name", str, path)
            names[ident] = name
            call = call_of(ident, name, need(item, "arguments", str, path))
            known = {"type", "call_id", "name", "arguments"}
            return Message("assistant", [call], extra_fields(item, known))
        case "custom_tool_call":
            ident = need(item, "call_id", str, path)
            name = need(item, "name", str, path)
            names[ident] = name
            call = custom_call(ident, name, need(item, "input", str, path))
            known = {"type", "call_id", "name", "input"}
            return Message("assistant", [call], extra_fields(item, known))
        case "function_call_output" | "custom_tool_call_output":
            ident = need(item, "call_id", str, path)
            output = item.get("output")
            content: str | list[Any]
            if isinstance(output, str):
                content = output
            else:
                content = [_read_part(object_at(p, w), w) for w, p in items(item, "output", path)]
            result = ToolResult(ident, names.get(ident, ""), content=content, is_error=False)
            return Message("user", [result], extra_fields(item, {"type", "call_id", "output"}))
        case "reasoning":
            summary = [
                need(object_at(part, w), "text", str, w) for w, part in items(item, "summary", path)
            ]
            block = Reasoning(
                "".join(summary),
                get(item, "encrypted_content", str, path),
                id=get(item, "id", str, path),
            )
            rest = extra_fields(item, {"type", "id", "encrypted_content", "summary"})
            if len(summary) > 1 or any(
                set(object_at(p, w)) != {"type", "text"} for w, p in items(item, "summary", path)
            ):
                rest["summary"] = item["summary"]  # its parts, as they were
            return Message("assistant", [block], rest)
        case str():
            data = {k: v for k, v in item.items() if k != "type"}
            role: Role = "user" if kind.endswith("_output") else "assistant"
            return Message(role, [Unknown(kind, FlexValue(data))])
        case _:
            raise invalid(at(path, "type"), "missing")


def _read_message(item: Mapping[str, Any], path: str) -> Message:
    role = need(item, "role", str, path)
    extra = extra_fields(item, {"type", "role", "content"})
    if role == "developer":
        extra["role"] = role
        role = "system"
    if role not in ("user", "assistant", "system"):
        raise invalid(at(path, "role"), f"unknown role {role!r}")
    content = item.get("content")
    if isinstance(content, str):
        blocks: list[Block] = [Text(content)]
    else:
        blocks = [_read_part(object_at(p, w), w) for w, p in items(item, "content", path)]
    return Message(role, blocks, extra)  # type: ignore[arg-type]


def _read_part(part: Mapping[str, Any], path: str) -> Block:
    kind = need(part, "type", str, path)
    keys = set(part)
    match kind:
        case "input_text" | "output_text" if keys <= {
            "type",
            "text",
            "annotations",
        } and not part.get("annotations"):
            return Text(need(part, "text", str, path))
        case "input_image" if "image_url" in part:
            url = need(part, "image_url", str, path)
            rest = extra_fields(part, {"type", "image_url"})
            inline = parse_data_url(url)
            if inline is not None:
                return Image(inline[0], data=inline[1], extra=rest)
            return Image("", url=url, extra=rest)
        case "input_file" if "file_data" in part and keys <= {"type", "file_data", "filename"}:
            inline = parse_data_url(need(part, "file_data", str, path))
            if inline is not None:
                return Document(inline[0], data=inline[1], title=get(part, "filename", str, path))
    return Unknown(kind, FlexValue({k: v for k, v in part.items() if k != "type"}))


def _read_tool(tool: Mapping[str, Any], path: str) -> ToolSpec:
    kind = need(tool, "type", str, path)
    match kind:
        case "function":
            return ToolSpec(
                need(tool, "name", str, path),
                get(tool, "description", str, path) or "",
                get(tool, "parameters", dict, path) or {},
                get(tool, "strict", bool, path),
                extra=extra_fields(tool, {"type", "name", "description", "parameters", "strict"}),
            )
        case "custom":
            return ToolSpec(
                need(tool, "name", str, path),
                get(tool, "description", str, path) or "",
                kind="custom",
                extra=extra_fields(tool, {"type", "name", "description"}),
            )
        case _:
            return ToolSpec(str(tool.get("name", "")), kind=kind, extra=dict(tool))


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
        case {"type": "function" | "custom", "name": str(name)} if len(choice) == 2:
            return name
        case {"type": "allowed_tools", "mode": "auto" | "required" as mode, "tools": list(tools)}:
            names = [
                t["name"]
                for t in tools
                if isinstance(t, Mapping)
                and set(t) == {"type", "name"}
                and t["type"] in ("function", "custom")
                and isinstance(t["name"], str)
            ]
            if len(choice) == 3 and len(names) == len(tools):
                return ("any" if mode == "required" else "auto"), names
            extra["tool_choice"] = choice
            return None
        case dict():
            extra["tool_choice"] = choice  # built-in tools: written back as it came
            return None
        case _:
            raise invalid("tool_choice", "expected a string or an object")


def _read_reasoning(body: Mapping[str, Any], extra: dict[str, Any]) -> str | None:
    reasoning = get(body, "reasoning", dict, "")
    if reasoning is None:
        return None
    effort = get(reasoning, "effort", str, "reasoning")
    rest = extra_fields(reasoning, {"effort"})
    if rest:
        extra["reasoning"] = rest  # the summary setting: this API's own
    return effort


def _read_format(
    body: Mapping[str, Any], extra: dict[str, Any]
) -> JsonSchema | Literal["json"] | None:
    text = get(body, "text", dict, "")
    if text is None:
        return None
    rest = extra_fields(text, {"format"})
    form = get(text, "format", dict, "text")
    found: JsonSchema | Literal["json"] | None = None
    if form is not None:
        kind = form.get("type")
        if kind == "json_object" and set(form) == {"type"}:
            found = "json"
        elif kind == "json_schema" and set(form) <= {"type", "name", "schema", "strict"}:
            found = JsonSchema(
                need(form, "name", str, "text.format"),
                get(form, "schema", dict, "text.format") or {},
                get(form, "strict", bool, "text.format"),
            )
        else:
            rest["format"] = dict(form)
    if rest:
        extra["text"] = rest
    return found


# -- writing --------------------------------------------------------------------------------


def write_request(request: Request, options: WriteOptions = DEFAULT_WRITE_OPTIONS) -> WrittenBody:
    losses = Losses()
    own = request.api == NAME
    extra = losses.source_only(request, NAME)
    body: dict[str, Any] = {"model": request.model}
    texts = []
    for i, block in enumerate(request.system):
        if isinstance(block, Text):
            texts.append(block.text)
        else:
            losses.add(f"system[{i}]", "unsupported")
    if texts:
        body["instructions"] = "\n\n".join(texts)
    custom = {t.name for t in request.tools if t.kind == "custom"}
    calls: dict[str, bool] = {}
    out: list[Json] = []
    for i, message in enumerate(request.messages):
        out.extend(_message(message, own, f"messages[{i}]", losses, calls))
    body["input"] = out
    tools = [
        t for i, spec in enumerate(request.tools) if (t := _tool(spec, own, f"tools[{i}]", losses))
    ]
    if tools:
        body["tools"] = tools
    if request.allowed_tools is not None and request.tool_choice not in (None, "auto", "any"):
        losses.add("allowed_tools", "unsupported")  # the choice says more
    match request.tool_choice:
        case "auto" | "any" | None if request.allowed_tools is not None:
            body["tool_choice"] = {
                "type": "allowed_tools",
                "mode": "required" if request.tool_choice == "any" else "auto",
                "tools": [
                    {"type": "custom" if n in custom else "function", "name": n}
                    for n in request.allowed_tools
                ],
            }
        case None:
            pass
        case "auto" | "none":
            body["tool_choice"] = request.tool_choice
        case "any":
            body["tool_choice"] = "required"
        case str(name):
            body["tool_choice"] = {"type": "custom" if name in custom else "function", "name": name}
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    for key in ("temperature", "top_p"):
        value = getattr(request, key)
        if value is not None:
            body[key] = value
    if request.top_k is not None:
        losses.add("top_k", "unsupported")
    if request.stop:
        losses.add("stop", "unsupported")
    reasoning: Json = extra.pop("reasoning", {})
    match request.reasoning:
        case str(effort):
            reasoning = {"effort": effort, **reasoning}
        case int(budget):
            losses.add("reasoning", "approximated")
            reasoning = {"effort": effort_of(budget), **reasoning}
    if reasoning:
        body["reasoning"] = reasoning
    text: Json = extra.pop("text", {})
    match request.response_format:
        case "json":
            text = {"format": {"type": "json_object"}, **text}
        case JsonSchema(name=name, schema=schema, strict=strict):
            form: Json = {"type": "json_schema", "name": name or "response"}
            form["schema"] = copy_json(dict(schema))
            if strict is not None:
                form["strict"] = strict
            text = {"format": form, **text}
    if text:
        body["text"] = text
    if request.user is not None:
        body["user"] = request.user
    if request.stream is not None:
        body["stream"] = request.stream
    body.update(extra)
    if options.cache_key is not None:
        body.setdefault("prompt_cache_key", options.cache_key)
    return body, PATH, losses


def _message(
    message: Message, own: bool, path: str, losses: Losses, calls: dict[str, bool]
) -> list[Json]:
    extra: Json = copy_json(dict(message.extra)) if own else {}
    if not own:
        for key in message.extra:
            losses.add(at(path, key), "source-only")
    if message.role == "system":
        role = extra.pop("role", "system")
        content = _parts(message.content, "input_text", own, path, losses)
        return [{"role": role, "content": _flat(content), **extra}]
    if message.role == "assistant":
        return _assistant(message.content, own, path, losses, extra=extra, calls=calls)
    out: list[Json] = []
    rest: list[tuple[int, Block]] = []
    for j, block in enumerate(message.content):
        if isinstance(block, ToolResult):
            out.append({**_output(block, own, f"{path}.content[{j}]", losses, calls), **extra})
        elif isinstance(block, Unknown) and own:
            out.append({"type": block.block_type, **copy_json(block.data.value or {})})
        else:
            rest.append((j, block))
    if rest or not out:
        blocks = [b for _, b in rest]
        content = _parts(blocks, "input_text", own, path, losses, indexes=[j for j, _ in rest])
        if content or (own and not rest):
            # A message whose every block was left out (a cache breakpoint is a mark
            # on the block before it, never a block) is not written: the API refuses
            # an empty content list.
            out.append({"role": "user", "content": _flat(content), **extra})
    return out


def _flat(content: list[Json]) -> str | list[Json]:
    if len(content) == 1 and set(content[0]) == {"type", "text"}:
        return str(content[0]["text"])
    return content


def _parts(
    blocks: Sequence[Block],
    text_kind: str,
    own: bool,
    path: str,
    losses: Losses,
    *,
    indexes: Sequence[int] | None = None,
) -> list[Json]:
    parts: list[Json] = []
    for n, block in enumerate(blocks):
        where = f"{path}.content[{indexes[n] if indexes is not None else n}]"
        match block:
            case Text(text=text):
                if block.signature is not None:
                    losses.add(where, "foreign-reasoning")
                parts.append({"type": text_kind, "text": text})
            case Image():
                url = block.url if block.data is None else data_url(block.media_type, block.data)
                image: Json = {"type": "input_image", "image_url": url or ""}
                if own:
                    image.update(copy_json(dict(block.extra)))
                else:
                    for key, value in block.extra.items():
                        if key == "detail":  # Chat Completions' detail: the same words
                            image["detail"] = copy_json(value)
                        else:
                            losses.add(at(where, key), "source-only")
                # The API requires the detail: the model's own choice when none is said.
                image.setdefault("detail", "auto")
                parts.append(image)
            case Document(data=str(data)):
                file: Json = {"type": "input_file", "file_data": data_url(block.media_type, data)}
                if block.title is not None:
                    file["filename"] = block.title
                parts.append(file)
            case Document(text=str(text)):
                losses.add(where, "approximated")
                parts.append({"type": text_kind, "text": text})
            case Document(url=str(url)):
                parts.append({"type": "input_file", "file_url": url})
            case Unknown(block_type=kind, data=data) if own:
                parts.append({"type": kind, **copy_json(data.value or {})})
            case Unknown():
                losses.add(where, "source-only")
            case _:
                losses.add(where, "unsupported")
    return parts


def _output(
    result: ToolResult, own: bool, path: str, losses: Losses, calls: dict[str, bool]
) -> Json:
    kind = _OUTPUTS[1] if calls.get(result.tool_use_id) else _OUTPUTS[0]
    output: str | list[Json]
    if isinstance(result.content, str) or result.is_error:
        output = flagged_output(result)
    else:
        output = _parts(result.content, "input_text", own, path, losses)
        if not output and (result.content or not own):
            output = ""  # every part was left out: an empty list is refused
    return {"type": kind, "call_id": result.tool_use_id, "output": output}


def _assistant(
    blocks: Sequence[Block],
    own: bool,
    path: str,
    losses: Losses,
    *,
    extra: Json,
    calls: dict[str, bool],
) -> list[Json]:
    out: list[Json] = []
    for j, block in enumerate(blocks):
        where = f"{path}.content[{j}]"
        match block:
            case Reasoning() if own and (block.id or block.signature):
                out.append(_reasoning(block, extra))
            case Reasoning():
                losses.add(where, "foreign-reasoning")
            case Text(text=text):
                if block.signature is not None and not own:
                    losses.add(where, "foreign-reasoning")
                if text or own:
                    out.append({"type": "message", "role": "assistant", "content": text})
            case ToolUse() | InvalidToolUse():
                if isinstance(block, ToolUse) and block.signature is not None and not own:
                    losses.add(where, "foreign-reasoning")
                custom = isinstance(block, ToolUse) and is_custom(block)
                calls[block.id] = custom
                out.append(_call(block, custom))
            case Unknown(block_type="citation"):
                losses.add(where, "unsupported")  # it annotates an answer's text
            case Unknown(block_type=kind, data=data) if own:
                out.append({"type": kind, **copy_json(data.value or {})})
            case _:
                losses.add(where, "source-only" if isinstance(block, Unknown) else "unsupported")
    if len(out) == 1:
        out[0].update(extra)  # one item per message when read from this API
    return out


def _call(block: ToolUse | InvalidToolUse, custom: bool) -> Json:
    if custom and isinstance(block, ToolUse):
        return {
            "type": "custom_tool_call",
            "call_id": block.id,
            "name": block.name,
            "input": block.input.value,
        }
    return {
        "type": "function_call",
        "call_id": block.id,
        "name": block.name,
        "arguments": arguments_text(block),
    }


def _reasoning(block: Reasoning, extra: Json) -> Json:
    item: Json = {"type": "reasoning"}
    if block.id:
        item["id"] = block.id
    summary = extra.pop("summary", None)
    if summary is None:
        # The summary is required (possibly empty); the text goes back as one part.
        summary = [{"type": "summary_text", "text": block.text}] if block.text else []
    item["summary"] = summary
    if block.signature is not None:
        item["encrypted_content"] = block.signature
    return item


def _tool(spec: ToolSpec, own: bool, path: str, losses: Losses) -> Json | None:
    if spec.cache is not None:
        losses.add(at(path, "cache"), "unsupported")  # caching is the API's own business
    extra: Json = copy_json(dict(spec.extra)) if own else {}
    if not own:
        for key in spec.extra:
            if spec.kind == "custom" and key == "format":
                extra["format"] = _flat_format(spec.extra["format"])
            elif spec.kind in ("function", "custom"):
                losses.add(at(path, key), "source-only")
    match spec.kind:
        case "function":
            written: Json = {"type": "function", "name": spec.name}
            if spec.description:
                written["description"] = spec.description
            written["parameters"] = copy_json(dict(spec.schema)) or {
                "type": "object",
                "properties": {},
            }
            # ``strict`` defaults to true in this API, which would refuse an ordinary
            # schema (optional properties): say which one it is.
            strict = spec.strict
            if strict and not own and not strict_compatible(spec.schema):
                # Strict mode would refuse this schema: the tool is sent without it.
                losses.add(at(path, "strict"), "schema")
                strict = False
            if strict is not None or not own:
                written["strict"] = bool(strict)
            return {**written, **extra}
        case "custom":
            written = {"type": "custom", "name": spec.name}
            if spec.description:
                written["description"] = spec.description
            return {**written, **extra}
        case _ if own:
            return extra
        case _:
            losses.add(path, "unsupported")
            return None


# -- the tool loop's shapes -----------------------------------------------------------------


def tool(tool: ToolDefinition) -> Json:
    if tool.input_format is not None:  # a custom (free-form) tool
        extra = {"format": _flat_format(tool.input_format)}
        spec = ToolSpec(tool.name, tool.description, kind="custom", extra=extra)
    else:
        spec = ToolSpec(tool.name, tool.description, tool.parameters, tool.strict)
    return _tool(spec, False, "", Losses()) or {}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> list[Json]:
    own = response.provider == NAME
    content = [b for b in response.content if not (isinstance(b, Text) and not b.text)]
    return _assistant(content, own, "", Losses(), extra={}, calls={})


def results(results: Sequence[ToolOutcome]) -> list[Json]:
    custom = {r.call_id: r.kind == "custom" for r in results}
    return [_output(_outcome(r), False, "", Losses(), custom) for r in results]


def _outcome(result: ToolOutcome) -> ToolResult:
    if isinstance(result, ToolResult):
        return result
    return ToolResult(result.call_id, result.name, result.output, result.ok, result.kind)


def _flat_format(input_format: Mapping[str, Any]) -> Json:
    """This API spells a grammar's fields beside its type (``{"type": "grammar",
    "syntax", "definition"}``); Chat Completions nests them in ``grammar``."""
    grammar = input_format.get("grammar")
    if input_format.get("type") == "grammar" and isinstance(grammar, Mapping):
        return {"type": "grammar", **copy_json(dict(grammar))}
    return copy_json(dict(input_format))


def first_request(model: str, prompt: str, tools: list[Json]) -> Json:
    """A streamed first request: the prompt as the one ``input`` item."""
    return chat_request(model, prompt, tools, key="input")


# What /v1/responses/input_tokens takes of a request (it refuses the rest: ``stream``,
# ``max_output_tokens``, ...).
_COUNTED_FIELDS: Final = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "text",
        "truncation",
        "conversation",
        "previous_response_id",
    }
)


def count_tokens_body(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """``/v1/responses/input_tokens``'s request for a chat request: the fields it takes."""
    return {**{k: v for k, v in body.items() if k in _COUNTED_FIELDS}, "model": model}
