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

``gemini`` (``generateContent``)
    Assistant: one ``model`` turn of parts in content order: thought text
    (``thought: true``), text, ``functionCall`` (its ``id`` when the provider gave one),
    each with its ``thoughtSignature`` where it came, and the parts laminate keeps as
    ``Unknown``, whole. Results: ONE ``user`` turn of ``functionResponse`` parts,
    ``{"output": ...}`` or ``{"error": ...}``.
``bedrock`` (Converse)
    Assistant: one message of content blocks: ``reasoningContent`` with its signature
    (only back to Bedrock), ``text``, ``toolUse`` with the input as an object. Results:
    ONE ``user`` message of ``toolResult`` blocks, ``status: "error"`` for a failure, never
    an empty content list.
``cohere`` (v2 chat)
    Assistant: one message with ``tool_plan`` (the plan a Cohere answer came with),
    ``tool_calls`` with the arguments as a JSON string, and the text. Results: one ``tool``
    message per result with ``tool_call_id``, ``Error:`` prefix.

The conversation these go into is ``messages``, except ``input`` (Responses) and
``contents`` (Gemini); :func:`append_turn` knows which.

Opaque reasoning (signatures, encrypted content, redacted data) and ``Unknown`` blocks are
only echoed to the API that produced them: they mean nothing to another. An
``InvalidToolUse`` is echoed too (the API wants to see the call a result answers): its raw
argument text where the API takes a string, ``{}`` where it takes an object (Anthropic,
Ollama).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableSequence
from typing import Any, Final, TypeVar, overload

from .._core.response import NormalizedResponse
from .registry import ItemsTurn, MessageTurn, api
from .spec import JsonObject, ToolDefinition, ToolOutcome

__all__ = ["append_turn", "assistant_message", "tool_definitions", "tool_results"]

_WANTED: Final = "tool wire shapes"


def tool_definitions(tools: Iterable[ToolDefinition], provider: str) -> list[JsonObject]:
    """The ``tools`` array of a request to ``provider``."""
    record = api(provider, wanted=_WANTED)
    return record.tools_array([record.tool(tool) for tool in tools])


@overload
def assistant_message(
    response: NormalizedResponse,
    provider: MessageTurn,
    *,
    reasoning_field: str | None = ...,
) -> JsonObject: ...
@overload
def assistant_message(
    response: NormalizedResponse,
    provider: ItemsTurn,
    *,
    reasoning_field: str | None = ...,
) -> list[JsonObject]: ...
@overload
def assistant_message(
    response: NormalizedResponse, provider: str, *, reasoning_field: str | None = ...
) -> JsonObject | list[JsonObject]: ...


def assistant_message(
    response: NormalizedResponse, provider: str, *, reasoning_field: str | None = None
) -> JsonObject | list[JsonObject]:
    """The assistant turn of ``response`` in ``provider``'s request shape.

    A message ``dict`` to append to ``messages``, except for ``"openai-responses"``,
    whose turn is a ``list`` of items to extend ``input`` with. ``reasoning_field``
    (Chat Completions only) names the message field that carries reasoning text back,
    for the compatible servers that ask for it (``"reasoning_content"``).
    A new, independent object each call.
    """
    return api(provider, wanted=_WANTED).assistant(response, reasoning_field)


def tool_results(results: Iterable[ToolOutcome], provider: str) -> list[JsonObject]:
    """``results`` in ``provider``'s request shape: the list to append to ``messages``
    (or ``input``) after the assistant turn. Empty when there are no results."""
    return api(provider, wanted=_WANTED).results(list(results))


_Seq = TypeVar("_Seq", bound=MutableSequence[Any])


def append_turn(
    messages: _Seq,
    response: NormalizedResponse,
    results: Iterable[ToolOutcome],
    provider: str,
    *,
    reasoning_field: str | None = None,
) -> _Seq:
    """Append the assistant turn of ``response`` and the tool ``results`` to a request's
    conversation (``messages``; ``input`` items for the Responses API; ``contents`` for
    Gemini) in ``provider``'s shape, and return it, so one tool loop serves every API."""
    turn = assistant_message(response, provider, reasoning_field=reasoning_field)
    if isinstance(turn, list):
        messages.extend(turn)
    else:
        messages.append(turn)
    messages.extend(tool_results(results, provider))
    return messages
