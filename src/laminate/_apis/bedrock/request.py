"""Bedrock Converse requests, read and written.

The model id and whether the answer streams are in the path
(``/model/{modelId}/converse`` or ``/converse-stream``, the id URL-quoted), not in the
body.

Reading: ``system`` blocks (``text``, ``cachePoint``), ``messages`` of content blocks
(``text``, ``image``, ``document``, ``searchResult`` (a text document, kept whole for
Bedrock), ``toolUse``, ``toolResult`` with its ``status``,
``reasoningContent`` with its signature or redacted data, ``cachePoint``; any other kind
is an ``Unknown`` kept whole), ``toolConfig`` (tool specs, a ``cachePoint`` after a tool,
``toolChoice``), ``inferenceConfig``, and what ``additionalModelRequestFields`` says of
reasoning and ``top_k``. What is left is ``extra``.

Writing, and what Converse requires of a request from elsewhere:

- Turns alternate and start with the user: consecutive turns of one role are merged, so
  several tool results are one user turn right after the call.
- A ``toolConfig`` whenever the history holds tool blocks, even when the request has no
  tools (the tools the history calls are declared, with an open schema) or its tool
  choice is ``none`` (Converse has no ``none``: the tools are sent without a choice, a
  loss).
- No blank text blocks; a tool result never empty (``"(no output)"``).
- Reasoning and its signature only back to Bedrock: another provider's reasoning is a
  loss (even a Claude model's through another provider: it is not Bedrock's to vouch
  for).
- ``top_k`` and reasoning go in ``additionalModelRequestFields`` in the shape of the
  model's family (Claude, Nova); for other models they are a loss.
- Bytes (images, documents, redacted reasoning) are base64 text in a JSON body; the tool
  loop's turns (for boto3, which encodes bytes itself) carry redacted reasoning as
  ``bytes``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote, unquote

from ..._core.flex import FlexValue
from ..._core.request import (
    Block,
    CachePoint,
    Document,
    Image,
    JsonSchema,
    Message,
    Request,
    ResultPart,
    ToolResult,
    ToolSpec,
)
from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..requestkit import (
    Losses,
    at,
    copy_json,
    get,
    invalid,
    items,
    model_for_path,
    need,
    object_at,
)
from ..shapes import arguments_object
from ..spec import DEFAULT_WRITE_OPTIONS, ToolDefinition, ToolOutcome, WriteOptions, WrittenBody
from ..spec import JsonObject as Json

__all__ = [
    "EMPTY_OUTPUT",
    "assistant",
    "count_tokens_body",
    "first_request",
    "read_request",
    "results",
    "tool",
    "write_request",
]

NAME: Final = "bedrock"
EMPTY_OUTPUT: Final = "(no output)"
"""A tool result's text when the tool printed nothing: Bedrock refuses an empty one."""

_SEARCH: Final = "searchResult"
"""The key of a search result's own block in the ``extra`` of the document it is read as."""
_PATH: Final = re.compile(r"/model/([^/]+)/(converse|converse-stream)")
_TOP: Final = frozenset({"messages", "system", "toolConfig", "inferenceConfig"})
_INFERENCE: Final = frozenset({"maxTokens", "temperature", "topP", "stopSequences"})
_FORMATS: Final[Mapping[str, str]] = {
    "pdf": "application/pdf",
    "csv": "text/csv",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html",
    "txt": "text/plain",
    "md": "text/markdown",
}
_EXTENSIONS: Final = {media: ext for ext, media in _FORMATS.items()}
# Bedrock's rule for a document's name: letters, digits, white space, hyphens,
# parentheses and square brackets.
_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9\s\-()\[\]]+")
_OPEN_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


# -- reading --------------------------------------------------------------------------------


