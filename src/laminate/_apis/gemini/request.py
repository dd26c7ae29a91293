"""Gemini ``generateContent`` requests, read and written.

The model and whether the answer streams are in the path
(``/v1beta/models/{model}:streamGenerateContent?alt=sse``, ``...:generateContent``), not
in the body. The API reads proto3 JSON, so every field is read in camelCase and in
snake_case alike; bodies are written in camelCase.

Reading:

- ``contents`` of ``user`` and ``model`` turns; parts: ``text`` (``thought: true`` makes it
  reasoning), ``functionCall``, ``functionResponse`` (with Gemini 3's media in its
  ``parts``, written back there), ``inlineData`` and ``fileData`` (an
  image, or a document for any other media type); any other part is kept whole as an
  ``Unknown`` block of its kind. A ``thoughtSignature`` stays with its part.
- A call without an ``id`` gets ``call_<n>`` (its place among the calls), and a result
  without one answers the earliest open call of its name, as Gemini pairs them.
- A result's ``response`` of ``{"output": text}`` or ``{"error": text}`` (the keys Gemini
  documents) is that text; any other object is kept as its JSON text, written back as the
  object.
- Fields with no neutral name (``responseModalities``, ``safetySettings``, a
  ``toolConfig`` the tool choice does not say all of, ...) go to ``extra``.

Writing: one ``systemInstruction``; a system message inside the conversation joins it (a
``reordered`` loss); tool results become ``functionResponse`` parts named after their
call; the tools one ``functionDeclarations`` entry with ``parametersJsonSchema`` (full
JSON Schema, less what Gemini refuses) or no schema for a tool without parameters.
Signatures and ``Unknown`` parts go back only to Gemini; a call another API made gets the
placeholder signature Gemini documents for calls it did not sign.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import unquote

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
    object_at,
)
from ..shapes import arguments_object
from ..spec import DEFAULT_WRITE_OPTIONS, ToolDefinition, ToolOutcome, WriteOptions, WrittenBody
from .read import METADATA

__all__ = [
    "MADE_UP_ID",
    "SKIP_SIGNATURE",
    "assistant",
    "count_tokens_body",
    "first_request",
    "function_response",
    "model_parts",
    "read_request",
    "results",
    "schema_for_gemini",
    "tool",
    "tools_array",
    "write_request",
]

NAME: Final = "gemini"
MADE_UP_ID: Final = re.compile(r"call_\d+(?:_\d+)*")
"""Ids laminate makes up for calls that came without one: never sent to Gemini."""
SKIP_SIGNATURE: Final = "skip_thought_signature_validator"
"""The ``thoughtSignature`` Gemini documents for a call it did not make (Gemini 3 refuses
a call in the history without one)."""

# A model id may hold a colon (`tunedModels/x:1`): the method is after the last one.
_PATH: Final = re.compile(r".*?/models/([^/?]+):(generateContent|streamGenerateContent)(\?.*)?")
_MODES: Final[Mapping[str, str]] = {"AUTO": "auto", "ANY": "any", "NONE": "none"}
_LEVELS: Final = ("minimal", "low", "medium", "high", "xhigh")
_SCHEMA_KEYS: Final = ("parametersJsonSchema", "parameters")
# generationConfig fields with a neutral name.
_GENERATION: Final = frozenset(
    {
        "maxOutputTokens",
        "temperature",
        "topP",
        "topK",
        "stopSequences",
        "thinkingConfig",
        "responseMimeType",
        "responseJsonSchema",
        "responseSchema",
    }
)
_TOP_LEVEL: Final = frozenset(
    {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _camel_keys(obj: Mapping[str, Any]) -> dict[str, Any]:
    """One level of an object with its keys in camelCase (proto3 JSON takes both)."""
    return {_camel(key) if "_" in key else key: value for key, value in obj.items()}


def _object(value: Any, path: str) -> dict[str, Any]:
    return _camel_keys(object_at(value, path))


# -- reading --------------------------------------------------------------------------------


def read_request(body: Mapping[str, Any], path: str | None) -> Request:
    """The neutral request of a Gemini body sent to ``path``."""
    obj = _camel_keys(body)
    model, stream = _from_path(path)
    reader = _Reader()
    messages = [
        reader.content(_object(turn, where), where) for where, turn in items(obj, "contents", "")
    ]
    if "contents" not in obj:
        raise invalid("contents", "missing")
    system: list[Text | CachePoint] = []
    instruction = get(obj, "systemInstruction", dict, "")
    if instruction is not None:
        system = _system(_camel_keys(instruction))
    extra = {key: copy_json(value) for key, value in obj.items() if key not in _TOP_LEVEL}
    if instruction is not None and set(instruction) != {"parts"}:
        # Its other fields (a `role`, ...) are written back beside the parts.
        extra["systemInstruction"] = {
            k: copy_json(v) for k, v in instruction.items() if k != "parts"
        }
    tools = _tools(obj, extra)
    choice = _tool_choice(obj, tools, extra)
    allowed = None
    if isinstance(choice, tuple):
        choice, allowed = choice
    config = _object(obj.get("generationConfig") or {}, "generationConfig")
    settings = _generation(config, extra)
    return Request(
        model=model,
        system=system,
        messages=messages,
        tools=tools,
        tool_choice=choice,
        allowed_tools=allowed,
        stream=stream,
        extra=extra,
        api=NAME,
        **settings,
    )


def _from_path(path: str | None) -> tuple[str, bool | None]:
    if path is None:
        return "", None
    found = _PATH.fullmatch(path)
    if found is None:
        raise invalid("", f"{path!r} is not a generateContent path")
    return unquote(found[1]), found[2] == "streamGenerateContent"


def _system(instruction: dict[str, Any]) -> list[Text | CachePoint]:
    texts: list[Text | CachePoint] = []
    for where, part in items(instruction, "parts", "systemInstruction"):
        text = get(_object(part, where), "text", str, where)
        texts.append(Text(text or ""))
    return texts


class _Reader:
    """Reads the turns in order, pairing results with the calls before them."""

    def __init__(self) -> None:
        self.calls = 0
        self.open: list[tuple[str, str]] = []  # (name, id) of calls not yet answered

    def content(self, turn: dict[str, Any], path: str) -> Message:
        role = get(turn, "role", str, path) or "user"
        if role not in ("user", "model"):
            raise invalid(at(path, "role"), f"expected 'user' or 'model', got {role!r}")
        blocks = [
            self.part(_object(part, where), where) for where, part in items(turn, "parts", path)
        ]
        extra = {k: copy_json(v) for k, v in turn.items() if k not in ("role", "parts")}
        return Message("assistant" if role == "model" else "user", blocks, extra)

    def part(self, part: dict[str, Any], path: str) -> Block:
        signature = get(part, "thoughtSignature", str, path)
        if "functionCall" in part:
            return self.call(
                _object(part["functionCall"], at(path, "functionCall")), signature, path
            )
        if "functionResponse" in part:
            return self.result(
                _object(part["functionResponse"], at(path, "functionResponse")), path
            )
        if "text" in part and set(part) <= {"text", "thought", "thoughtSignature"}:
            text = get(part, "text", str, path) or ""
            if get(part, "thought", bool, path):
                return Reasoning(text, signature)
            return Text(text, signature)
        if set(part) in ({"inlineData"}, {"fileData"}):
            return _media(part, path)
        kind = next((key for key in part if key != "thoughtSignature"), "")
        if not kind:
            raise invalid(path, "a part holds nothing")
        return Unknown(kind, FlexValue(copy_json(dict(part))))

    def call(self, call: dict[str, Any], signature: str | None, path: str) -> ToolUse:
        where = at(path, "functionCall")
        name = get(call, "name", str, where)
        if name is None:
            raise invalid(at(where, "name"), "missing")
        args = get(call, "args", dict, where)
        ident = get(call, "id", str, where) or f"call_{self.calls}"
        self.calls += 1
        self.open.append((name, ident))
        return ToolUse(ident, name, FlexValue(copy_json(dict(args or {}))), signature)

    def result(self, reply: dict[str, Any], path: str) -> ToolResult:
        where = at(path, "functionResponse")
        name = get(reply, "name", str, where) or ""
        ident = get(reply, "id", str, where)
        if ident is None:
            ident = next((i for n, i in self.open if n == name), f"call_{self.calls}")
        self.open = [(n, i) for n, i in self.open if i != ident]
        response = get(reply, "response", dict, where) or {}
        content, failed = _result_content(response)
        # Gemini 3's media of a result (images a tool returned) ride in its own parts.
        media = [_media(_object(p, w), w) for w, p in items(reply, "parts", where)]
        if media:
            parts: list[ResultPart] = [Text(content), *media] if content else [*media]
            return ToolResult(tool_use_id=ident, content=parts, is_error=failed, name=name)
        return ToolResult(tool_use_id=ident, content=content, is_error=failed, name=name)


def _result_content(response: Mapping[str, Any]) -> tuple[str, bool]:
    if len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return value, key == "error"
    return json.dumps(response, ensure_ascii=False, separators=(",", ":")), False


def _media(part: dict[str, Any], path: str) -> Image | Document:
    if "inlineData" in part:
        where = at(path, "inlineData")
        data = _object(part["inlineData"], where)
        media_type = get(data, "mimeType", str, where) or ""
        payload = get(data, "data", str, where) or ""
        if media_type.startswith("image/"):
            return Image(media_type, data=payload)
        return Document(media_type, data=payload)
    where = at(path, "fileData")
    data = _object(part["fileData"], where)
    media_type = get(data, "mimeType", str, where) or ""
    uri = get(data, "fileUri", str, where)
    if uri is None:
        raise invalid(at(where, "fileUri"), "missing")
    if media_type.startswith("image/"):
        return Image(media_type, url=uri)
    return Document(media_type, url=uri)


def _tools(obj: dict[str, Any], extra: dict[str, Any]) -> list[ToolSpec]:
    tools: list[ToolSpec] = []
    for where, entry in items(obj, "tools", ""):
        tool = _object(entry, where)
        if set(tool) != {"functionDeclarations"}:
            kind = next(iter(tool), "tool")
            tools.append(ToolSpec(kind, kind=kind, extra={"tool": copy_json(dict(entry))}))
            continue
        for place, declaration in items(tool, "functionDeclarations", where):
            tools.append(_declaration(object_at(declaration, place), place))
    return tools


def _declaration(declaration: Mapping[str, Any], path: str) -> ToolSpec:
    given = _camel_keys(declaration)
    name = get(given, "name", str, path)
    if name is None:
        raise invalid(at(path, "name"), "missing")
    description = get(given, "description", str, path) or ""
    # What a rewrite would not give back is kept for Gemini: an empty description, an
    # OpenAPI schema as sent, other fields.
    spelled = {_camel(key) if "_" in key else key: key for key in declaration}
    extra: dict[str, Any] = {}
    if "description" in given and not description:
        extra["described"] = True
    schema: dict[str, Any] = {}
    for key in _SCHEMA_KEYS:
        if key in given:
            value = object_at(given[key], at(path, key))
            if key == "parameters":  # Gemini's OpenAPI schema: back to Gemini as sent
                extra["schema_key"] = spelled[key]
                extra["parameters"] = copy_json(dict(value))
                schema = _json_schema(value)
            else:
                schema = copy_json(dict(value))
    others = {
        k: copy_json(v) for k, v in given.items() if k not in {"name", "description", *_SCHEMA_KEYS}
    }
    if others:
        extra["fields"] = others
    return ToolSpec(name, description, schema, None, extra=extra)


def _json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI schema (``"type": "OBJECT"``) as JSON Schema."""
    if isinstance(schema, Mapping):
        out = {key: _json_schema(value) for key, value in schema.items()}
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = kind.lower()
        if out.pop("nullable", False) is True and isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        return out
    if isinstance(schema, list):
        return [_json_schema(item) for item in schema]
    return schema


