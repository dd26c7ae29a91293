"""Each API's own type definitions as the judge of a written request body.

``validate(api, body, path)`` raises :class:`Refused` (an ``AssertionError``, so pytest
shows it as a failed check) listing every place the body does not fit the official SDK's
request types for that API, unknown keys included:

- Chat Completions, Responses, Anthropic: the SDKs' request ``TypedDict``\\s, validated with
  pydantic. A ``TypedDict`` lets unknown keys through by default, so the request type is
  copied (the SDK's own classes are left as they are) with every ``TypedDict`` refusing
  unknown keys, and with the SDK's response models taken out of its unions (they admit a
  response block passed back as the SDK object, and keep unknown keys as extras): a JSON
  body must be the request shape.
- Gemini: google-genai's pydantic models (``Content``, ``Tool``, ``ToolConfig``,
  ``GenerationConfig``, ...), which refuse unknown keys themselves; the JSON is validated
  as JSON so base64 bytes (``thoughtSignature``, ``inlineData.data``) are decoded as the
  API decodes them. The path must be ``/v1beta/models/{model}:generateContent`` or
  ``:streamGenerateContent`` (``?alt=sse`` for SSE), or the same under ``/v1``.
- Bedrock Converse: botocore's ``ParamValidator`` against the ``Converse`` (or
  ``ConverseStream``) input shape, with the model id taken from the path.
- Ollama: ``ollama._types.ChatRequest``, each message as the ``Message`` and the options
  as the ``Options`` ``Client.chat`` makes of them (the ids the server pairs calls and
  results on, which the client does not list, are checked apart); Cohere v2: the V2
  message, tool, response format and thinking types, and the fields ``ClientV2.chat``
  sends. These pydantic models ignore or keep unknown keys, so the body is walked beside
  the validated model and every key no field (by name or alias) takes is refused.

Beyond its schema, each API's servers refuse what their types let through (the rules
below, :func:`server_problems`, each problem in the words that server answers with):

- a message with an empty content list: Chat Completions (``empty array``), Responses
  message items, Anthropic (any message but a final assistant one, an empty string too;
  and an empty or blank text block), Gemini (``contents.parts must not be empty``; a part
  with none of the ``data`` fields), Bedrock (an empty ``content``; an empty text block),
  Cohere (an empty list). Ollama's content is a string, which its server takes empty;
- a Responses ``input_image`` without its ``detail`` (the SDK's type for an image in a
  function call's output leaves it out, the servers do not);
- a model name that does not fit the path: Gemini's ``models/{model}`` segment, Bedrock's
  model id (botocore's pattern for it).

:func:`refusal` is the answer each API's servers give a refused request: its status,
headers and error body.

The request vectors recorded by other projects (``../shared/request-vectors``) are found
here too, each with the API it was sent to and the path it was sent on.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import Any, NotRequired, Required
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from typing_extensions import TypedDict, is_typeddict

__all__ = [
    "Refused",
    "refusal",
    "server_problems",
    "validate",
]


class Refused(AssertionError):
    """A body the API's own types, or its servers, do not accept."""

    def __init__(self, api: str, problems: list[str]) -> None:
        super().__init__(f"{api} refuses the body:\n" + "\n".join(problems))
        self.api = api
        self.problems = tuple(problems)


def validate(
    api: str, body: Mapping[str, Any], path: str | None = None, *, schema: bool = True
) -> None:
    """Raise :class:`Refused` unless ``body`` (sent on ``path``) is a request ``api``'s
    own SDK types accept and its servers take (``schema=False``: only what the servers
    refuse beyond the schema, for a client that sends fields newer than the installed
    SDK's types)."""
    problems = _VALIDATORS[api](dict(body), path) if schema else []
    problems += server_problems(api, body, path)
    if problems:
        raise Refused(api, problems)


# --- TypedDict requests (openai, anthropic) ------------------------------------------

_FORBID: typing.Final = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