def read_request(body: Mapping[str, Any], path: str | None) -> Request:
    """The neutral request of a Converse body sent to ``path``."""
    model, stream = _from_path(path)
    messages = [
        _read_message(object_at(m, where), where) for where, m in items(body, "messages", "")
    ]
    if "messages" not in body:
        raise invalid("messages", "missing")
    extra = {key: copy_json(value) for key, value in body.items() if key not in _TOP}
    system = _read_system(body, extra)
    tools, choice = _read_tools(body, extra)
    inference = get(body, "inferenceConfig", dict, "") or {}
    where = "inferenceConfig"
    leftover = {k: copy_json(v) for k, v in inference.items() if k not in _INFERENCE}
    if leftover:
        extra["inferenceConfig"] = leftover
    settings = _read_additional(extra, model)
    return Request(
        model=model,
        system=system,
        messages=messages,
        tools=tools,
        tool_choice=choice,
        max_tokens=get(inference, "maxTokens", int, where),
        temperature=get(inference, "temperature", float, where),
        top_p=get(inference, "topP", float, where),
        stop=list(get(inference, "stopSequences", list, where) or ()),
        stream=stream,
        extra=extra,
        api=NAME,
        **settings,
    )


def _from_path(path: str | None) -> tuple[str, bool | None]:
    if path is None:
        return "", None
    found = _PATH.fullmatch(path.split("?", 1)[0])
    if found is None:
        raise invalid("", f"{path!r} is not a Converse path")
    return unquote(found[1]), found[2] == "converse-stream"


def _read_system(body: Mapping[str, Any], extra: dict[str, Any]) -> list[Text | CachePoint]:
    system: list[Text | CachePoint] = []
    for where, block in items(body, "system", ""):
        given = object_at(block, where)
        if "text" in given:
            system.append(Text(need(given, "text", str, where)))
        elif "cachePoint" in given:
            system.append(_cache_point(given, where))
        else:  # a guard block: the system goes back to Bedrock as it came
            extra["system"] = copy_json(list(body["system"]))
    return system


def _cache_point(block: Mapping[str, Any], path: str) -> CachePoint:
    point = object_at(block["cachePoint"], at(path, "cachePoint"))
    return CachePoint(get(point, "ttl", str, at(path, "cachePoint")))


def _read_message(message: Mapping[str, Any], path: str) -> Message:
    role = need(message, "role", str, path)
    if role not in ("user", "assistant"):
        raise invalid(at(path, "role"), f"expected 'user' or 'assistant', got {role!r}")
    blocks = [
        _read_block(object_at(b, where), where) for where, b in items(message, "content", path)
    ]
    if "content" not in message:
        raise invalid(at(path, "content"), "missing")
    return Message("user" if role == "user" else "assistant", blocks)


def _read_block(block: Mapping[str, Any], path: str) -> Block:
    kind = next(iter(block), "")
    if len(block) != 1:
        raise invalid(path, "a content block holds exactly one kind")
    where = at(path, kind)
    match kind:
        case "text":
            return Text(need(block, "text", str, path))
        case "cachePoint":
            return _cache_point(block, path)
        case "toolUse":
            call = object_at(block[kind], where)
            args: Any = need(call, "input", (dict, list, str, int, float, bool), where)
            return ToolUse(
                need(call, "toolUseId", str, where),
                need(call, "name", str, where),
                FlexValue(copy_json(args)),
            )
        case "toolResult":
            return _read_result(object_at(block[kind], where), where)
        case "reasoningContent":
            return _read_reasoning(object_at(block[kind], where), where)
        case "image":
            return _read_image(object_at(block[kind], where), where)
        case "document":
            return _read_document(object_at(block[kind], where), where)
        case "searchResult":
            return _read_search_result(object_at(block[kind], where), where)
        case _:
            return Unknown(kind, FlexValue(copy_json(block[kind])))