def _tool_choice(
    obj: dict[str, Any], tools: list[ToolSpec], extra: dict[str, Any]
) -> str | tuple[str, list[str]] | None:
    config = get(obj, "toolConfig", dict, "")
    if config is None:
        return None
    given = _camel_keys(config)
    calling = _object(given.get("functionCallingConfig") or {}, "toolConfig.functionCallingConfig")
    mode = get(calling, "mode", str, "toolConfig.functionCallingConfig")
    allowed = get(calling, "allowedFunctionNames", list, "toolConfig.functionCallingConfig")
    choice = _MODES.get(mode or "AUTO")
    if choice == "any" and allowed and len(allowed) == 1 and isinstance(allowed[0], str):
        choice = allowed[0]
    elif choice == "any" and allowed and all(isinstance(n, str) for n in allowed):
        names = [str(n) for n in allowed]
        if _tool_config(choice, names) == json.loads(json.dumps(config)):
            return choice, names  # only these tools, and a call required
    if choice is None or _tool_config(choice) != json.loads(json.dumps(config)):
        extra["toolConfig"] = copy_json(dict(config))  # written back as it came
    return choice


def _generation(config: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    path = "generationConfig"
    settings: dict[str, Any] = {
        "max_tokens": get(config, "maxOutputTokens", int, path),
        "temperature": get(config, "temperature", float, path),
        "top_p": get(config, "topP", float, path),
        "stop": list(get(config, "stopSequences", list, path) or ()),
    }
    top_k = get(config, "topK", float, path)
    settings["top_k"] = int(top_k) if top_k is not None else None
    thinking = _object(config.get("thinkingConfig") or {}, at(path, "thinkingConfig"))
    budget = get(thinking, "thinkingBudget", int, at(path, "thinkingConfig"))
    level = get(thinking, "thinkingLevel", str, at(path, "thinkingConfig"))
    settings["reasoning"] = budget if budget is not None else (level.lower() if level else None)
    mime = get(config, "responseMimeType", str, path)
    schema = config.get("responseJsonSchema", config.get("responseSchema"))
    if mime == "application/json":
        settings["response_format"] = (
            JsonSchema("response", copy_json(object_at(schema, path))) if schema else "json"
        )
    leftover = {k: copy_json(v) for k, v in config.items() if k not in _GENERATION}
    rebuilt = _generation_config(
        max_tokens=settings["max_tokens"],
        temperature=settings["temperature"],
        top_p=settings["top_p"],
        top_k=settings["top_k"],
        stop=settings["stop"],
        reasoning=settings["reasoning"],
        response_format=settings.get("response_format"),
    )
    for key in _GENERATION & set(config):
        if rebuilt.get(key) != config[key]:
            leftover[key] = copy_json(config[key])  # kept as sent (responseSchema, ...)
    if leftover:
        extra["generationConfig"] = leftover
    return settings


# -- writing --------------------------------------------------------------------------------


def write_request(request: Request, options: WriteOptions = DEFAULT_WRITE_OPTIONS) -> WrittenBody:
    """``request`` as a Gemini body, its path and what it lost."""
    losses = Losses()
    own = request.api == NAME
    extra = losses.source_only(request, NAME)
    body: dict[str, Any] = {}
    system = _system_parts(request, losses)
    names = _call_names(request)
    contents: list[dict[str, Any]] = []
    for index, message in enumerate(request.messages):
        where = at("messages", index)
        if message.role == "system":
            system.extend(
                {"text": b.text} for b in message.content if isinstance(b, Text) and b.text
            )
            losses.add(where, "reordered")
            continue
        parts = model_parts(message.content, request.api, names, losses, where)
        if not parts:
            continue
        turn: dict[str, Any] = {"role": "model" if message.role == "assistant" else "user"}
        turn["parts"] = parts
        if own:
            turn.update(copy_json(dict(message.extra)))
        contents.append(turn)
    body["contents"] = contents
    if system:
        body["systemInstruction"] = {"parts": system, **extra.pop("systemInstruction", {})}
    tools = _write_tools(request, own, losses)
    if tools:
        body["tools"] = tools
        if request.allowed_tools is not None and request.tool_choice == "any":
            body["toolConfig"] = _tool_config("any", request.allowed_tools)
        elif request.tool_choice is not None:
            body["toolConfig"] = _tool_config(request.tool_choice)
        if request.allowed_tools is not None and request.tool_choice != "any":
            losses.add("allowed_tools", "unsupported")  # names only with the mode ANY
    elif request.tool_choice is not None and request.tool_choice != "none":
        losses.add("tool_choice", "unsupported")  # no tools to choose from
    if request.parallel_tool_calls is False:
        losses.add("parallel_tool_calls", "unsupported")
    config = _generation_config(
        max_tokens=request.max_tokens,
        temperature=request.temperature,
        top_p=request.top_p,
        top_k=request.top_k,
        stop=request.stop,
        reasoning=request.reasoning,
        response_format=request.response_format,
    )
    config.update(extra.pop("generationConfig", {}))
    if config or (own and "generationConfig" in request.extra):
        body["generationConfig"] = config
    if request.user is not None:
        losses.add("user", "unsupported")
    body.update(extra)
    return body, _path(request), losses


# What Gemini's servers take as the model of /v1beta/models/{model}: letters, digits, ".",
# "_" and "-" (anything else is "unexpected model name format").
_MODEL: Final = re.compile(r"[A-Za-z0-9._-]+")


def _path(request: Request) -> str:
    # A "models/" prefix, as the SDKs take a model name, is the path's own.
    model = model_for_path(
        request.model.removeprefix("models/"), "Gemini", _MODEL, "letters, digits, '.', '_', '-'"
    )
    if request.stream:
        return f"/v1beta/models/{model}:streamGenerateContent?alt=sse"
    return f"/v1beta/models/{model}:generateContent"


def _system_parts(request: Request, losses: Losses) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for index, block in enumerate(request.system):
        if isinstance(block, CachePoint):
            losses.add(at("system", index), "unsupported")
        elif block.text or request.api == NAME:
            parts.append({"text": block.text})
    return parts


def _call_names(request: Request) -> dict[str, str]:
    """Each call id's tool name, for results that do not carry it."""
    return {
        block.id: block.name
        for message in request.messages
        for block in message.content
        if isinstance(block, ToolUse | InvalidToolUse)
    }


def model_parts(
    blocks: Sequence[Block],
    api: str | None,
    names: Mapping[str, str],
    losses: Losses,
    path: str,
    *,
    placeholder: bool = True,
) -> list[dict[str, Any]]:
    """The parts of one turn. Blocks only their source API can read go back only to
    Gemini; what Gemini cannot carry is listed in ``losses``. ``placeholder``: another
    API's calls carry :data:`SKIP_SIGNATURE`."""
    parts: list[dict[str, Any]] = []
    own = api == NAME
    for index, block in enumerate(blocks):
        where = at(at(path, "content"), index)
        match block:
            case Text(text=text, signature=signature):
                if text or (own and (signature or placeholder)):
                    parts.append(_signed({"text": text}, signature if own else None))
            case Reasoning(text=text, signature=signature) if own:
                parts.append(_signed({"text": text, "thought": True}, signature))
            case Reasoning():
                losses.add(where, "foreign-reasoning")
            case ToolUse() | InvalidToolUse():
                parts.append(_function_call(block, api, placeholder))
            case ToolResult() if own and not isinstance(block.content, str):
                # A result read with its media in its own parts gets them back there.
                reply = function_response(block, names)
                media = [b for b in block.content if isinstance(b, Image | Document)]
                written = [p for p in map(_media_part, media) if p is not None]
                if written:
                    reply["functionResponse"]["parts"] = written
                parts.append(reply)
                for k, item in enumerate(block.content):
                    _media_losses(item, own, at(at(where, "content"), k), losses)
            case ToolResult():
                parts.append(function_response(block, names))
                if not isinstance(block.content, str):
                    # Media of a result follow it in the same turn.
                    media = [b for b in block.content if isinstance(b, Image | Document)]
                    parts.extend(p for p in map(_media_part, media) if p is not None)
                    if media:
                        losses.add(where, "reordered")
                    for k, item in enumerate(block.content):
                        _media_losses(item, own, at(at(where, "content"), k), losses)
            case Image() | Document():
                medium = _media_part(block)
                if medium is not None:
                    parts.append(medium)
                _media_losses(block, own, where, losses)
            case Unknown(block_type=kind, data=data) if own and kind not in METADATA:
                if isinstance(data.value, dict) and kind in data.value:  # the part, whole
                    parts.append(copy_json(data.value))
                else:
                    losses.add(where, "unsupported")
            case Unknown(block_type=kind) if own:
                pass  # what the answer said of itself (grounding, ...): not a part
            case CachePoint():
                losses.add(where, "unsupported")
            case _:
                losses.add(where, "unsupported")
    return parts


def _function_call(
    block: ToolUse | InvalidToolUse, api: str | None, placeholder: bool
) -> dict[str, Any]:
    call: dict[str, Any] = {"name": block.name, "args": arguments_object(block)}
    if block.id and not MADE_UP_ID.fullmatch(block.id):
        call["id"] = block.id
    part: dict[str, Any] = {"functionCall": call}
    if api == NAME:
        return _signed(part, block.signature if isinstance(block, ToolUse) else None)
    if api is not None and placeholder:
        part["thoughtSignature"] = SKIP_SIGNATURE
    return part


def function_response(
    result: ToolResult, names: Mapping[str, str], *, wrap: bool = False
) -> dict[str, Any]:
    """A ``functionResponse`` part: named after the call it answers, its ``response`` an
    object (``{"output": ...}``, ``{"error": ...}``, or the object a JSON text holds;
    ``wrap``: always one of the first two)."""
    if wrap:
        response = {"error" if result.is_error else "output": result.output}
    else:
        response = _response_object(result)
    reply: dict[str, Any] = {
        "name": result.name or names.get(result.tool_use_id, ""),
        "response": response,
    }
    if result.tool_use_id and not MADE_UP_ID.fullmatch(result.tool_use_id):
        reply["id"] = result.tool_use_id
    return {"functionResponse": reply}


def _response_object(result: ToolResult) -> dict[str, Any]:
    text = result.output
    if result.is_error:
        return {"error": text}
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"output": text}


