"""Request shapes of each API: the ``tools`` array, the assistant turn, the tool results.

One table row per provider, one small function per shape. What each shape keeps:

``openai`` (Chat Completions)
    Assistant: one message: ``content`` (``None`` when there are only tool calls) and
    ``tool_calls`` with ids and the arguments as a JSON string. Reasoning is not echoed,
    the API has no field for it, unless ``reasoning_field`` names one (DeepSeek wants
    ``reasoning_content`` back in tool loops). Results: one ``tool`` message per result,
    a failed one's content starting with ``Error:`` (the format has no error flag).
``openai-responses`` (Responses API)
    Assistant: a list of input items in content order: ``reasoning`` (id,
    ``encrypted_content``, the text as one summary part), ``message`` (text),
    ``function_call`` (call_id, name, arguments), and the items laminate keeps as
    ``Unknown``, whole. Results: ``function_call_output`` items, failed ones starting
    with ``Error:``.
``anthropic`` (Messages)
    Assistant: one message of blocks in content order: ``thinking`` with its signature
    and ``redacted_thinking`` with its data (byte for byte), ``text``, ``tool_use``, and
    the server-tool blocks laminate keeps as ``Unknown``. Results: ONE ``user`` message
    of ``tool_result`` blocks with ``is_error``.
``ollama`` (native ``/api/chat``)
    Assistant: one message with ``content``, ``thinking`` and ``tool_calls`` whose
    arguments are an object. Results: one ``tool`` message per result with
    ``tool_name`` (and ``tool_call_id``, which newer servers pair on), ``Error:`` prefix.

Opaque reasoning (signatures, encrypted content, redacted data) and ``Unknown`` blocks are
only echoed to the API that produced them: they mean nothing to another. An
``InvalidToolUse`` is echoed too (the API wants to see the call a result answers): its raw
argument text where the API takes a string, ``{}`` where it takes an object (Anthropic,
Ollama).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from .._core.errors import UnknownProviderError
from .._core.response import (
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    Text,
    ToolUse,
    Unknown,
)

if TYPE_CHECKING:
    from .registry import Tool, ToolResult

__all__ = ["assistant_message", "tool_definitions", "tool_results"]

Message = dict[str, Any]
_ToolCall = ToolUse | InvalidToolUse

ERROR_PREFIX: Final = "Error: "


# --- tools -------------------------------------------------------------------------------


def _described(tool: Tool) -> dict[str, Any]:
    return {"description": tool.description} if tool.description else {}


def _chat_tool(tool: Tool) -> Message:
    function = {"name": tool.name, **_described(tool), "parameters": _copy(tool.parameters)}
    if tool.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _responses_tool(tool: Tool) -> Message:
    # ``strict`` defaults to true in this API, which would reject an ordinary schema
    # (optional properties): say which one it is.
    return {
        "type": "function",
        "name": tool.name,
        **_described(tool),
        "parameters": _copy(tool.parameters),
        "strict": tool.strict,
    }


def _anthropic_tool(tool: Tool) -> Message:
    return {"name": tool.name, **_described(tool), "input_schema": _copy(tool.parameters)}


def _ollama_tool(tool: Tool) -> Message:
    function = {"name": tool.name, **_described(tool), "parameters": _copy(tool.parameters)}
    return {"type": "function", "function": function}


# --- the assistant turn ------------------------------------------------------------------


def _calls(response: NormalizedResponse) -> list[_ToolCall]:
    return [b for b in response.content if isinstance(b, ToolUse | InvalidToolUse)]


def _arguments_text(call: _ToolCall) -> str:
    if isinstance(call, InvalidToolUse):
        return call.raw_input  # as the model wrote it: the API takes a string
    return json.dumps(call.input.value, ensure_ascii=False, separators=(",", ":"))


def _arguments_object(call: _ToolCall) -> dict[str, Any]:
    # An API that wants an object cannot carry text that is not one.
    return {} if isinstance(call, InvalidToolUse) else _copy(call.input.value)


def _reasoning_text(response: NormalizedResponse) -> str:
    return "".join(b.text for b in response.content if isinstance(b, Reasoning) and not b.redacted)


def _chat_assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    calls = _calls(response)
    text = response.text()
    message: Message = {"role": "assistant", "content": text or (None if calls else "")}
    if reasoning_field is not None:
        reasoning = _reasoning_text(response)
        if reasoning:
            message[reasoning_field] = reasoning
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for call in calls
        ]
    return message


def _responses_assistant(
    response: NormalizedResponse, reasoning_field: str | None
) -> list[Message]:
    own = response.provider == "openai-responses"
    items: list[Message] = []
    for block in response.content:
        match block:
            case Reasoning() if own and (block.id or block.signature):
                items.append(_responses_reasoning(block))
            case Text(text=text) if text:
                items.append({"type": "message", "role": "assistant", "content": text})
            case ToolUse() | InvalidToolUse():
                items.append(
                    {
                        "type": "function_call",
                        "call_id": block.id,
                        "name": block.name,
                        "arguments": _arguments_text(block),
                    }
                )
            case Unknown(block_type=kind, data=data) if own:
                items.append({"type": kind, **_copy(data.value or {})})
            case _:
                pass  # reasoning from another API, empty text
    return items


def _responses_reasoning(block: Reasoning) -> Message:
    item: Message = {"type": "reasoning"}
    if block.id:
        item["id"] = block.id
    # The summary is required (possibly empty); the text comes back as one part.
    item["summary"] = [{"type": "summary_text", "text": block.text}] if block.text else []
    if block.signature is not None:
        item["encrypted_content"] = block.signature
    return item


def _anthropic_assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    own = response.provider == "anthropic"
    content: list[Message] = []
    for block in response.content:
        match block:
            case Reasoning(redacted=True, signature=str(data)) if own:
                content.append({"type": "redacted_thinking", "data": data})
            case Reasoning(redacted=False, signature=str(signature)) if own:
                content.append({"type": "thinking", "thinking": block.text, "signature": signature})
            case Text(text=text) if text:  # the API rejects empty text blocks
                content.append({"type": "text", "text": text})
            case ToolUse() | InvalidToolUse():
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.id,
                        "name": block.name,
                        "input": _arguments_object(block),
                    }
                )
            case Unknown(block_type=kind, data=data) if own:
                content.append({"type": kind, **_copy(data.value or {})})
            case _:
                pass  # unsigned or foreign reasoning cannot be sent back
    return {"role": "assistant", "content": content}


def _ollama_assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    message: Message = {"role": "assistant", "content": response.text()}
    thinking = _reasoning_text(response)
    if thinking:
        message["thinking"] = thinking
    calls = _calls(response)
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "function": {
                    "index": index,
                    "name": call.name,
                    "arguments": _arguments_object(call),
                },
            }
            for index, call in enumerate(calls)
        ]
    return message


# --- results -----------------------------------------------------------------------------


def _flagged(result: ToolResult) -> str:
    """The output, marked as an error for an API that has no error flag."""
    if result.ok or result.output.startswith(ERROR_PREFIX.strip()):
        return result.output
    return ERROR_PREFIX + result.output


def _chat_results(results: Sequence[ToolResult]) -> list[Message]:
    return [{"role": "tool", "tool_call_id": r.call_id, "content": _flagged(r)} for r in results]


def _responses_results(results: Sequence[ToolResult]) -> list[Message]:
    return [
        {"type": "function_call_output", "call_id": r.call_id, "output": _flagged(r)}
        for r in results
    ]


def _anthropic_results(results: Sequence[ToolResult]) -> list[Message]:
    if not results:
        return []
    blocks = [
        {
            "type": "tool_result",
            "tool_use_id": r.call_id,
            "content": r.output,
            "is_error": not r.ok,
        }
        for r in results
    ]
    return [{"role": "user", "content": blocks}]


def _ollama_results(results: Sequence[ToolResult]) -> list[Message]:
    return [
        {"role": "tool", "tool_name": r.name, "tool_call_id": r.call_id, "content": _flagged(r)}
        for r in results
    ]


# --- the table ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Shapes:
    tool: Callable[[Tool], Message]
    assistant: Callable[[NormalizedResponse, str | None], Message | list[Message]]
    results: Callable[[Sequence[ToolResult]], list[Message]]


_SHAPES: Final[dict[str, _Shapes]] = {
    "openai": _Shapes(_chat_tool, _chat_assistant, _chat_results),
    "openai-responses": _Shapes(_responses_tool, _responses_assistant, _responses_results),
    "anthropic": _Shapes(_anthropic_tool, _anthropic_assistant, _anthropic_results),
    "ollama": _Shapes(_ollama_tool, _ollama_assistant, _ollama_results),
}


def _shapes(provider: str) -> _Shapes:
    shapes = _SHAPES.get(provider)
    if shapes is None:
        known = ", ".join(map(repr, _SHAPES))
        raise UnknownProviderError(
            f"provider {provider!r} has no tool wire shapes; use one of {known}", seen=provider
        )
    return shapes


def tool_definitions(tools: Iterable[Tool], provider: str) -> list[Message]:
    """The ``tools`` array of a request to ``provider``."""
    shape = _shapes(provider).tool
    return [shape(tool) for tool in tools]


@overload
def assistant_message(
    response: NormalizedResponse,
    provider: Literal["openai", "anthropic", "ollama"],
    *,
    reasoning_field: str | None = ...,
) -> Message: ...
@overload
def assistant_message(
    response: NormalizedResponse,
    provider: Literal["openai-responses"],
    *,
    reasoning_field: str | None = ...,
) -> list[Message]: ...
@overload
def assistant_message(
    response: NormalizedResponse, provider: str, *, reasoning_field: str | None = ...
) -> Message | list[Message]: ...


def assistant_message(
    response: NormalizedResponse, provider: str, *, reasoning_field: str | None = None
) -> Message | list[Message]:
    """The assistant turn of ``response`` in ``provider``'s request shape.

    A message ``dict`` to append to ``messages``, except for ``"openai-responses"``,
    whose turn is a ``list`` of items to extend ``input`` with. ``reasoning_field``
    (Chat Completions only) names the message field that carries reasoning text back,
    for the compatible servers that ask for it (``"reasoning_content"``).
    A new, independent object each call.
    """
    return _shapes(provider).assistant(response, reasoning_field)


def tool_results(results: Iterable[ToolResult], provider: str) -> list[Message]:
    """``results`` in ``provider``'s request shape: the list to append to ``messages``
    (or ``input``) after the assistant turn. Empty when there are no results."""
    return _shapes(provider).results(list(results))


def _copy(value: Any) -> Any:
    return copy.deepcopy(value)