def _read_result(result: Mapping[str, Any], path: str) -> ToolResult:
    parts: list[ResultPart] = []
    for where, item in items(result, "content", path):
        given = object_at(item, where)
        if "text" in given:
            parts.append(Text(need(given, "text", str, where)))
        elif "json" in given:
            parts.append(Text(json.dumps(given["json"], ensure_ascii=False, separators=(",", ":"))))
        elif "image" in given:
            parts.append(_read_image(object_at(given["image"], at(where, "image")), where))
        elif "document" in given:
            parts.append(_read_document(object_at(given["document"], at(where, "document")), where))
        elif "searchResult" in given:
            found = object_at(given["searchResult"], at(where, "searchResult"))
            parts.append(_read_search_result(found, at(where, "searchResult")))
        else:
            raise invalid(where, f"a tool result block of kind {next(iter(given), '')!r}")
    content: str | list[ResultPart] = parts
    if len(parts) == 1 and isinstance(parts[0], Text):
        content = parts[0].text
    status = get(result, "status", str, path)
    return ToolResult(
        tool_use_id=need(result, "toolUseId", str, path),
        content=content,
        is_error=status == "error",
    )


def _read_reasoning(block: Mapping[str, Any], path: str) -> Reasoning:
    if "redactedContent" in block:
        return Reasoning("", need(block, "redactedContent", str, path), redacted=True)
    text = object_at(need(block, "reasoningText", dict, path), at(path, "reasoningText"))
    where = at(path, "reasoningText")
    return Reasoning(need(text, "text", str, where), get(text, "signature", str, where))


def _read_image(image: Mapping[str, Any], path: str) -> Image:
    form = need(image, "format", str, path)
    source = object_at(need(image, "source", dict, path), at(path, "source"))
    if "bytes" in source:
        return Image(f"image/{form}", data=need(source, "bytes", str, at(path, "source")))
    return Image(f"image/{form}", extra={"source": copy_json(dict(source))})


def _read_search_result(found: Mapping[str, Any], path: str) -> Document:
    """A search result (a tool's found passage, with its source and title) is a text
    document to every API; the block as it came is kept for this one."""
    texts = [
        need(object_at(part, p), "text", str, p)
        for p, part in items(found, "content", path)
        if isinstance(part, Mapping) and "text" in part
    ]
    title = get(found, "title", str, path)
    kept = {_SEARCH: copy_json(dict(found))}
    return Document("text/plain", text="\n\n".join(texts), title=title, extra=kept)


def _read_document(document: Mapping[str, Any], path: str) -> Document:
    form = need(document, "format", str, path)
    source = object_at(need(document, "source", dict, path), at(path, "source"))
    title = get(document, "name", str, path)
    rest = {k: copy_json(v) for k, v in document.items() if k not in ("format", "name", "source")}
    media_type = _FORMATS.get(form, f"application/{form}")
    if "bytes" in source:
        data = need(source, "bytes", str, at(path, "source"))
        return Document(media_type, data=data, title=title, extra=rest)
    if "text" in source:
        text = need(source, "text", str, at(path, "source"))
        return Document(media_type, text=text, title=title, extra=rest)
    return Document(media_type, title=title, extra={**rest, "source": copy_json(dict(source))})


def _read_tools(
    body: Mapping[str, Any], extra: dict[str, Any]
) -> tuple[list[ToolSpec], str | None]:
    config = get(body, "toolConfig", dict, "")
    if config is None:
        return [], None
    tools: list[ToolSpec] = []
    for where, entry in items(config, "tools", "toolConfig"):
        given = object_at(entry, where)
        if "toolSpec" in given:
            tools.append(_read_spec(object_at(given["toolSpec"], at(where, "toolSpec")), where))
        elif "cachePoint" in given and tools:
            point = _cache_point(given, where)
            tools[-1] = _with(tools[-1], cachePoint=point.ttl or "")
        else:
            kind = next(iter(given), "tool")
            tools.append(ToolSpec(kind, kind=kind, extra={"tool": copy_json(dict(given))}))
    choice = get(config, "toolChoice", dict, "toolConfig")
    rest = {k: copy_json(v) for k, v in config.items() if k not in ("tools", "toolChoice")}
    if rest:
        extra["toolConfig"] = rest
    if choice is None:
        return tools, None
    where = "toolConfig.toolChoice"
    if "tool" in choice:
        return tools, need(object_at(choice["tool"], at(where, "tool")), "name", str, where)
    kind = next(iter(choice), "")
    if kind not in ("auto", "any"):
        raise invalid(where, f"unknown tool choice {kind!r}")
    return tools, kind