def _media_losses(block: Block, own: bool, where: str, losses: Losses) -> None:
    """What a medium written as a part leaves behind: another API's fields of it, a
    document's text as plain text, a medium with no part at all."""
    if not isinstance(block, Image | Document):
        return
    if _media_part(block) is None:
        losses.add(where, "unsupported")
        return
    if isinstance(block, Document) and block.text is not None:
        losses.add(where, "approximated")
    for key in () if own else block.extra:
        losses.add(at(where, key), "source-only")


def _media_part(block: Image | Document) -> dict[str, Any] | None:
    if block.data is not None:
        return {"inlineData": {"mimeType": block.media_type, "data": block.data}}
    if block.url is not None and block.url.startswith(_FILE_URIS):
        media_type = block.media_type or ("image/*" if isinstance(block, Image) else "")
        return {"fileData": {"mimeType": media_type, "fileUri": block.url}}
    if isinstance(block, Document) and block.text is not None:
        title = f"{block.title}\n\n" if block.title else ""
        return {"text": title + block.text}
    return None


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    if signature:
        part["thoughtSignature"] = signature
    return part


def _write_tools(request: Request, own: bool, losses: Losses) -> list[dict[str, Any]]:
    declarations: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for index, tool in enumerate(request.tools):
        where = at("tools", index)
        if tool.kind == "function":
            declarations.append(_declare(tool, own, losses, where))
        elif own and "tool" in tool.extra:
            others.append(copy_json(dict(tool.extra["tool"])))
        else:
            losses.add(where, "unsupported")
    return ([{"functionDeclarations": declarations}] if declarations else []) + others