@cache
def _request_only(tp: Any) -> Any:
    """``tp`` with every TypedDict copied to refuse unknown keys and every union rid of
    the SDK's response models (which keep unknown keys as extras and would take a dict
    that no request type does)."""
    if isinstance(tp, type) and is_typeddict(tp):
        return _strict_typed_dict(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is None or origin is typing.Literal:
        return tp
    if origin is typing.Annotated:
        return typing.Annotated[(_request_only(args[0]), *tp.__metadata__)]
    if origin is typing.Union or origin is types.UnionType:
        kept = [arg for arg in args if not _response_only(arg)] or list(args)
        return typing.Union[tuple(_request_only(arg) for arg in kept)]  # noqa: UP007
    new_args = tuple(_request_only(arg) for arg in args)
    if isinstance(tp, types.GenericAlias):
        return types.GenericAlias(origin, new_args)
    return tp.copy_with(new_args)


_COPYING: set[Any] = set()
_make_typed_dict: Any = TypedDict  # called with a name known only at run time


def _strict_typed_dict(tp: Any) -> Any:
    if tp in _COPYING:
        return tp  # a type that holds itself: its inner copies stay lenient
    _COPYING.add(tp)
    try:
        fields = {}
        hints = typing.get_type_hints(tp, include_extras=True)
        for key, given in hints.items():
            hint = given
            while typing.get_origin(hint) in (Required, NotRequired):
                hint = typing.get_args(hint)[0]
            kept = _request_only(hint)
            fields[key] = Required[kept] if key in tp.__required_keys__ else NotRequired[kept]
        copy = _make_typed_dict(tp.__name__, fields, total=False)
    finally:
        _COPYING.discard(tp)
    copy.__pydantic_config__ = _FORBID
    return copy


def _response_only(tp: Any) -> bool:
    """Whether ``tp`` is a response model, or a union of nothing else."""
    if isinstance(tp, type):
        return issubclass(tp, BaseModel)
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _response_only(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        return all(map(_response_only, typing.get_args(tp)))
    return False


@cache
def _typed_dict_adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(_request_only(tp))


def _drain(value: Any, where: str, problems: list[str]) -> None:
    """Run the lazy validators pydantic leaves for ``Iterable[...]`` fields."""
    if isinstance(value, BaseModel):
        problems.append(f"{where}: only the response type {type(value).__name__} takes it")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _drain(item, f"{where}.{key}", problems)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _drain(item, f"{where}[{index}]", problems)
    elif isinstance(value, Iterator):
        try:
            items = list(value)  # validated only now, so its errors are named here
        except ValidationError as error:
            problems.extend(_pydantic_problems(error, where, indexed=True))
            return
        for index, item in enumerate(items):
            _drain(item, f"{where}[{index}]", problems)


def _typed_dict_problems(tp: Any, body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    try:
        _drain(_typed_dict_adapter(tp).validate_python(body), "body", problems)
    except ValidationError as error:
        problems.extend(_pydantic_problems(error, "body"))
    return problems


def _pydantic_problems(
    error: ValidationError, where: str = "", *, indexed: bool = False
) -> list[str]:
    """One line per complaint, its place under ``where`` (``indexed``: the first step is
    an index into a list that was validated item by item)."""
    lines = []
    for item in error.errors():
        loc = [str(step) for step in item["loc"]]
        if indexed and loc:
            loc[0] = f"{where}[{loc[0]}]"
        elif where:
            loc.insert(0, where)
        lines.append(f"{'.'.join(loc)}: {item['msg']} ({item['type']})")
    # A union reports every member's complaint; the first few say enough.
    return lines[:40] + ([f"... {len(lines) - 40} more"] if len(lines) > 40 else [])


def _openai_chat(body: dict[str, Any], path: str | None) -> list[str]:
    from openai.types.chat import completion_create_params as params

    # OpenAI-compatible servers serve it under their own prefix (`/v1beta/openai/...`).
    problems = _path_problems(path, r"(/[^/?]+)*/chat/completions")
    streaming = bool(body.get("stream"))
    tp = (
        params.CompletionCreateParamsStreaming
        if streaming
        else params.CompletionCreateParamsNonStreaming
    )
    return problems + _typed_dict_problems(tp, body)


def _openai_responses(body: dict[str, Any], path: str | None) -> list[str]:
    from openai.types.responses import response_create_params as params

    problems = _path_problems(path, r"/v1/responses")
    streaming = bool(body.get("stream"))
    tp = (
        params.ResponseCreateParamsStreaming
        if streaming
        else params.ResponseCreateParamsNonStreaming
    )
    return problems + _typed_dict_problems(tp, body)


def _anthropic(body: dict[str, Any], path: str | None) -> list[str]:
    from anthropic.types import message_create_params as params

    problems = _path_problems(path, r"/v1/messages(\?beta=true)?")
    # anthropic 2.x no longer lists the sampling parameters the API still takes (every
    # recorded request that sends them was answered): they are checked as numbers here.
    body = dict(body)
    for key, kind in _ANTHROPIC_SAMPLING.items():
        if key in body:
            problems.extend(_model_problems(TypeAdapter(kind).validate_python, body.pop(key), key))
    streaming = bool(body.get("stream"))
    tp = (
        params.MessageCreateParamsStreaming if streaming else params.MessageCreateParamsNonStreaming
    )
    return problems + _typed_dict_problems(tp, body)


_ANTHROPIC_SAMPLING: typing.Final[Mapping[str, type]] = {
    "temperature": float,
    "top_p": float,
    "top_k": int,
}


def _path_problems(path: str | None, pattern: str) -> list[str]:
    if path is None or re.fullmatch(pattern, path):
        return []
    return [f"path {path!r} is not {pattern!r}"]


# --- Gemini ---------------------------------------------------------------------------


@cache
def _gemini_fields() -> dict[str, TypeAdapter[Any]]:
    from google.genai import types

    adapters: dict[str, TypeAdapter[Any]] = {
        "contents": TypeAdapter(list[types.Content]),
        "system_instruction": TypeAdapter(types.Content),
        "tools": TypeAdapter(list[types.Tool]),
        "tool_config": TypeAdapter(types.ToolConfig),
        "generation_config": TypeAdapter(types.GenerationConfig),
        "safety_settings": TypeAdapter(list[types.SafetySetting]),
        "cached_content": TypeAdapter(str),
        "labels": TypeAdapter(dict[str, str]),
    }
    # The API reads proto3 JSON: camelCase and snake_case names alike.
    for name in list(adapters):
        adapters[_camel(name)] = adapters[name]
    return adapters


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _gemini(body: dict[str, Any], path: str | None) -> list[str]:
    problems = _path_problems(
        path, r"/v1(beta)?/models/[^/?]+:(generateContent|streamGenerateContent)(\?alt=sse)?"
    )
    fields = _gemini_fields()
    if "contents" not in body:
        problems.append("contents: required")
    for key, value in body.items():
        adapter = fields.get(key)
        if adapter is None:
            problems.append(f"{key}: not a field of the request")
            continue
        try:
            adapter.validate_json(json.dumps(value))
        except ValidationError as error:
            problems.extend(_pydantic_problems(error, key))
    return problems


# --- Bedrock Converse -----------------------------------------------------------------

_BEDROCK_PATH: typing.Final = re.compile(r"/model/([^/]+)/(converse|converse-stream)")


def _bedrock(body: dict[str, Any], path: str | None) -> list[str]:
    import botocore.session
    from botocore.validate import ParamValidator

    match = _BEDROCK_PATH.fullmatch(path or "")
    if match is None:
        return [f"path {path!r} is not /model/{{id}}/converse(-stream)"]
    operation = "ConverseStream" if match[2] == "converse-stream" else "Converse"
    shape = _bedrock_input(botocore.session, operation)
    report = ParamValidator().validate({"modelId": unquote(match[1]), **body}, shape)
    return report.generate_report().splitlines() if report.has_errors() else []


@cache
def _bedrock_shapes(session_module: Any) -> Any:
    return session_module.get_session().get_service_model("bedrock-runtime")


def _bedrock_input(session_module: Any, operation: str) -> Any:
    return _bedrock_shapes(session_module).operation_model(operation).input_shape


# --- Ollama and Cohere: pydantic models that do not refuse unknown keys ---------------


def _unknown_keys(data: Any, model: Any, where: str, problems: list[str]) -> None:
    """Walk the input beside what a pydantic model made of it; every key that no field
    takes (by name or alias) is a problem."""
    if isinstance(model, BaseModel) and isinstance(data, Mapping):
        fields = type(model).model_fields
        by_key = {info.alias or name: name for name, info in fields.items()}
        by_key.update({name: name for name in fields})
        for key, value in data.items():
            name = by_key.get(key)
            if name is None:
                problems.append(f"{where}.{key}: not a field of {type(model).__name__}")
            else:
                _unknown_keys(value, getattr(model, name), f"{where}.{key}", problems)
    elif isinstance(model, Mapping) and isinstance(data, Mapping):
        for key, value in data.items():
            if key in model:
                _unknown_keys(value, model[key], f"{where}.{key}", problems)
    elif isinstance(model, list | tuple) and isinstance(data, list):
        for index, (value, item) in enumerate(zip(data, model, strict=False)):
            _unknown_keys(value, item, f"{where}[{index}]", problems)


def _model_problems(validate_one: Callable[[Any], Any], data: Any, where: str) -> list[str]:
    try:
        model = validate_one(data)
    except ValidationError as error:
        return _pydantic_problems(error, where)
    problems: list[str] = []
    _unknown_keys(data, model, where, problems)
    return problems


def _ollama(body: dict[str, Any], path: str | None) -> list[str]:
    from ollama._types import ChatRequest, Image, Message, Options

    problems = _path_problems(path, r"/api/chat")
    problems += _model_problems(ChatRequest.model_validate, body, "body")
    # `ChatRequest` takes any mapping as a message or as options; `Client.chat` makes a
    # `Message` of each (its images as `Image`s) and the options are `Options`' fields.
    for index, given in enumerate(body.get("messages") or ()):
        where = f"body.messages[{index}]"
        message = given
        if isinstance(given, dict):
            message, server_only = _ollama_server_fields(given, where)
            problems += server_only
            if isinstance(message.get("images"), list):
                message = {**message, "images": [Image(value=v) for v in message["images"]]}
        problems += _model_problems(Message.model_validate, message, where)
    if isinstance(body.get("options"), dict):
        problems += _model_problems(Options.model_validate, body["options"], "body.options")
    return problems


def _ollama_server_fields(message: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    """The message without the fields the Ollama server pairs calls and results on
    (``tool_call_id``; a call's ``id`` and ``function.index``), which ollama-python's
    ``Message`` does not list: they are checked here, as strings and integers."""
    problems: list[str] = []
    message = dict(message)
    if "tool_call_id" in message and not isinstance(message.pop("tool_call_id"), str):
        problems.append(f"{where}.tool_call_id: not a string")
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        plain = []
        for index, given in enumerate(calls):
            call = given
            if isinstance(given, dict):
                call = dict(given)
                if "id" in call and not isinstance(call.pop("id"), str):
                    problems.append(f"{where}.tool_calls[{index}].id: not a string")
                function = call.get("function")
                if isinstance(function, dict) and "index" in function:
                    function = dict(function)
                    if not isinstance(function.pop("index"), int):
                        problems.append(f"{where}.tool_calls[{index}].function.index: not an int")
                    call["function"] = function
            plain.append(call)
        message["tool_calls"] = plain
    return message, problems


@cache
def _cohere_fields() -> dict[str, TypeAdapter[Any]]:
    import cohere
    from cohere.types import CitationOptions, Thinking
    from cohere.v2.types import V2ChatRequestDocumentsItem

    return {
        "model": TypeAdapter(str),
        "messages": TypeAdapter(list[cohere.ChatMessageV2]),
        "tools": TypeAdapter(list[cohere.ToolV2]),
        "strict_tools": TypeAdapter(bool),
        "documents": TypeAdapter(list[V2ChatRequestDocumentsItem]),
        "citation_options": TypeAdapter(CitationOptions),
        "response_format": TypeAdapter(cohere.ResponseFormatV2),
        "safety_mode": TypeAdapter(typing.Literal["CONTEXTUAL", "STRICT", "OFF"]),
        "max_tokens": TypeAdapter(int),
        "stop_sequences": TypeAdapter(list[str]),
        "temperature": TypeAdapter(float),
        "seed": TypeAdapter(int),
        "frequency_penalty": TypeAdapter(float),
        "presence_penalty": TypeAdapter(float),
        "k": TypeAdapter(int),
        "p": TypeAdapter(float),
        "logprobs": TypeAdapter(bool),
        "tool_choice": TypeAdapter(typing.Literal["REQUIRED", "NONE"]),
        "thinking": TypeAdapter(Thinking),
        "priority": TypeAdapter(int),
        "stream": TypeAdapter(bool),
    }


def _cohere(body: dict[str, Any], path: str | None) -> list[str]:
    problems = _path_problems(path, r"/v2/chat")
    fields = _cohere_fields()
    for required in ("model", "messages"):
        if required not in body:
            problems.append(f"{required}: required")
    for key, value in body.items():
        adapter = fields.get(key)
        if adapter is None:
            problems.append(f"{key}: not a parameter of ClientV2.chat")
        else:
            problems.extend(_model_problems(adapter.validate_python, value, key))
    return problems


# --- what the servers refuse beyond the schema ----------------------------------------


def server_problems(api: str, body: Mapping[str, Any], path: str | None = None) -> list[str]:
    """What ``api``'s servers refuse in ``body`` (sent on ``path``) although its schema
    lets it through, each in the words of the server's answer."""
    return _SERVER_RULES[api](body, path)


def _items(value: Any) -> list[tuple[int, Any]]:
    return list(enumerate(value)) if isinstance(value, list) else []


def _blank(text: Any) -> bool:
    return isinstance(text, str) and not text.strip()


_OPENAI_EMPTY: typing.Final = (
    "Invalid '{where}': empty array. Expected an array with minimum length 1, but got an "
    "empty array instead."
)


def _openai_chat_server(body: Mapping[str, Any], path: str | None) -> list[str]:
    return [
        _OPENAI_EMPTY.format(where=f"messages[{n}].content")
        for n, message in _items(body.get("messages"))
        if isinstance(message, dict) and message.get("content") == []
    ]


def _responses_server(body: Mapping[str, Any], path: str | None) -> list[str]:
    problems = []
    for n, item in _items(body.get("input")):
        if isinstance(item, dict) and "role" in item and item.get("content") == []:
            problems.append(_OPENAI_EMPTY.format(where=f"input[{n}].content"))
    problems += [
        f"Missing required parameter: '{where}.detail'."
        for where, part in _walk(body.get("input"), "input")
        if part.get("type") == "input_image" and "detail" not in part
    ]
    return problems


def _walk(value: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object inside ``value``, with its place."""
    if isinstance(value, dict):
        yield where, value
        for key, item in value.items():
            yield from _walk(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{where}[{index}]")


def _anthropic_server(body: Mapping[str, Any], path: str | None) -> list[str]:
    problems = []
    messages = _items(body.get("messages"))
    for n, message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        final_assistant = n == len(messages) - 1 and message.get("role") == "assistant"
        if content in ([], "") and not final_assistant:
            problems.append(
                f"messages.{n}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
    for field in ("messages", "system"):
        texts = [
            block["text"]
            for _, block in _walk(body.get(field), field)
            if block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
        if any(text == "" for text in texts):
            problems.append(f"{field}: text content blocks must be non-empty")
        elif any(_blank(text) for text in texts):
            problems.append(f"{field}: text content blocks must contain non-whitespace text")
    return problems


# The fields of a part's `data` oneof (the API reads camelCase and snake_case alike).
_GEMINI_ONEOF: typing.Final = [
    "text",
    "inline_data",
    "file_data",
    "function_call",
    "function_response",
    "executable_code",
    "code_execution_result",
    "tool_call",
    "tool_response",
]
_GEMINI_DATA: typing.Final = frozenset(_GEMINI_ONEOF) | {_camel(f) for f in _GEMINI_ONEOF}
# What a model id in `/v1beta/models/{model}:...` is made of.
_GEMINI_MODEL: typing.Final = re.compile(r"[A-Za-z0-9._-]+")


def _gemini_server(body: Mapping[str, Any], path: str | None) -> list[str]:
    problems = []
    found = re.fullmatch(
        r"/v1(?:beta)?/models/(.*):(?:generateContent|streamGenerateContent)(?:\?.*)?", path or ""
    )
    if found is not None and _GEMINI_MODEL.fullmatch(found[1]) is None:
        problems.append("* GenerateContentRequest.model: unexpected model name format")
    for n, content in _items(body.get("contents")):
        if not isinstance(content, dict):
            continue
        parts = content.get("parts")
        if not parts:
            problems.append(
                f"* GenerateContentRequest.contents[{n}].parts: contents.parts must not be empty."
            )
        for m, part in _items(parts):
            if isinstance(part, dict) and not _GEMINI_DATA & set(part):
                problems.append(
                    f"* GenerateContentRequest.contents[{n}].parts[{m}].data: required oneof "
                    "field 'data' must have one initialized field"
                )
    return problems


def _bedrock_server(body: Mapping[str, Any], path: str | None) -> list[str]:
    import botocore.session

    problems = []
    found = _BEDROCK_PATH.fullmatch(path or "")
    if found is not None:
        model = unquote(found[1])
        shape = _bedrock_input(botocore.session, "Converse").members["modelId"]
        pattern = shape.metadata.get("pattern")
        if pattern is not None and re.fullmatch(pattern, model) is None:
            problems.append(
                f"1 validation error detected: Value '{model}' at 'modelId' failed to satisfy "
                f"constraint: Member must satisfy regular expression pattern: {pattern}"
            )
    for n, message in _items(body.get("messages")):
        if not isinstance(message, dict):
            continue
        if message.get("content") == []:
            problems.append(
                f"The content field in the Message object at messages.{n} is empty. Add a "
                "ContentBlock object to the content field and try again."
            )
        for m, block in _items(message.get("content")):
            # Whitespace is text to it (a recorded "\n" block was answered).
            if isinstance(block, dict) and block.get("text") == "":
                problems.append(
                    f"The text field in the ContentBlock object at messages.{n}.content.{m} is "
                    "blank. Add text to the text field, and try again."
                )
    return problems


def _cohere_server(body: Mapping[str, Any], path: str | None) -> list[str]:
    problems = []
    for n, message in _items(body.get("messages")):
        if not isinstance(message, dict):
            continue
        # Cohere's words for a message without text. An empty string is not refused
        # here: what Cohere's v2 servers answer one is not known.
        if message.get("content") == []:
            problems.append(
                f"invalid request: messages[{n}]: message must be at least 1 token long or "
                "tool results must be specified."
            )
    return problems


def _no_rules(body: Mapping[str, Any], path: str | None) -> list[str]:
    return []


_SERVER_RULES: Mapping[str, Callable[[Mapping[str, Any], str | None], list[str]]] = {
    "openai": _openai_chat_server,
    "openai-responses": _responses_server,
    "anthropic": _anthropic_server,
    "gemini": _gemini_server,
    "bedrock": _bedrock_server,
    "ollama": _no_rules,
    "cohere": _cohere_server,
}


# --- the answer to a refused request ---------------------------------------------------


def refusal(refused: Refused) -> tuple[int, dict[str, str], dict[str, Any]]:
    """``(status, headers, body)``: how the servers of the API that refused answer."""
    message = "\n".join(refused.problems)
    match refused.api:
        case "openai" | "openai-responses":
            error = {"message": message, "type": "invalid_request_error", "param": None}
            return 400, {}, {"error": {**error, "code": None}}
        case "anthropic":
            error = {"type": "invalid_request_error", "message": message}
            return 400, {}, {"type": "error", "error": error}
        case "gemini":
            return (
                400,
                {},
                {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}},
            )
        case "bedrock":
            kind = "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
            return 400, {"x-amzn-errortype": kind}, {"message": message}
        case "ollama":
            return 400, {}, {"error": message}
        case "cohere":
            return 400, {}, {"message": message}
    raise ValueError(refused.api)


_VALIDATORS: Mapping[str, Callable[[dict[str, Any], str | None], list[str]]] = {
    "openai": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock": _bedrock,
    "ollama": _ollama,
    "cohere": _cohere,
}