def _read_spec(spec: Mapping[str, Any], path: str) -> ToolSpec:
    schema = object_at(need(spec, "inputSchema", dict, path), at(path, "inputSchema"))
    return ToolSpec(
        need(spec, "name", str, path),
        get(spec, "description", str, path) or "",
        copy_json(dict(get(schema, "json", dict, at(path, "inputSchema")) or {})),
        get(spec, "strict", bool, path),
    )


def _with(spec: ToolSpec, **extra: Any) -> ToolSpec:
    return ToolSpec(
        spec.name, spec.description, spec.schema, spec.strict, spec.kind, {**spec.extra, **extra}
    )


def _read_additional(extra: dict[str, Any], model: str) -> dict[str, Any]:
    """Reasoning and ``top_k`` from ``additionalModelRequestFields``, in the shapes this
    writer gives them (anything else stays in ``extra``)."""
    fields = extra.get("additionalModelRequestFields")
    if not isinstance(fields, dict):
        return {}
    settings: dict[str, Any] = {}
    thinking = fields.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if isinstance(budget, int) and not isinstance(budget, bool):
            settings["reasoning"] = budget
    top_k = fields.get("top_k")
    if isinstance(top_k, int) and not isinstance(top_k, bool):
        settings["top_k"] = top_k
    if _additional(model, settings.get("top_k"), settings.get("reasoning"), Losses()) == fields:
        del extra["additionalModelRequestFields"]  # the neutral fields say all of it
    return settings


# -- writing --------------------------------------------------------------------------------


def write_request(request: Request, options: WriteOptions = DEFAULT_WRITE_OPTIONS) -> WrittenBody:
    """``request`` as a Converse body, its path and what it lost."""
    losses = Losses()
    if request.allowed_tools is not None:
        losses.add("allowed_tools", "unsupported")  # every tool stays offered
    own = request.api == NAME
    extra = losses.source_only(request, NAME)
    writer = _Writer(request, losses, binary=False)
    messages = writer.conversation()
    system = writer.system()
    body: Json = {"messages": messages}
    if system:
        body["system"] = system
    inference: Json = {}
    if request.max_tokens is not None:
        inference["maxTokens"] = request.max_tokens
    if request.temperature is not None:
        inference["temperature"] = request.temperature
    if request.top_p is not None:
        inference["topP"] = request.top_p
    if request.stop:
        inference["stopSequences"] = list(request.stop)
    inference.update(extra.pop("inferenceConfig", {}))
    if inference or (own and request.extra.get("inferenceConfig") is not None):
        body["inferenceConfig"] = inference
    config = _tool_config(request, messages, losses)
    if config is not None:
        body["toolConfig"] = {**config, **extra.pop("toolConfig", {})}
    additional = _additional(request.model, request.top_k, request.reasoning, losses)
    if additional:
        body["additionalModelRequestFields"] = additional
    if request.response_format is not None:
        body["outputConfig"] = _output_config(request.response_format)
        if request.response_format == "json":
            losses.add("response_format", "approximated")  # a schema of any object
    if request.parallel_tool_calls is False:
        losses.add("parallel_tool_calls", "unsupported")
    if request.user is not None:
        losses.add("user", "unsupported")
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body, _path(request), losses


# What Bedrock takes as a modelId: an ARN (its own "/" and ":" inside), or an id or
# inference profile of letters, digits, ".", ":", "_" and "-" (the API's modelId pattern).
_MODEL: Final = re.compile(r"arn:aws[^/\s]*:(bedrock|sagemaker):\S+|[A-Za-z0-9._:-]+")