def _declare(tool: ToolSpec, own: bool, losses: Losses, path: str) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name}
    if tool.description or (own and tool.extra.get("described")):
        declaration["description"] = tool.description
    if own and "schema_key" in tool.extra:
        key = tool.extra["schema_key"]
        declaration[key] = copy_json(tool.extra.get("parameters", dict(tool.schema)))
    elif tool.schema:
        declaration["parametersJsonSchema"] = schema_for_gemini(tool.schema, losses, path)
    if own:
        declaration.update(copy_json(dict(tool.extra.get("fields", {}))))
    else:
        for key in tool.extra:
            losses.add(at(path, key), "source-only")
    if tool.strict:
        losses.add(at(path, "strict"), "unsupported")
    return declaration


# What ``fileData`` may point at: Cloud Storage and Gemini's Files API (Gemini fetches no
# other link on every surface).
_FILE_URIS: Final = ("gs://", "https://generativelanguage.googleapis.com/")


def schema_for_gemini(schema: Mapping[str, Any], losses: Losses, path: str) -> dict[str, Any]:
    """A JSON Schema Gemini's ``parametersJsonSchema`` takes: a local ``$ref`` beside
    other keywords (which Gemini refuses) is replaced by what it names, merged with them
    (a ``schema`` loss)."""
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    changed: list[bool] = []
    out: dict[str, Any] = _inline(dict(schema), definitions, changed, depth=0)
    if changed:
        losses.add(at(path, "schema"), "schema")
    return out