def _path(request: Request) -> str:
    method = "converse-stream" if request.stream else "converse"
    model = model_for_path(request.model, "Bedrock", _MODEL, "a model id, profile or ARN")
    return f"/model/{quote(model, safe='')}/{method}"


def _claude(model: str) -> bool:
    return "claude" in model


class _Writer:
    """Writes the system and the conversation of one request."""

    def __init__(self, request: Request, losses: Losses, *, binary: bool) -> None:
        self.request = request
        self.losses = losses
        self.binary = binary
        self.own = request.api == NAME
        # Signed reasoning goes back only to the provider that signed it.
        self.signed = self.own
        self.documents = 0
        self.hoisted: list[Json] = []  # system messages inside the conversation

    def system(self) -> list[Json]:
        out: list[Json] = []
        for block in self.request.system:
            if isinstance(block, CachePoint):
                out.append(_cache_block(block))
            elif block.text.strip():
                out.append({"text": block.text})
        return out + self.hoisted

    def conversation(self) -> list[Json]:
        turns: list[Json] = []
        for index, message in enumerate(self.request.messages):
            where = at("messages", index)
            if message.role == "system":
                self.hoisted.extend(
                    {"text": b.text} for b in message.content if isinstance(b, Text) and b.text
                )
                self.losses.add(where, "reordered")
                continue
            content = self.blocks(message.content, where)
            if not content:
                continue
            if turns and turns[-1]["role"] == message.role:
                turns[-1]["content"].extend(content)  # Converse wants turns to alternate
            else:
                turns.append({"role": message.role, "content": content})
        for turn in turns:
            turn["content"] = _results_first(turn["content"])
        return turns

    def blocks(self, blocks: Sequence[Block], path: str) -> list[Json]:
        out: list[Json] = []
        for index, block in enumerate(blocks):
            written = self.block(block, at(at(path, "content"), index))
            if written is not None:
                out.append(written)
        return out

    def block(self, block: Block, where: str) -> Json | None:
        match block:
            case Text(text=text):
                # Converse refuses blank text; what a Bedrock client sent goes back as is.
                return {"text": text} if text.strip() or (self.own and text) else None
            case Reasoning(redacted=True, signature=str(data)) if self.signed:
                return {"reasoningContent": {"redactedContent": self._blob(data)}}
            case Reasoning(redacted=False, signature=str(signature)) if self.signed:
                signed = {"text": block.text, "signature": signature}
                return {"reasoningContent": {"reasoningText": signed}}
            case Reasoning():
                if block.text or block.signature:
                    self.losses.add(where, "foreign-reasoning")
                return None
            case ToolUse() | InvalidToolUse():
                call = {"toolUseId": block.id, "name": block.name, "input": arguments_object(block)}
                if isinstance(block, InvalidToolUse) or not isinstance(block.input.value, dict):
                    self.losses.add(where, "approximated")
                return {"toolUse": call}
            case ToolResult():
                return {"toolResult": self.result(block, where)}
            case CachePoint():
                return _cache_block(block)
            case Image():
                return self.image(block, where)
            case Document():
                return self.document(block, where)
            case Unknown(block_type="citation"):
                return None  # it annotates the text sent back: not a block of a request
            case Unknown(block_type=kind, data=data) if self.own:
                value = copy_json(data.value or {})
                return {"toolUse": value} if kind == "server_tool_use" else {kind: value}
            case _:
                self.losses.add(where, "unsupported")
                return None

    def result(self, block: ToolResult, where: str) -> Json:
        content: list[Json] = []
        if isinstance(block.content, str):
            content.append({"text": block.content or EMPTY_OUTPUT})
        else:
            for index, part in enumerate(block.content):
                place = at(at(where, "content"), index)
                written: Json | None
                match part:
                    case Text():
                        written = {"text": part.text or EMPTY_OUTPUT}
                    case Image():
                        written = self.image(part, place)
                    case Document():
                        written = self.document(part, place)
                    case _:
                        written = None
                        self.losses.add(place, "unsupported")
                if written is not None:
                    content.append(written)
            if not content:
                content.append({"text": EMPTY_OUTPUT})
        result: Json = {"toolUseId": block.tool_use_id, "content": content}
        if block.is_error:
            result["status"] = "error"
        return result

    def image(self, block: Image, where: str) -> Json | None:
        form = block.media_type.removeprefix("image/")
        if self.own and "source" in block.extra:
            return {"image": {"format": form, "source": copy_json(block.extra["source"])}}
        if block.data is None:
            self.losses.add(where, "unsupported")  # Converse fetches no URL
            return None
        return {"image": {"format": form, "source": {"bytes": block.data}}}

    def document(self, block: Document, where: str) -> Json | None:
        if self.own and _SEARCH in block.extra:
            return {_SEARCH: copy_json(block.extra[_SEARCH])}
        self.documents += 1
        form = _EXTENSIONS.get(block.media_type, block.media_type.rsplit("/", 1)[-1])
        name = _NAME_CHARS.sub(" ", block.title or "").strip() or f"document {self.documents}"
        if block.title is not None and name != block.title:
            self.losses.add(at(where, "title"), "approximated")
        written: Json = {"format": form, "name": name}
        if block.data is not None:
            written["source"] = {"bytes": block.data}
        elif block.text is not None:
            written["source"] = {"text": block.text}
        elif self.own and "source" in block.extra:
            written["source"] = copy_json(block.extra["source"])
        else:
            self.losses.add(where, "unsupported")
            return None
        if self.own:
            written.update({k: copy_json(v) for k, v in block.extra.items() if k != "source"})
        else:
            for key in block.extra:
                self.losses.add(at(where, key), "source-only")
        return {"document": written}

    def _blob(self, data: str) -> str | bytes:
        if not self.binary:
            return data
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return data.encode()  # not base64: sent as the bytes it is