def _inline(value: Any, definitions: Mapping[str, Any], changed: list[bool], depth: int) -> Any:
    if isinstance(value, list):
        return [_inline(item, definitions, changed, depth) for item in value]
    if not isinstance(value, Mapping):
        return copy_json(value)
    ref = value.get("$ref")
    if isinstance(ref, str) and len(value) > 1 and depth < 16:
        name = ref.rsplit("/", 1)[-1]
        if ref.startswith(("#/$defs/", "#/definitions/")) and name in definitions:
            changed.append(True)
            target = {**definitions[name], **{k: v for k, v in value.items() if k != "$ref"}}
            return _inline(target, definitions, changed, depth + 1)
    return {key: _inline(item, definitions, changed, depth) for key, item in value.items()}


def _tool_config(choice: str, allowed: list[str] | None = None) -> dict[str, Any]:
    mode = {"auto": "AUTO", "any": "ANY", "none": "NONE"}.get(choice)
    if mode == "ANY" and allowed is not None:
        return {"functionCallingConfig": {"mode": mode, "allowedFunctionNames": list(allowed)}}
    if mode is not None:
        return {"functionCallingConfig": {"mode": mode}}
    return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice]}}


def _generation_config(
    *,
    max_tokens: int | None,
    temperature: float | None,
    top_p: float | None,
    top_k: int | None,
    stop: list[str],
    reasoning: str | int | None,
    response_format: JsonSchema | str | None,
) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if max_tokens is not None:
        config["maxOutputTokens"] = max_tokens
    if temperature is not None:
        config["temperature"] = temperature
    if top_p is not None:
        config["topP"] = top_p
    if top_k is not None:
        config["topK"] = top_k
    if stop:
        config["stopSequences"] = list(stop)
    if isinstance(reasoning, int):
        config["thinkingConfig"] = {"thinkingBudget": reasoning, "includeThoughts": True}
    elif isinstance(reasoning, str):
        level = reasoning if reasoning in _LEVELS else "high"
        config["thinkingConfig"] = {"thinkingLevel": level.upper(), "includeThoughts": True}
    if response_format is not None:
        config["responseMimeType"] = "application/json"
        if isinstance(response_format, JsonSchema):
            config["responseJsonSchema"] = copy_json(dict(response_format.schema))
    return config