def _cache_block(point: CachePoint) -> Json:
    block: Json = {"type": "default"}
    if point.ttl:
        block["ttl"] = point.ttl
    return {"cachePoint": block}


def _results_first(content: list[Json]) -> list[Json]:
    # Results answer the turn before: they open the user turn they are in.
    results = [b for b in content if "toolResult" in b]
    if not results or content[: len(results)] == results:
        return content
    return results + [b for b in content if "toolResult" not in b]


def _tool_config(request: Request, messages: list[Json], losses: Losses) -> Json | None:
    own = request.api == NAME
    specs: list[Json] = []
    for index, spec in enumerate(request.tools):
        where = at("tools", index)
        if spec.kind == "function":
            specs.append({"toolSpec": _spec(spec)})
            if own and "cachePoint" in spec.extra:
                specs.append(_cache_block(CachePoint(spec.extra["cachePoint"] or None)))
            elif not own:
                for key in spec.extra:
                    if key == "cache_control":  # a breakpoint after the tool
                        specs.append(_cache_block(CachePoint()))
                    else:
                        losses.add(at(where, key), "source-only")
        elif own and "tool" in spec.extra:
            specs.append(copy_json(dict(spec.extra["tool"])))
        else:
            losses.add(where, "unsupported")
    history = _called(messages)
    if not specs:
        # Converse refuses tool blocks in the history without a toolConfig: the tools
        # the history calls are declared, with an open schema.
        specs = [{"toolSpec": _spec(ToolSpec(name, schema=_OPEN_SCHEMA))} for name in history]
    if not specs:
        if request.tool_choice not in (None, "none"):
            losses.add("tool_choice", "unsupported")
        return None
    choice = request.tool_choice
    if choice == "none":
        if not history and len(specs) == len(request.tools):
            losses.add("tools", "unsupported")  # no "none": the tools are left out
            losses.add("tool_choice", "unsupported")
            return None
        losses.add("tool_choice", "unsupported")
        return {"tools": specs}
    config: Json = {"tools": specs}
    if choice in ("auto", "any"):
        config["toolChoice"] = {choice: {}}
    elif choice is not None:
        config["toolChoice"] = {"tool": {"name": choice}}
    return config


def _called(messages: list[Json]) -> list[str]:
    names: list[str] = []
    for message in messages:
        for block in message["content"]:
            call = block.get("toolUse")
            name = call.get("name") if isinstance(call, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def _spec(spec: ToolSpec) -> Json:
    written: Json = {"name": spec.name}
    if spec.description:
        written["description"] = spec.description
    written["inputSchema"] = {"json": copy_json(dict(spec.schema)) or dict(_OPEN_SCHEMA)}
    if spec.strict is not None:
        written["strict"] = spec.strict
    return written


def _additional(model: str, top_k: int | None, reasoning: str | int | None, losses: Losses) -> Json:
    """``additionalModelRequestFields`` for the model's family."""
    fields: Json = {}
    claude = _claude(model)
    nova = "nova" in model
    if top_k is not None:
        if claude:
            fields["top_k"] = top_k
        elif nova:
            fields["inferenceConfig"] = {"topK": top_k}
        else:
            losses.add("top_k", "unsupported")
    if reasoning is not None:
        if claude:
            budget = reasoning if isinstance(reasoning, int) else _budget(reasoning)
            fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
            if isinstance(reasoning, str):
                losses.add("reasoning", "approximated")
        elif nova and isinstance(reasoning, str) and reasoning in ("low", "medium", "high"):
            fields["reasoningConfig"] = {"type": "enabled", "maxReasoningEffort": reasoning}
        else:
            losses.add("reasoning", "unsupported")
    return fields


def _budget(effort: str) -> int:
    return {"minimal": 1024, "low": 2048, "medium": 8192}.get(effort, 24576)


def _output_config(response_format: JsonSchema | str) -> Json:
    if isinstance(response_format, JsonSchema):
        schema = json.dumps(dict(response_format.schema), ensure_ascii=False)
        structure = {"jsonSchema": {"schema": schema, "name": response_format.name}}
    else:
        structure = {"jsonSchema": {"schema": json.dumps({"type": "object"})}}
    return {"textFormat": {"type": "json_schema", "structure": structure}}


# -- the tool loop's shapes -----------------------------------------------------------------


def tool(tool: ToolDefinition) -> Json:
    """One ``toolConfig.tools`` entry."""
    return {"toolSpec": _spec(ToolSpec(tool.name, tool.description, tool.parameters))}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Json:
    """The assistant turn of a response, for boto3 (redacted reasoning as ``bytes``)."""
    request = Request(model=response.model, api=response.provider)
    writer = _Writer(request, Losses(), binary=True)
    writer.signed = response.provider == NAME  # a response names no model family
    content = writer.blocks(list(response.content), "")
    return {"role": "assistant", "content": content}


def results(results: Sequence[ToolOutcome]) -> list[Json]:
    """ONE user turn of ``toolResult`` blocks."""
    if not results:
        return []
    writer = _Writer(Request(), Losses(), binary=True)
    blocks = [{"toolResult": writer.result(_outcome(r), "")} for r in results]
    return [{"role": "user", "content": blocks}]


def _outcome(result: ToolOutcome) -> ToolResult:
    if isinstance(result, ToolResult):
        return result
    return ToolResult(result.call_id, result.name, result.output, result.ok)


def first_request(model: str, prompt: str, tools: list[Json]) -> Json:
    """A Converse first request: content blocks, the tools under ``toolConfig``; the model
    is named in the path, and the endpoint says whether the answer streams."""
    return {
        "messages": [{"role": "user", "content": [{"text": prompt}]}],
        "toolConfig": {"tools": tools},
        "inferenceConfig": {"maxTokens": 2048},
    }


# What a Converse request is counted by (CountTokens' ``input.converse``).
_COUNTED_FIELDS: Final = ("messages", "system", "toolConfig", "additionalModelRequestFields")


def count_tokens_body(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """CountTokens' request for a Converse request (the model is in the path)."""
    return {"input": {"converse": {k: body[k] for k in _COUNTED_FIELDS if k in body}}}