# -- the tool loop's shapes -----------------------------------------------------------------


def tool(tool: ToolDefinition) -> dict[str, Any]:
    """One function declaration (``parametersJsonSchema``: the JSON Schema as it is)."""
    spec = ToolSpec(tool.name, tool.description, tool.parameters)
    return _declare(spec, False, Losses(), "")


def tools_array(declarations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Gemini's ``tools`` array: one tool holding every function declaration."""
    return [{"functionDeclarations": declarations}] if declarations else []


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> dict[str, Any]:
    """The ``model`` turn of a response: every part with the signature it came with when
    the response is Gemini's; another provider's carry none."""
    parts = model_parts(response.content, response.provider, {}, Losses(), "", placeholder=False)
    return {"role": "model", "parts": parts}


def results(results: Sequence[ToolOutcome]) -> list[dict[str, Any]]:
    """One ``user`` turn of ``functionResponse`` parts: ``{"output": ...}`` for a result,
    ``{"error": ...}`` for a failure (the keys Gemini's documentation names)."""
    if not results:
        return []
    parts = [
        function_response(ToolResult(r.call_id, r.name, r.output, r.ok), {}, wrap=True)
        for r in results
    ]
    return [{"role": "user", "parts": parts}]


def first_request(model: str, prompt: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A first request: the model is named in the path, and the endpoint (not a field)
    says whether the answer streams."""
    return {"contents": [{"role": "user", "parts": [{"text": prompt}]}], "tools": tools}


def count_tokens_body(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """``models/{model}:countTokens``'s request for a chat request: the whole request
    under ``generateContentRequest``, so that the system instruction and the tools count
    too."""
    name = model if model.startswith("models/") else f"models/{model}"
    return {"generateContentRequest": {**body, "model": name}}
